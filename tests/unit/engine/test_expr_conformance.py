"""Expression conformance tables (tests/fixtures/expr/*.jsonl) against the oracle and the engine.

One case per line: ``{"id", "expr" (plan IR), "event" (attributes), "next"
(attributes of the next event, optional), "value" (expected value, null =
missing) and/or "holds" (whether it holds as a predicate)}``. The oracle's
evaluator (tests/oracle/expr.py) must agree with every table; the engine's
``compile_value`` / ``compile_local`` / ``compile_adjacent`` with the oracle's
own edge cases (``oracle_edges.jsonl``: missing values, division and modulo by
zero, NEXT of a missing attribute, number vs string, big integers).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from trendlake.engine.expr import compile_adjacent, compile_local, compile_value

from tests.oracle import expr as oracle

TABLES = Path(__file__).resolve().parents[2] / "fixtures" / "expr"


def load(path: Path) -> list[dict[str, Any]]:
    cases = []
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            case = json.loads(line)
            assert "value" in case or "holds" in case, f"{path.name}:{n}: neither value nor holds"
            cases.append(case)
    return cases


def same(got: Any, want: Any) -> bool:
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want
    if isinstance(got, float) or isinstance(want, float):
        if not (isinstance(got, (int, float)) and isinstance(want, (int, float))):
            return False
        if math.isnan(got) or math.isnan(want):  # a NaN made by arithmetic is a value
            return math.isnan(got) and math.isnan(want)
        return math.isclose(got, want) or got == want
    return got == want and type(got) is type(want)


ALL = [(p.name, c) for p in sorted(TABLES.glob("*.jsonl")) for c in load(p)]
EDGES = [c for name, c in ALL if name == "oracle_edges.jsonl"]


def test_the_edge_table_exists_and_covers_its_topics() -> None:
    ids = {c["id"] for c in EDGES}
    for topic in ("missing", "div_by_zero", "mod_by_zero", "next_missing", "number_", "big_int"):
        assert any(topic in i for i in ids), topic


@pytest.mark.parametrize(("table", "case"), ALL, ids=[f"{t}:{c['id']}" for t, c in ALL])
def test_oracle_evaluator(table: str, case: dict[str, Any]) -> None:
    nxt = case.get("next")
    if "value" in case:
        got = oracle.value(case["expr"], case["event"], nxt)
        assert same(got, case["value"]), (got, case["value"])
    if "holds" in case:
        assert oracle.holds(case["expr"], case["event"], nxt) is case["holds"]


@pytest.mark.parametrize("case", EDGES, ids=[c["id"] for c in EDGES])
def test_engine_evaluator(case: dict[str, Any]) -> None:
    nxt = case.get("next")
    if "value" in case:
        got = compile_value(case["expr"])(case["event"], nxt)
        assert same(got, case["value"]), (got, case["value"])
    if "holds" in case:
        if nxt is None:
            assert compile_local([case["expr"]], [])(case["event"]) is case["holds"]
        else:
            assert compile_adjacent([case["expr"]])(case["event"], nxt) is case["holds"]
