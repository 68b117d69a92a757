"""The pieces of the type-grained shared Kleene executor (``engine.shared.kleene.typed``), each
on its own: checked against the derivation in the module docstring (one time stamp of ``k``
events of ``K``: ``u' = f·u``, ``W' = f·W + k·u``, ``Z' = f·Z + S·u``, ``f = 1 + k``), against
hand-derived values, or against the query's own step code applied event by event.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.query import CompiledQuery, compile_query
from trendlake.engine.shared.kleene.typed import (
    Member,
    MemberState,
    SharedStats,
    SharedWindow,
    Step,
    TypedPass,
    VisitedRows,
    run_coefficients,
    share_burst,
    single_event_run,
)
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan

from tests.unit.engine.test_shared_kleene import HAMLET, _hamlet_rows
from trendlake import engine

SECOND = 1_000_000


def _queries(text: str) -> list[CompiledQuery]:
    plan = build_plan(parse_workload(text), planner="none")
    return [compile_query(entry) for entry in plan["queries"]]


# -- F, G, H of a run of time stamps ---------------------------------------------------------

def test_run_coefficients_by_hand() -> None:
    # stamps of 1 and 2 events: f = 2, 3; F = 6, G = 1·3 + 2·2 = 7, H = S1·3 + S2·2
    assert run_coefficients([1, 2], {"x": [5, 7]}) == (6, 7, {"x": 29})
    # one event per stamp, values 1, 2, 3: F = 8, G = 3·4, H = 4·6
    assert run_coefficients([1, 1, 1], {"x": [1, 2, 3]}) == (8, 12, {"x": 24})
    assert single_event_run(3, {"x": 6}) == (8, 12, {"x": 24})
    assert run_coefficients([], {"x": []}) == (1, 0, {"x": 0})


@given(st.lists(st.tuples(st.integers(1, 4), st.integers(-50, 50)), min_size=1, max_size=8),
       st.integers(0, 9), st.integers(0, 9), st.integers(-9, 9))
@settings(max_examples=200, deadline=None)
def test_run_coefficients_equal_the_time_stamps_one_by_one(stamps: list[tuple[int, int]], u: int, w: int, z: int) -> None:
    """The affine map of the run equals the time stamps' maps applied in turn."""
    F, G, H = run_coefficients([k for k, _ in stamps], {"a": [s for _, s in stamps]})
    u1, w1, z1 = u, w, z
    for k, s in stamps:
        u1, w1, z1 = (1 + k) * u1, (1 + k) * w1 + k * u1, (1 + k) * z1 + s * u1
    assert (F * u, F * w + G * u, F * z + H["a"] * u) == (u1, w1, z1)


@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=12))
def test_single_event_run_is_the_closed_form(values: list[int]) -> None:
    assert single_event_run(len(values), {"a": sum(values)}) == run_coefficients([1] * len(values), {"a": values})


def test_share_burst_decision() -> None:
    # 1 + c·|kept out| < (1 + c)·|class|
    assert share_burst(2, 1, 1.0, True)  # 2 < 4
    assert not share_burst(1, 3, 1.0, True)  # 4 < 2 fails
    assert not share_burst(1, 1, 1.0, True)  # 2 < 2 fails
    assert not share_burst(1, 1, 0.5, True)  # 1.5 < 1.5 fails
    assert share_burst(2, 2, 0.5, True)  # 2 < 3
    assert share_burst(1, 3, 1.0, False)  # static: always shared


# -- a window's coefficients ------------------------------------------------------------

def _step(xs: list[int]) -> Step:
    k = len(xs)
    return Step(1 + k, k, {"x": sum(xs)}, {"x": min(xs)}, {"x": max(xs)}, {"x": sum(xs)})


def test_window_composes_runs_and_reads_h_since_a_snapshot() -> None:
    stamps = [[2], [3, 5], [4], [1, 1, 6]]
    win = SharedWindow(H={"x": 0})
    e = MemberState((), 0, 1, 0, {"x": 0})
    for i, xs in enumerate(stamps):
        if i == 2:
            win.snapshot(e)  # taken after the first two stamps
        win.compose(_step(xs), len(xs), {"x": sum(xs)})
    F, G, H = run_coefficients([len(xs) for xs in stamps], {"x": [sum(xs) for xs in stamps]})
    assert (win.F, win.G, win.H) == (F, G, H)
    assert (e.epoch, e.F) == (2, 2 * 3)
    f_rel = win.F // e.F
    _, _, h_rel = run_coefficients([1, 3], {"x": [4, 8]})
    # exact from the window's H, and composed from the steps since the snapshot: the same
    assert win.h_since(e, "x", f_rel, True) == win.h_since(e, "x", f_rel, False) == h_rel["x"]
    win.entries[0] = e
    win.restart()
    assert (win.F, win.G, win.H, win.steps) == (1, 0, {"x": 0}, [])
    assert (e.epoch, e.F, e.G, e.H) == (0, 1, 0, {"x": 0})


# -- a member's state brought up to date ------------------------------------------------

AGGS = "COUNT(*), COUNT(K), COUNT({o}), SUM(K.x), SUM({o}.y), MIN(K.x), MAX(K.x), MIN({o}.y)"


