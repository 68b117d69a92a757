"""One rule for numbers (docs/engine.md, "Numbers at the edges"), checked at the edges of
every type: every aggregate x every strategy (the two-step reference, GRETA, COGRA with and
without its compiled kernel) x plans with and without sharing groups (type-grained and
event-grained ``kleene`` groups, static and dynamic, and a ``sequence`` group) give the
reference's rows.

Values compare by type and value (an int is not a float, NaN equals NaN, OVERFLOW and
None only themselves), and no reported float is -0.0.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.strategies.cogra import kernel
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan
from trendlake.optimizer.planners.share_all import every_sharable_set

from trendlake import engine

INT_EDGES = [-(2**63), -(2**63) + 1, 2**63 - 1, -1, 0, 1, 2, 7, -5, 10**18, -(10**18)]
FLOAT_EDGES = [math.inf, -math.inf, math.nan, 0.0, -0.0, 1.7e308, -1.7e308, 5e-324, -5e-324,
               2.0**63, -(2.0**63), 2.0**64, -(2.0**64), 1e19, 0.1, 0.5, -2.5, 3.0, 1.5, 2.2250738585072014e-308]

# one query per shape: Kleene with AVG (exact mode) and without (saturating), a counts-only
# query (the compiled kernel), values of a non-Kleene variable, event-grained queries
# (adjacent predicates on K: the shared graph); pairs of each so that sharing groups form
TYPE_GRAINED = """
QUERY a1 RETURN COUNT(*), COUNT(K), SUM(K.x), AVG(K.x), MIN(K.x), MAX(K.x) PATTERN SEQ(A, K+) WITHIN 1 minute;
QUERY a2 RETURN COUNT(*), SUM(K.x), AVG(K.x), MIN(K.x) PATTERN SEQ(B, K+) WITHIN 1 minute;
QUERY s1 RETURN COUNT(*), COUNT(K), SUM(K.x), MIN(K.x), MAX(K.x) PATTERN SEQ(A, K+) WITHIN 1 minute;
QUERY s2 RETURN SUM(K.x), MAX(K.x), COUNT(*) PATTERN SEQ(B, K+, A) WITHIN 1 minute;
QUERY c1 RETURN COUNT(*), COUNT(K) PATTERN SEQ(A, K+) WITHIN 1 minute;
QUERY c2 RETURN COUNT(*), COUNT(K) PATTERN SEQ(B, K+) WITHIN 1 minute;
QUERY o1 RETURN COUNT(A), SUM(A.x), AVG(A.x), MIN(A.x), MAX(A.x) PATTERN SEQ(A, B) WITHIN 1 minute;
"""
EVENT_GRAINED = """
QUERY e1 RETURN COUNT(*), COUNT(K), SUM(K.x), AVG(K.x), MIN(K.x), MAX(K.x) PATTERN SEQ(A, K+)
  WHERE K.x <= NEXT(K).x WITHIN 1 minute;
QUERY e2 RETURN COUNT(*), SUM(K.x), MAX(K.x) PATTERN SEQ(B, K+) WHERE K.x <= NEXT(K).x WITHIN 1 minute;
QUERY e3 RETURN SUM(K.x), COUNT(K), MIN(K.x) PATTERN SEQ(A, K+) WHERE K.x != NEXT(K).x WITHIN 1 minute;
"""
WORKLOAD = TYPE_GRAINED + EVENT_GRAINED


def _plans() -> dict[str, dict[str, Any]]:
    alone = build_plan(parse_workload(WORKLOAD), planner="none")
    static = dict(alone, sharing=every_sharable_set(alone["queries"], "static"))
    dynamic = dict(alone, sharing=every_sharable_set(alone["queries"], "dynamic"))
    return {"alone": alone, "static": static, "dynamic": dynamic, "sequence": dict(alone, sharing=[_sequence(alone)])}


def _sequence(plan: dict[str, Any]) -> dict[str, Any]:
    """One ``sequence`` group of the type-grained queries: each transition shared by every
    query that has it, snapshots at its source."""
    from trendlake.engine.shared.sequence.body import shape_of_entry

    from tests.unit.engine.handplans import sequence_group

    names = [q["name"] for q in plan["queries"] if q["granularity"] == "type"]
    per: dict[tuple[str, str], list[str]] = {}
    for q in plan["queries"]:
        if q["name"] in names:
            for tr in sorted(shape_of_entry(q).transitions):
                per.setdefault(tr, []).append(q["name"])
    return sequence_group(plan, {tr: [(qs, tr[0])] for tr, qs in per.items()}, queries=names, gid="seq")


PLAN_DICTS = _plans()
PLANS = {name: engine.load_plan(plan) for name, plan in PLAN_DICTS.items()}  # checked once
# (plan, strategy, COGRA's compiled kernel on): every strategy alone, and the shared executors
# (the groups' queries) beside COGRA's kernels (the others) with and without the compiled one
RUNS = [("alone", "greta", True), ("alone", "cogra", True), ("alone", "cogra", False),
        ("static", "auto", True), ("static", "auto", False), ("dynamic", "auto", True), ("sequence", "auto", True)]


def same(a: Any, b: Any) -> bool:
    """Result values equal by type and value; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    return a == b


