"""The event-grained shared graph (``engine.shared.graph``, ``shared.coefficients``) with
large, negative and mixed-sign integers and long chains, against each query alone and the
two-step reference, compared exactly (an int must stay an int).

The other shared-graph tests draw small non-negative values, under which a sign error or
an ``abs`` in the coefficients (``A_a[e] = sum of A_a[p] + a_e * M[e]``) or in the int64
bound that guards them goes unseen. Here values reach the int64 minimum and maximum, so
the int64 matrices must move to Python integers at the right time, and chains of K reach
tens of events, so coefficients multiply.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan
from trendlake.optimizer.planners.share_all import every_sharable_set

from tests.unit.engine.test_number_edges import same_rows
from trendlake import engine

WORKLOAD = """
QUERY g1 RETURN COUNT(*), COUNT(K), SUM(K.x), MIN(K.x), MAX(K.x) PATTERN SEQ(A, K+) WHERE K.y <= NEXT(K).y WITHIN 1 minute;
QUERY g2 RETURN COUNT(*), SUM(K.x), AVG(K.x), MAX(K.x) PATTERN SEQ(B, K+) WHERE K.y <= NEXT(K).y WITHIN 1 minute;
QUERY g3 RETURN SUM(K.x), COUNT(K), MIN(K.x), SUM(A.x) PATTERN SEQ(A, K+, C) WHERE K.y <= NEXT(K).y WITHIN 1 minute;
QUERY g4 RETURN SUM(K.x), AVG(K.x) PATTERN SEQ(K+, C) WHERE K.y <= NEXT(K).y WITHIN 1 minute;
"""
PLAN_DICT = build_plan(parse_workload(WORKLOAD), planner="none")
SHARED_DICT = dict(PLAN_DICT, sharing=every_sharable_set(PLAN_DICT["queries"], "static"))
PLAN = engine.load_plan(PLAN_DICT)
SHARED = engine.load_plan(SHARED_DICT)
DYNAMIC = engine.load_plan(dict(PLAN_DICT, sharing=every_sharable_set(PLAN_DICT["queries"], "dynamic")))

# one magnitude per stream: small and medium values keep the coefficients in int64 (the
# fast path), large ones move them to Python integers
MAGNITUDES = [
    st.integers(-9, 9),
    st.integers(-(2**30), 2**30),
    st.sampled_from([-(2**63), 2**63 - 1, -(2**62), 2**62 + 3, -(10**18), 10**18, -(2**40) - 1, -1, 0, 2]),
    st.integers(-(2**63), 2**63 - 1),
]


def test_the_queries_form_one_group() -> None:
    assert [sorted(g["queries"]) for g in SHARED_DICT["sharing"]] == [["g1", "g2", "g3", "g4"]]


@st.composite
def streams(draw: Any, n_max: int) -> list[dict[str, Any]]:
    """Runs of K with mostly increasing y (long chains), between A, B, C events."""
    rows: list[dict[str, Any]] = []
    t = 0
    sign = draw(st.sampled_from((-1, 1, 0)))  # all negative, all positive, mixed
    values = draw(st.sampled_from(MAGNITUDES))
    while len(rows) < n_max:
        run = draw(st.integers(1, 12)) if draw(st.booleans()) else 1
        kind = ["K"] * run if draw(st.integers(0, 2)) else [draw(st.sampled_from("ABC"))]
        y = draw(st.integers(0, 3))
        for ty in kind:
            t += draw(st.sampled_from((0, 1, 1, 1, 2)))
            y += draw(st.sampled_from((0, 1, 1, 2, -1)))
            x = draw(values)
            x = -abs(x) if sign < 0 else abs(x) if sign > 0 else x
            x = max(min(x, 2**63 - 1), -(2**63))
            rows.append({"type": ty, "ts": t, "seq": len(rows), "x": x, "y": y})
    return rows[:n_max]


@settings(max_examples=25, deadline=None)
@given(streams(30))
def test_shared_graph_equals_each_query_alone_on_large_signed_values(rows: list[dict[str, Any]]) -> None:
    table = engine.table_from_rows(rows)
    want = engine.evaluate(PLAN, table)
    assert same_rows(engine.evaluate(SHARED, table), want), rows
    assert same_rows(engine.evaluate(DYNAMIC, table), want), rows


@settings(max_examples=40, deadline=None)
@given(streams(9))
def test_shared_graph_equals_the_reference_on_large_signed_values(rows: list[dict[str, Any]]) -> None:
    table = engine.table_from_rows(rows)
    assert same_rows(engine.evaluate(SHARED, table), engine.evaluate(PLAN, table, strategy="twostep")), rows


def test_a_long_chain_of_negative_extremes() -> None:
    """40 K events in one increasing chain, each -2**63: the counts pass 2**40, the sums pass
    int64 many times over; every snapshot's coefficient is negative."""
    rows = [{"type": "A", "ts": 0, "seq": 0, "x": -1, "y": 0}]
    rows += [{"type": "K", "ts": i, "seq": i, "x": -(2**63) + (i % 3), "y": i} for i in range(1, 41)]
    rows += [{"type": "B", "ts": 41, "seq": 41, "x": 5, "y": 0}, {"type": "C", "ts": 42, "seq": 42, "x": 0, "y": 0}]
    rows += [{"type": "K", "ts": 42 + i, "seq": 42 + i, "x": 2**63 - 1 - i, "y": 40 + i} for i in range(1, 10)]
    table = engine.table_from_rows(rows)
    want = engine.evaluate(PLAN, table)
    got = engine.evaluate(SHARED, table)
    assert same_rows(got, want)
    sums = {r["query"]: r["SUM(K.x)"] for r in want}
    assert all(type(v) is int for v in sums.values()) and sums["g4"] < -(2**100), sums
