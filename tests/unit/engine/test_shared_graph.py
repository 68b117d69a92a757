"""Event-grained shared Kleene execution (``engine.shared.graph``) against each query alone
and the two-step reference.

Queries with adjacent predicates share the GRETA graph of their common ``K+``
when they match and connect the same events of ``K``. A worked example by hand:
events a(1) k(x=3) k(x=1) k(x=2) b(5) c(6), ``K.x < NEXT(K).x``. The rising
sequences of K are 3, 1, 2, (1, 2): 4 trends of K. ``SEQ(A, K+)`` counts them
all, 4. ``SEQ(B, K+)`` has none (no K after b). ``SEQ(K+, C)`` counts 4 as well
and ``SEQ(A, K+, C)`` 4, with SUM(K.x) = 3 + 1 + 2 + 3 = 9.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from trendlake.engine.shared.kleene import SharedStats
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan
from trendlake.optimizer.planners.share_all import every_sharable_set

from tests.randomized import once
from tests.unit.engine.engine_adapter import run_engine, same_rows
from tests.unit.engine.handplans import kleene_group
from trendlake import engine

# statistics under which sharing the graph of K pays: K dense, the other types rare
DENSE_K = {"pane_us": 1_000_000, "types": {"K": {"rate_mean": 100.0}, **{t: {"rate_mean": 1.0} for t in "ABCDE"}},
           "bursts": {"*": {"types": {"K": {"mean": 10.0}}}}}


def _plan(text: str, planner: str = "none", statistics: Any = None) -> dict[str, Any]:
    return build_plan(parse_workload(text), planner=planner, statistics=statistics)


def _forced(plan: dict[str, Any]) -> dict[str, Any]:
    return dict(plan, sharing=every_sharable_set(plan["queries"], "static"))


def test_worked_example_by_hand() -> None:
    text = """QUERY q1 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(A, K+) WHERE K.x < NEXT(K).x WITHIN 1 minute;
              QUERY q2 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(B, K+) WHERE K.x < NEXT(K).x WITHIN 1 minute;
              QUERY q3 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(K+, C) WHERE K.x < NEXT(K).x WITHIN 1 minute;
              QUERY q4 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(A, K+, C) WHERE K.x < NEXT(K).x WITHIN 1 minute;"""
    rows = [{"type": t, "ts": i + 1, "seq": i, "x": x}
            for i, (t, x) in enumerate([("A", 0), ("K", 3), ("K", 1), ("K", 2), ("B", 0), ("C", 0)])]
    plan = _forced(_plan(text))
    assert [g["queries"] for g in plan["sharing"]] == [["q1", "q2", "q3", "q4"]]
    report: dict[str, SharedStats] = {}
    got = engine.evaluate(plan, engine.table_from_rows(rows), shared_stats=report)
    assert {r["query"]: r["COUNT(*)"] for r in got} == {"q1": 4, "q3": 4, "q4": 4}
    assert {r["query"]: r["SUM(K.x)"] for r in got} == {"q1": 9, "q3": 9, "q4": 9}
    # one graphlet (the K events at 2-4, one per time stamp, nothing else in between), a
    # snapshot of it for the three queries with trends there (q2's b comes after)
    assert (report["g0"].graphlets, report["g0"].snapshots, report["g0"].shared_events) == (1, 3, 3)


def test_groups_must_match_and_connect_the_same_events() -> None:
    text = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, K+) WHERE K.x < NEXT(K).x WITHIN 1 minute;
              QUERY q2 RETURN COUNT(*) PATTERN SEQ(B, K+) WHERE K.x > NEXT(K).x WITHIN 1 minute;
              QUERY q3 RETURN COUNT(*) PATTERN SEQ(B, K+) WHERE K.x < NEXT(K).x AND K.x > 1 WITHIN 1 minute;
              QUERY q4 RETURN COUNT(*) PATTERN SEQ(A, K+, C) WHERE K.x < NEXT(C).x WITHIN 1 minute;"""
    plan = _plan(text)
    assert every_sharable_set(plan["queries"]) == []  # other K -> K, other K matches, K -> C predicate
    rows = [{"type": "A", "ts": 1, "seq": 0, "x": 1}, {"type": "K", "ts": 2, "seq": 1, "x": 2}]
    for other, reason in [("q2", "connect the same events"), ("q3", "connect the same events"),
                          ("q4", "into or out of the shared")]:
        bad = dict(plan, sharing=[kleene_group(plan, {"q1": "K", other: "K"})])
        with pytest.raises(engine.PlanError, match=reason):
            engine.evaluate(bad, engine.table_from_rows(rows))