@pytest.mark.parametrize("pattern", ["SEQ(A, K+)", "SEQ(A, K+, B)", "SEQ(K+, B)"])
@pytest.mark.parametrize("exact_h", [True, False])
def test_catch_up_equals_the_query_applying_each_time_stamp(pattern: str, exact_h: bool) -> None:
    """A state brought up to date from the window's coefficients equals the query's own step
    code applied to each time stamp of K in turn."""
    aggs = AGGS.format(o="A" if "A" in pattern else "B")
    (q,) = _queries(f"QUERY q RETURN {aggs} PATTERN {pattern} WITHIN 1 minute;")
    m = Member(q, "K")
    lay = m.layout
    names = lay.attrs

    def row(v: int, values: dict[str, list[int]], k: int) -> tuple:
        return m.step_row(v, list(range(k)), {a: values.get(a, [0] * k) for a in names})

    a_index = lay.index.get("A")
    st0 = lay.zero
    if a_index is not None:  # two A events at one time stamp, then one: s = 3
        st0 = m.kernel(st0, [row(a_index, {"y": [4, 9]}, 2)])
        st0 = m.kernel(st0, [row(a_index, {"y": [2]}, 1)])
    stamps = [[2], [3, 5], [4], [7, 1]]
    want = st0
    win = SharedWindow(H={"x": 0})
    e = MemberState(st0, 0, 1, 0, {"x": 0})
    for xs in stamps:
        want = m.kernel(want, [row(m.i, {"x": xs}, len(xs))])
        win.compose(_step(xs), len(xs), {"x": sum(xs)})
    s = m.extends_from(st0)
    u = st0[m.base] + s
    assert s == (3 if a_index is not None else 1)
    got = m.catch_up(st0, win, e, u, s, {"x"} if exact_h else set())
    assert got == want
    # by hand: count(K) = u·F - s, F = 2·3·2·3
    assert got[m.base] == u * 36 - s


def test_step_rows_are_what_the_kernel_reads() -> None:
    (q,) = _queries("QUERY q RETURN SUM(K.x), MIN(A.x) PATTERN SEQ(A, K+, B) WITHIN 1 minute;")
    m = Member(q, "K")
    cols = {"x": [5, None, 2, 8]}
    assert m.layout.stat_cols == [("S", 0), ("MN", 0)]
    # K has a self-loop: several events at one time stamp take the code nv + v
    assert m.step_row(m.i, [0, 1, 2], cols) == (3 + m.i, 3, 7, 2)
    assert m.step_row(m.i, [3], cols) == (m.i, 1, 8, 8)
    # ranked before K: its successor B; after it: its predecessor A
    codes = [m.layout.index["A"], m.layout.index["B"], m.layout.index["B"], -1]
    assert m.steps_of([0, 1, 2], codes, True, cols) == [m.step_row(m.layout.index["B"], [1, 2], cols)]
    assert m.steps_of([0, 1, 2], codes, False, cols) == [m.step_row(m.layout.index["A"], [0], cols)]


# -- the rows as the pass reads them ----------------------------------------------------

def _rows(types: list[str], ts: list[int], kx: list[Any], queries: list[CompiledQuery], within: int, slide: int,
          k_below: dict[str, int] | None = None) -> tuple[list[Member], VisitedRows, dict[str, Any]]:
    n = len(types)
    members = [Member(q, "K") for q in queries]
    t = np.asarray(types)
    x = np.asarray(kx, dtype=np.int64)
    masks = {}
    for q in queries:
        masks[q.name] = {v: t == q.variables[v].type for v in q.positive}
        if k_below and q.name in k_below:
            masks[q.name]["K"] = (t == "K") & (x < k_below[q.name])
    idx = np.arange(n)
    rows = VisitedRows(members, masks, idx, np.asarray(ts, dtype=np.int64), {"x": x}, np.zeros(n, dtype=np.int64),
                       within, slide)
    return members, rows, masks


def test_visited_rows_group_time_stamps_and_find_k_only_runs() -> None:
    queries = _queries("""QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, K+) WITHIN 10 seconds SLIDE 5 seconds;
                          QUERY q2 RETURN COUNT(*) PATTERN SEQ(B, K+) WITHIN 10 seconds SLIDE 5 seconds;""")
    types = ["A", "K", "K", "K", "B", "K", "A", "K", "K"]
    ts = [s * SECOND for s in (1, 2, 2, 3, 4, 5, 5, 6, 7)]
    _, rows, _ = _rows(types, ts, [0] * 9, queries, 10 * SECOND, 5 * SECOND)
    assert rows.uniform
    assert (rows.gstart, rows.gend) == ([0, 1, 3, 4, 5, 7, 8], [1, 3, 4, 5, 7, 8, 9])
    assert rows.kcount == [0, 2, 1, 0, 1, 1, 1]
    assert rows.k_only == [False, True, True, False, False, True, True]
    assert rows.gpane == [0, 0, 0, 0, 1, 1, 1]
    # the members' own events, per group: q1's A at rows 0 and 6, q2's B at row 4
    pairs = [[(rows.pair_members[x], rows.pair_rows[x]) for x in range(rows.pair_lo[g], rows.pair_hi[g])]
             for g in range(len(rows.gstart))]
    assert pairs == [[(0, 0)], [], [], [(1, 4)], [(0, 6)], [], []]
    assert [rows.run_end(g) for g in range(7)] == [0, 2, 2, 3, 4, 6, 6]
    # a run stops at a pane boundary: 4 s and 6 s are in panes 0 and 1
    _, rows, _ = _rows(["K", "K", "K"], [4 * SECOND, 6 * SECOND, 7 * SECOND], [0] * 3, queries, 10 * SECOND, 5 * SECOND)
    assert [rows.run_end(g) for g in range(3)] == [0, 2, 2]


