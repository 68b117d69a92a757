"""The Spark half's expressions, built without Spark: reasons are ``rules``' words with the
raw text spliced in (``spark.message``), and a name the splicing cannot hold is refused as
a typing error (ingest: a bad stream schema) instead of writing a wrong reason."""

from __future__ import annotations

import pytest
from trendlake.schemas.typing import rules
from trendlake.schemas.typing.spark import Lets, message, parse_time
from trendlake.schemas.typing.sqlexpr import col, lit


def test_a_reason_is_the_rules_words_around_the_spliced_text() -> None:
    template = rules.not_a_kind_reason("n", "long", rules.HOLE)
    head, tail = template.split(rules.HOLE)
    assert message(template, col("v")).text == f"concat({lit(head).text}, `v`, {lit(tail).text})"
    assert message(rules.HOLE + "!", col("v")).text == f"concat(`v`, {lit('!').text})"  # no empty piece


def test_a_name_holding_the_hole_is_refused() -> None:
    with pytest.raises(rules.TypingError, match="NUL"):
        parse_time(col("t"), "t\0x", "seconds", Lets(["t"]))
    with pytest.raises(rules.TypingError, match="NUL"):
        message(rules.unparseable_time_reason(rules.HOLE), col("a"), col("b"))


def test_an_unknown_time_unit_is_a_typing_error() -> None:
    with pytest.raises(rules.TypingError, match="unknown time_unit 'hours'"):
        parse_time(col("t"), "t", "hours", Lets(["t"]))