def same_rows(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> bool:
    key = lambda r: (r["query"], r.get("window_start", ""))  # noqa: E731
    got, want = sorted(got, key=key), sorted(want, key=key)
    return len(got) == len(want) and all(
        a.keys() == b.keys() and all(same(a[k], b[k]) for k in a) for a, b in zip(got, want, strict=True)
    )


def evaluate(plan: dict[str, Any], rows: list[dict[str, Any]], strategy: str, compiled: bool = True) -> Any:
    before = kernel.COMPILED
    kernel.COMPILED = compiled
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a numpy RuntimeWarning is a failure
            return engine.evaluate(plan, engine.table_from_rows(rows), strategy=strategy)
    finally:
        kernel.COMPILED = before


def check_all(rows: list[dict[str, Any]]) -> None:
    want = evaluate(PLANS["alone"], rows, "twostep")
    for row in want:
        for v in row.values():
            assert not (isinstance(v, float) and v == 0 and math.copysign(1, v) < 0), row
    for name, strategy, compiled in RUNS:
        got = evaluate(PLANS[name], rows, strategy, compiled)
        assert same_rows(got, want), (name, strategy, compiled, rows, got, want)


def test_the_plans_hold_type_and_event_grained_groups() -> None:
    groups = {tuple(g["queries"]) for g in PLAN_DICTS["static"]["sharing"]}
    assert any(q[0].startswith("a") or q[0].startswith("s") for q in groups)
    assert any(q[0].startswith("e") for q in groups)
    assert {g["body"]["decision"] for g in PLAN_DICTS["dynamic"]["sharing"]} == {"dynamic"}


@st.composite
def streams(draw: Any) -> list[dict[str, Any]]:
    """Up to 7 events of A, B, K at times 1..5 (ties included), x from one column kind's edges."""
    values = st.sampled_from(INT_EDGES) if draw(st.booleans()) else st.sampled_from(FLOAT_EDGES)
    n = draw(st.integers(2, 7))
    rows = []
    t = 0
    for i in range(n):
        t += draw(st.sampled_from((0, 1, 1, 2)))
        rows.append({"type": draw(st.sampled_from("AAKKKB")), "ts": t, "seq": i, "x": draw(values)})
    return rows


@settings(max_examples=50, deadline=None)
@given(streams())
def test_edges_every_aggregate_strategy_and_plan_equal_the_reference(rows: list[dict[str, Any]]) -> None:
    check_all(rows)


def _rows(spec: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": t, "ts": i + 1, "seq": i, "x": x} for i, (t, x) in enumerate(spec)]


@pytest.mark.parametrize("spec", [
    # the case: COGRA summed int64 -2**63 with numpy (the guard took abs of it)
    [("A", 0), ("K", -(2**63)), ("K", -(2**63)), ("K", 5)],
    [("A", 0), ("K", 2**63 - 1), ("K", 2**63 - 1), ("K", 2**63 - 1), ("B", 1)],
    # infinities and the float maximum (type-grained groups raised OverflowError)
    [("A", 1.0), ("K", math.inf), ("B", 2.0), ("K", 1.7e308), ("K", -math.inf), ("A", -0.0)],
    [("A", 1.7e308), ("K", 1.7e308), ("K", 1.7e308), ("B", 1.7e308), ("K", -1.7e308)],
    # +0.0 and -0.0: equal, reported as 0.0 whichever comes first
    [("A", -0.0), ("K", 0.0), ("K", -0.0), ("B", -0.0), ("K", -0.0)],
    [("A", 0.0), ("K", -0.0), ("K", 0.0), ("B", 0.0)],
    # NaN is missing (the NULL rule), subnormals sum exactly
    [("A", math.nan), ("K", 5e-324), ("K", math.nan), ("K", 5e-324), ("B", 5e-324)],
])
def test_edge_cases_equal_the_reference(spec: list[tuple[str, Any]]) -> None:
    check_all(_rows(spec))


def test_sum_of_the_int64_minimum_is_exact_under_every_strategy() -> None:
    rows = _rows([("A", 0), ("K", -(2**63)), ("K", -(2**63)), ("K", 5)])
    plan = build_plan(parse_workload("QUERY q RETURN COUNT(*), SUM(K.x) PATTERN SEQ(A, K+) WITHIN 1 hours;"),
                      planner="none")
    for strategy in ("twostep", "greta", "cogra"):
        (row,) = evaluate(plan, rows, strategy)
        assert row["COUNT(*)"] == 7 and row["SUM(K.x)"] == -73786976294838206444, strategy


def test_avg_of_huge_finite_floats_is_reported() -> None:
    rows = _rows([("A", 0.0), ("K", 1.7e308), ("K", 1.7e308), ("K", 1.7e308)])
    plan = build_plan(parse_workload(
        "QUERY q RETURN SUM(K.x), AVG(K.x), MAX(K.x) PATTERN SEQ(A, K+) WITHIN 1 hours;"), planner="none")
    for strategy in ("twostep", "greta", "cogra"):
        (row,) = evaluate(plan, rows, strategy)
        # the exact sum (12 values of 1.7e308) does not fit a double: OVERFLOW, not inf
        assert row["AVG(K.x)"] == 1.7e308 and row["SUM(K.x)"] is engine.OVERFLOW, strategy
        assert row["MAX(K.x)"] == 1.7e308


def test_float_sums_are_exact_whatever_the_order() -> None:
    """1e16 + 1 - 1e16 in float64 is 0 or 1 by the order of additions; the rule: the exact
    sum (1.0), rounded once."""
    rows = _rows([("A", 0.0), ("K", 1e16), ("K", 1.0), ("K", -1e16)])
    plan = build_plan(parse_workload("QUERY q RETURN SUM(K.x), AVG(K.x) PATTERN SEQ(A, K+) WITHIN 1 hours;"),
                      planner="none")
    for strategy in ("twostep", "greta", "cogra"):
        (row,) = evaluate(plan, rows, strategy)
        # trends: 7; each K value in 4 of them: 4 * (1e16 + 1 - 1e16) = 4
        assert same(row["SUM(K.x)"], 4.0) and same(row["AVG(K.x)"], 4.0 / 12), (strategy, row)


def test_infinities_follow_ieee() -> None:
    plan = build_plan(parse_workload(
        "QUERY q RETURN SUM(K.x), AVG(K.x), MIN(K.x), MAX(K.x) PATTERN SEQ(A, K+) WITHIN 1 hours;"), planner="none")
    for spec, want in (
        ([("A", 0.0), ("K", math.inf), ("K", 1.0)], (math.inf, math.inf, 1.0, math.inf)),
        ([("A", 0.0), ("K", -math.inf), ("K", 1.0)], (-math.inf, -math.inf, -math.inf, 1.0)),
        ([("A", 0.0), ("K", math.inf), ("K", -math.inf)], (math.nan, math.nan, -math.inf, math.inf)),
    ):
        for strategy in ("twostep", "greta", "cogra"):
            (row,) = evaluate(plan, _rows(spec), strategy)
            got = (row["SUM(K.x)"], row["AVG(K.x)"], row["MIN(K.x)"], row["MAX(K.x)"])
            assert all(same(a, b) for a, b in zip(got, want, strict=True)), (strategy, spec, got)


@pytest.mark.parametrize("values", [
    [0.1 * i + 1 / 3 for i in range(40)],  # sums that float64 rounds differently by order
    [1.7e308, -1.7e308, 1e308, math.inf, 2.5, -math.inf, 1.7e308] * 3,  # OverflowError in groups
    [1.7e308] * 12,  # the exact sums leave the double range: OVERFLOW, the means are reported
])
def test_type_grained_groups_equal_each_query_alone_exactly(values: list[float]) -> None:
    """A type-grained sharing group (static and dynamic) gives its queries' rows alone bit for
    bit: float sums included (they differed in the last digits), infinities and values near
    the float maximum included (they raised OverflowError)."""
    spec: list[tuple[str, Any]] = [("A", 1.0), ("B", 2.0)]
    for i, x in enumerate(values):
        spec.append(("K", x))
        if i % 7 == 3:
            spec.append(("A" if i % 2 else "B", float(i)))
    rows = _rows(spec)
    text = TYPE_GRAINED.split("QUERY c1")[0]  # a1, a2, s1, s2: one type-grained group
    alone = build_plan(parse_workload(text), planner="none")
    assert len(every_sharable_set(alone["queries"], "static")) == 1
    want = evaluate(alone, rows, "greta")
    assert same_rows(evaluate(alone, rows, "cogra"), want)
    for decision in ("static", "dynamic"):
        shared = dict(alone, sharing=every_sharable_set(alone["queries"], decision))
        assert same_rows(evaluate(shared, rows, "auto"), want), decision