def test_visited_rows_with_different_predicates_on_k() -> None:
    queries = _queries("""QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, K+) WITHIN 1 minute;
                          QUERY q2 RETURN COUNT(*) PATTERN SEQ(B, K+) WITHIN 1 minute;""")
    _, rows, _ = _rows(["A", "K", "K", "B"], [1, 2, 3, 4], [0, 3, 7, 0], queries, 60 * SECOND, 60 * SECOND,
                       k_below={"q1": 5})
    assert not rows.uniform
    assert rows.km_lists == [[False, True, False, False], [False, True, True, False]]
    assert rows.k_only == []  # no closed-form runs: the classes are decided per time stamp


# -- the pass ---------------------------------------------------------------------------

HAMLET_TEXT = """QUERY q1 RETURN COUNT(*), SUM(T2.x) PATTERN SEQ(T1, T2+) {w1} WITHIN 1 minute;
                 QUERY q2 RETURN COUNT(*), SUM(T2.x) PATTERN SEQ(T3, T2+) WITHIN 1 minute;"""


def _hamlet_pass(text: str, dynamic: bool, cost: float, x_below: int | None) -> tuple[dict[str, Any], SharedStats]:
    """The pass over Hamlet's Figure 4 stream (x as in test_shared_kleene), one window;
    ``x_below``: q1's local predicate on T2 (``T2.x < x_below``), applied to its mask."""
    queries = _queries(text)
    members = [Member(q, "T2") for q in queries]
    t = np.asarray([f"T{k}" for k in HAMLET])
    x = np.asarray([r["x"] for r in _hamlet_rows()], dtype=np.int64)
    masks = {q.name: {v: t == q.variables[v].type for v in q.positive} for q in queries}
    if x_below is not None:
        masks["q1"]["T2"] = masks["q1"]["T2"] & (x < x_below)
    n, within = len(t), 60 * SECOND
    ts = np.arange(1, n + 1, dtype=np.int64) * SECOND
    rows = VisitedRows(members, masks, np.arange(n), ts, {"x": x}, np.zeros(n, dtype=np.int64), within, within)
    stats = SharedStats(trace=[])
    out = TypedPass(members, rows, stats, within, within, dynamic, cost).run()
    got = {name: (r.trends, r.sums[("T2", "x")]) for name, res in out.items() for r in res.values()}
    return got, stats


def _alone(text: str) -> dict[str, Any]:
    plan = build_plan(parse_workload(text), planner="none")
    return {r["query"]: (r["COUNT(*)"], r["SUM(T2.x)"]) for r in engine.evaluate(plan, engine.table_from_rows(_hamlet_rows()))}


def test_pass_on_hamlets_worked_example() -> None:
    """Figure 4 of Hamlet by hand (test_shared_kleene's docstring): 132 and 72 trends, the
    snapshots u = 2 and 1 before the first graphlet, 34 and 19 before the second."""
    text = HAMLET_TEXT.format(w1="")
    got, stats = _hamlet_pass(text, False, 1.0, None)
    assert {q: c for q, (c, _) in got.items()} == {"q1": 132, "q2": 72}
    assert got == _alone(text)
    assert sorted((q, applied, u) for _, _, q, applied, u in stats.trace or []) == [
        ("q1", 2, 34), ("q1", 4, 2), ("q2", 2, 19), ("q2", 4, 1)]
    assert (stats.graphlets, stats.shared_events, stats.split_bursts) == (2, 6, 0)


@pytest.mark.parametrize(("dynamic", "split", "kept_out"), [(False, 0, 3), (True, 3, 0)])
def test_pass_with_classes_equals_each_query_alone(dynamic: bool, split: int, kept_out: int) -> None:
    """q1 matches only the T2 events with x < 5 (x = 3, 6, 2, 5 at times 4-7, 2, 5 at 13-14):
    three time stamps with one class of both queries, three where q2 alone matches. Static,
    those three are shared by q2 with q1 kept out; dynamic, ``1 + c < (1 + c)·1`` fails and
    they are split. Either way the results are each query's alone."""
    text = HAMLET_TEXT.format(w1="WHERE T2.x < 5")
    got, stats = _hamlet_pass(text, dynamic, 1.0, 5)
    assert got == _alone(text)
    assert (stats.split_bursts, stats.shared_bursts, stats.event_snapshots) == (split, 6 - split, kept_out)