OTHER = "ABCDE"
K_ADJ = ("K.x < NEXT(K).x", "K.x >= NEXT(K).x", "NEXT(K).x != K.x + 1", "")
AGGS = ("COUNT(*)", "COUNT(K)", "SUM(K.x)", "AVG(K.x)", "MIN(K.x)", "MAX(K.x)", "COUNT({o})", "SUM({o}.x)",
        "MAX({o}.x)", "MIN({o}.x)")


WINDOWS = ["WITHIN 10 seconds", "WITHIN 10 seconds SLIDE 5 seconds", "WITHIN 9 seconds SLIDE 4 seconds",
           "WITHIN 1 minute"]


@st.composite
def workloads(draw: Any, windows: list[str] = WINDOWS) -> str:
    """2-12 queries with K+ between different prefixes and suffixes, one adjacent predicate on
    K -> K for all, adjacent predicates among each query's other variables, different local
    predicates on the other types and aggregates; now and then a query that cannot share."""
    n = draw(once.integers(2, 12))
    k_adj = draw(once.sampled_from(K_ADJ))
    k_local = draw(once.sampled_from(("", "K.x != 4")))
    window = draw(st.sampled_from(windows))
    group = draw(once.booleans())
    queries = []
    for i in range(n):
        types = draw(once.lists(once.sampled_from(OTHER), min_size=1, max_size=3, unique=True))
        cut = draw(once.integers(0, len(types)))
        items = [t + ("+" if draw(once.integers(0, 3)) == 0 else "") for t in types]
        items = items[:cut] + ["K+"] + items[cut:]
        aggs = draw(once.lists(once.sampled_from(AGGS), min_size=1, max_size=4, unique=True))
        ret = ", ".join(dict.fromkeys(a.format(o=draw(st.sampled_from(types))) for a in aggs))
        preds = [p for p in (k_adj, k_local) if p]
        # an adjacent predicate between two consecutive other variables, or on a Kleene one
        plain = [t for t in items if t != "K+"]
        for a, b in zip(plain, plain[1:], strict=False):
            if items.index(b) == items.index(a) + 1 and draw(once.integers(0, 2)) == 0:
                preds.append(f"{a.rstrip('+')}.x {draw(once.sampled_from(('<', '>=')))} NEXT({b.rstrip('+')}).x")
        for t in plain:
            if t.endswith("+") and draw(once.booleans()):
                preds.append(f"{t[0]}.x <= NEXT({t[0]}).x")
        if draw(once.booleans()):
            preds.append(f"{draw(st.sampled_from(types))}.x {draw(once.sampled_from(('<', '>=', '!=')))} "
                         f"{draw(once.integers(1, 5))}")
        if draw(once.integers(0, 3)) == 0:  # a NOT N somewhere: away from K it shares, next to K it cannot
            at = draw(once.integers(0, len(items)))
            items = items[:at] + ["NOT N"] + items[at:]
        odd = draw(once.integers(0, 11))
        if odd == 0 and cut > 0:  # into K: this query cannot share
            preds.append(f"{plain[cut - 1].rstrip('+')}.x < NEXT(K).x")
        where = f" WHERE {' AND '.join(preds)}" if preds else ""
        semantics = " SEMANTICS skip-till-next-match" if odd == 1 else ""
        q_window = "WITHIN 7 seconds" if odd == 2 else window
        by = " GROUP-BY g" if group else ""
        queries.append(f"QUERY q{i} RETURN {'g, ' if group else ''}{ret} PATTERN SEQ({', '.join(items)})"
                       f"{semantics}{where}{by} {q_window};")
    return "\n".join(queries)


