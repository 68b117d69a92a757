"""The typing rules on Arrow (``trendlake.schemas.typing.arrow``): the documented cases by hand,
properties by hypothesis, and every tricky value typed without an exception."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from trendlake.schemas.typing import arrow, rules
from trendlake.schemas.typing.arrow import cast_value, parse_time_value
from trendlake.schemas.typing.rules import TypingError

from tests.typing_cases import ATTRIBUTE_VALUES, TIME_VALUES

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(("text", "kind", "want"), [
    ("7", "long", 7), (" -7 ", "long", -7), ("3.0", "long", 3), ("1e3", "long", 1000),
    ("9223372036854775807", "long", 2**63 - 1), ("3.5", "long", None), ("0x10", "long", None),
    ("1_000", "long", None), ("9223372036854775808", "long", None), ("nan", "long", None),
    ("3.5", "double", 3.5), (".5", "double", 0.5), ("nan", "double", None), ("inf", "double", None),
    ("1e400", "double", None), ("1d", "double", None),
    ("Yes", "boolean", True), ("f", "boolean", False), ("on", "boolean", None),
    (" x ", "string", " x "),
])
def test_attribute_rules(text: str, kind: str, want) -> None:
    if want is None:
        with pytest.raises(TypingError, match=f"is not a {kind}"):
            cast_value(text, kind)
    else:
        assert cast_value(text, kind) == want


def test_empty_text_is_missing_for_every_kind() -> None:
    for kind in rules.KINDS:
        assert cast_value("", kind) is None
    assert parse_time_value("") is None and parse_time_value("  ") is None


@pytest.mark.parametrize(("text", "unit", "want_us"), [
    ("1767607380", "seconds", 1767607380_000_000),
    ("1767607380000", "milliseconds", 1767607380_000_000),
    ("1767607380000000", "microseconds", 1767607380_000_000),
    ("1767607380.5", "seconds", 1767607380_500_000),
    ("-0.5", "seconds", -500_000),
    ("0.0000005", "seconds", 1),  # half a microsecond rounds away from zero
    ("2026-01-05T10:03:00Z", "seconds", 1767607380_000_000),
    ("2026-01-05T11:03:00+01:00", "milliseconds", 1767607380_000_000),
    ("2026-01-05 10:03", "seconds", 1767607380_000_000),
    ("2026-01-05T10:03:00.1234567Z", "seconds", 1767607380_123_456),
])
def test_time_rules(text: str, unit: str, want_us: int) -> None:
    assert parse_time_value(text, unit) == want_us


def test_epoch_milliseconds_as_seconds_says_what_it_looks_like() -> None:
    with pytest.raises(TypingError) as err:
        parse_time_value("1767607380000")
    assert str(err.value) == (
        'ts 1767607380000 is year 57983 as seconds: looks like epoch milliseconds; '
        'declare "time_unit": "milliseconds"'
    )


@pytest.mark.parametrize("text", ["2026-02-30", "2026-13-01", "2026-01-05T24:00", "2026-1-5", "yesterday", "nan"])
def test_unparseable_times(text: str) -> None:
    with pytest.raises(TypingError, match="unparseable timestamp"):
        parse_time_value(text)


def test_unknown_time_unit_is_refused() -> None:
    with pytest.raises(TypingError, match="unknown time_unit"):
        parse_time_value("1", "minutes")


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_integer_text_is_its_long(n: int) -> None:
    assert cast_value(str(n), "long") == n
    if abs(float(n)) < rules.LONG_LIMIT:  # decimal text goes through a double, as in Spark
        assert cast_value(f"{n}.0", "long") == int(float(n))


@given(st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2299, 12, 30, 23, 59, 59)),
       st.integers(min_value=-18 * 60, max_value=18 * 60))
def test_iso_text_is_its_instant(moment: datetime, offset_minutes: int) -> None:
    zone = timedelta(minutes=offset_minutes)
    sign = "-" if offset_minutes < 0 else "+"
    hh, mm = divmod(abs(offset_minutes), 60)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + f"{sign}{hh:02d}:{mm:02d}"
    want = (moment - zone).replace(tzinfo=UTC) - EPOCH
    us = want // timedelta(microseconds=1)
    if rules.MIN_US <= us < rules.MAX_US:
        assert parse_time_value(text) == us
    else:
        with pytest.raises(TypingError, match="outside 1900..2299"):
            parse_time_value(text)


@given(st.integers(min_value=-2_208_988_800, max_value=10_413_791_999), st.sampled_from(sorted(rules.TIME_UNITS)))
def test_epoch_numbers_in_every_unit(seconds: int, unit: str) -> None:
    factor = rules.TIME_UNITS[unit]
    raw = seconds * 1_000_000 // factor
    assert parse_time_value(str(raw), unit) == raw * factor
    assert parse_time_value(pa.array([raw], pa.int64())[0].as_py(), unit) == raw * factor


def test_every_tricky_value_is_typed_or_refused_with_a_reason() -> None:
    for kind in rules.KINDS:
        typed = arrow.cast_column(pa.array(ATTRIBUTE_VALUES), kind, "a")
        for i in range(len(ATTRIBUTE_VALUES)):
            if typed.bad[i]:
                assert typed.reason_of(i).startswith(f"attribute 'a' is not a {kind}: ")
    for unit in rules.TIME_UNITS:
        typed = arrow.parse_time(pa.array(TIME_VALUES), unit, "ts")
        for i in range(len(TIME_VALUES)):
            if typed.bad[i]:
                assert typed.reason_of(i)
            else:
                v = typed.values[i].as_py()
                assert v is None or rules.MIN_US <= v < rules.MAX_US


def test_arrow_timestamps_of_every_unit_and_float_seconds() -> None:
    for unit, per_s in (("s", 1), ("ms", 10**3), ("us", 10**6), ("ns", 10**9)):
        arr = pa.array([1767607380 * per_s, None], pa.timestamp(unit))
        assert arrow.parse_time(arr).values.to_pylist() == [1767607380_000_000, None]
    assert arrow.parse_time(pa.array([1767607380.25])).values.to_pylist() == [1767607380_250_000]
    far = arrow.parse_time(pa.array([253402300800], pa.timestamp("s")))
    assert far.bad.tolist() == [True] and "outside 1900..2299" in far.reason_of(0)