@st.composite
def streams(draw: Any, size: tuple[int, int]) -> list[dict[str, Any]]:
    """Bursts of K between other events, ties on time stamps, two groups, a missing x now and
    then; x integers or (in some streams) quarters as floats."""
    rows: list[dict[str, Any]] = []
    t = draw(once.integers(0, 3))
    n = draw(once.integers(*size))
    floats = draw(once.booleans())
    while len(rows) < n:
        kind = ["K"] * draw(once.integers(1, 5)) if draw(once.integers(0, 2)) else [draw(once.sampled_from(OTHER + "N"))]
        for ty in kind:
            t += draw(once.sampled_from((0, 1, 1, 1, 2, 4)))
            x = draw(once.one_of(once.integers(0, 6), once.just(None))) if draw(once.integers(0, 9)) == 0 else draw(
                once.integers(0, 6))
            if floats and x is not None:
                x = x / 4 + 0.5
            rows.append({"type": ty, "ts": t, "seq": len(rows), "x": x, "g": draw(once.sampled_from((1, 1, 2)))})
    return rows


@settings(max_examples=150, deadline=None)
@given(workloads(), streams((20, 60)))
def test_every_sharable_set_shared_equals_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    plan = _plan(text)
    shared = _forced(plan)
    table = engine.table_from_rows(rows)
    report: dict[str, SharedStats] = {}
    got = engine.evaluate(shared, table, shared_stats=report)
    want = engine.evaluate(plan, table)
    assert same_rows(got, want), (text, rows)
    assert sorted(report) == sorted(g["id"] for g in shared["sharing"])
    grouped = sum(len(g["queries"]) for g in shared["sharing"])
    event(f"queries in sharing groups: {min(grouped, 4)}{'+' if grouped >= 4 else ''}")
    event(f"result rows: {'0' if not want else '1-3' if len(want) < 4 else '4+'}")


@settings(max_examples=30, deadline=None)
@given(workloads(["WITHIN 1 minute", "WITHIN 40 seconds SLIDE 15 seconds"]), streams((250, 400)))
def test_long_streams_shared_equals_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    """Streams long enough for the shared graph's matrices to grow, expire rows and snapshots
    and move the live ones to the front (``shared.coefficients``)."""
    plan = _plan(text)
    table = engine.table_from_rows(rows)
    assert same_rows(engine.evaluate(_forced(plan), table), engine.evaluate(plan, table)), (text, rows)


@settings(max_examples=60, deadline=None)
@given(workloads(), streams((6, 12)))
def test_shared_graph_equals_the_two_step_reference(text: str, rows: list[dict[str, Any]]) -> None:
    plan = _plan(text)
    got = run_engine(_forced(plan), rows, "auto")
    want = run_engine(plan, rows, "twostep")
    assert same_rows(got, want), (text, rows)


@settings(max_examples=60, deadline=None)
@given(workloads(), streams((20, 50)))
def test_planned_sharing_equals_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    """hamlet's and hamlet-static's plans of the same case (the queries alone evaluated once)."""
    table = engine.table_from_rows(rows)
    want = engine.evaluate(_plan(text), table)
    for planner in ("hamlet", "hamlet-static"):
        shared = _plan(text, planner=planner, statistics=DENSE_K)
        assert same_rows(engine.evaluate(shared, table), want), (planner, text, rows)
        event(f"{planner} shares: {bool(shared['sharing'])}")


def test_generated_workloads_share() -> None:
    """The generated workloads exercise the shared graph: forced groups nearly always, the
    planner on dense statistics often."""
    forced = planned = total = 0

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(workloads())
    def count(text: str) -> None:
        nonlocal forced, planned, total
        total += 1
        forced += bool(_forced(_plan(text))["sharing"])
        planned += bool(_plan(text, planner="hamlet", statistics=DENSE_K)["sharing"])

    count()
    print(f"\nforced groups in {forced}, planner hamlet in {planned} of {total} generated workloads")
    assert forced >= 0.6 * total and planned >= 0.3 * total, (forced, planned, total)


@pytest.mark.parametrize("n", [60, 130, 300])
def test_overflowing_counts_equal_each_query_alone(n: int) -> None:
    """Rising runs long enough that trend counts pass 10**38 - 1 (OVERFLOW)."""
    text = """QUERY q1 RETURN COUNT(*), COUNT(K), SUM(K.x), MAX(K.x) PATTERN SEQ(A, K+) WHERE K.x < NEXT(K).x WITHIN 1 hour;
              QUERY q2 RETURN COUNT(*), SUM(K.x), MIN(K.x), AVG(K.x) PATTERN SEQ(B, K+, C) WHERE K.x < NEXT(K).x WITHIN 1 hour;
              QUERY q3 RETURN COUNT(*), MAX(K.x) PATTERN SEQ(K+, C) WHERE K.x < NEXT(K).x WITHIN 1 hour;"""
    rows = [{"type": "A", "ts": 0, "seq": 0, "x": 1}, {"type": "B", "ts": 1, "seq": 1, "x": 1}]
    rows += [{"type": "K", "ts": 2 + i, "seq": 2 + i, "x": i - 5} for i in range(n)]
    rows += [{"type": "C", "ts": 3 + n, "seq": 3 + n, "x": 1}]
    plan = _plan(text)
    got = run_engine(_forced(plan), rows, "auto")
    want = run_engine(plan, rows, "auto")
    assert got == want
    assert ({r["query"]: r["COUNT(*)"] for r in got}["q1"] == "OVERFLOW") == (2**n - 1 > 10**38 - 1)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.just("add"), st.integers(0, 3)), st.tuples(st.just("prune"), st.integers(0, 3)),
                          st.just(("snapshot", 0)), st.just(("read", 0))), min_size=1, max_size=150))
def test_coefficient_rows_follow_their_vertices(ops: list[tuple[str, int]]) -> None:
    """The matrices grow, drop expired rows and move the live ones to the front; the live rows
    and the columns the adjacent predicate reads stay those of the live vertices, in order."""
    from trendlake.engine.shared.kleene.coefficients import Coefficients

    coef = Coefficients(True, {"x": np.int64}, {"x": np.int64}, {}, exact=False, val_dtypes={"x": np.int64})
    sid = coef.add_column()
    window = 0
    live: list[tuple[int, int]] = []  # (x, last window) of the live vertices, expected
    for i, (op, arg) in enumerate(ops):
        if op == "add":
            attrs = {"x": i}
            row = coef.vertex(sid, None if not coef.live_attrs() else np.ones(len(coef.live_attrs()), dtype=bool), attrs)
            coef.commit(row, attrs, window + arg, True)
            live.append((i, window + arg))
        elif op == "prune":
            window += arg
            coef.prune(window)
            while live and live[0][1] < window:
                live.pop(0)
        elif op == "snapshot":
            sid = coef.add_column()
        else:  # read the columns now and then, as the executor does (only for bursts with predecessors)
            assert coef.live_columns()["x"].tolist() == [x for x, _ in live]
        assert [a["x"] for a in coef.live_attrs()] == [x for x, _ in live]


def test_coefficient_columns_after_rows_moved_to_the_front() -> None:
    """The live rows 9-15 of a full matrix are read, moved to the front when it fills, and later
    rows 9-15 (other vertices) are live again: the columns read are theirs."""
    from trendlake.engine.shared.kleene.coefficients import Coefficients

    coef = Coefficients(False, {}, {}, {}, exact=False, val_dtypes={"x": np.int64})
    sid = coef.add_column()

    def add(x: int, last_window: int) -> None:
        attrs = {"x": x}
        coef.commit(coef.vertex(sid, None, attrs), attrs, last_window, True)

    for x in range(16):
        add(x, 0 if x < 9 else 5)
    coef.prune(1)
    assert coef.live_columns()["x"].tolist() == list(range(9, 16))
    for x in range(16, 25):  # the first one moves rows 9-15 to the front
        add(x, 5 if x < 18 else 9)
    coef.prune(6)
    assert [a["x"] for a in coef.live_attrs()] == list(range(18, 25))
    assert coef.live_columns()["x"].tolist() == list(range(18, 25))


def test_a_missing_float_is_missing_to_the_adjacent_predicate() -> None:
    """A float column's missing value (NaN in the column) must read as missing, so that
    ``NEXT(K).x != K.x + 1`` does not hold for it: two trends, k1 a and k2 a."""
    text = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(K+, A+) WHERE NEXT(K).x != K.x + 1 WITHIN 1 minute;
              QUERY q2 RETURN COUNT(*) PATTERN SEQ(K+, A) WHERE NEXT(K).x != K.x + 1 WITHIN 1 minute;"""
    rows = [{"type": "K", "ts": 12, "seq": 0, "x": 0.5}, {"type": "K", "ts": 16, "seq": 1, "x": None},
            {"type": "A", "ts": 17, "seq": 2, "x": 0.5}]
    plan = _plan(text)
    table = engine.table_from_rows(rows)
    got = engine.evaluate(_forced(plan), table)
    assert got == engine.evaluate(plan, table)
    assert [r["COUNT(*)"] for r in got] == [2, 2]
