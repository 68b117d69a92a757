"""The pieces of the event-grained shared Kleene graph (``engine.shared.kleene.graph``) on
streams small enough to derive by hand from the module docstring (``count(e) = Σ_s M[e,s]·B_s``,
``M[e] = δ_s(e) + Σ_p M[p]``), and against each query alone.

The stream ``a1 c k1(1) k3(3) a2 k2(2) k4(4) b`` (``K.x < NEXT(K).x``): the trends of ``K+`` are
the increasing subsequences of 1, 3, 2, 4: eleven, the sum of ``x`` over them 50. The events of
K form two snapshots: ``s0 = {k1, k3}`` and, after ``a2`` changes ``SEQ(A, K+)``'s ``B``, ``s1 =
{k2, k4}``. ``M`` (columns s0, s1): k1 (1, 0), k3 (2, 0), k2 (1, 1), k4 (4, 2); column totals 8 and
3. With ``B_s0 = 1`` and ``B_s1 = 2`` (two a), ``SEQ(A, K+)`` has 8·1 + 3·2 = 14 trends (eleven
from a1, three from a2: {2}, {4}, {2, 4}) and ``SUM(K.x)`` 50 + 2 + 4 + 6 = 62.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from trendlake.engine.query import compile_query
from trendlake.engine.shared.kleene import SharedStats
from trendlake.engine.shared.kleene.graph import (
    M_KEY,
    GraphMember,
    GraphPartition,
    run_group,
    time_stamp_groups,
)
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan

from trendlake import engine

SECOND = 1_000_000
STREAM = [("A", 0), ("C", 0), ("K", 1), ("K", 3), ("A", 0), ("K", 2), ("K", 4), ("B", 0)]
TEXT = """QUERY q1 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(A, K+) WHERE K.x < NEXT(K).x WITHIN {w};
          QUERY q2 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(C, K+) WHERE K.x < NEXT(K).x WITHIN {w};
          QUERY q3 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(K+, B) WHERE K.x < NEXT(K).x WITHIN {w};"""


def test_time_stamp_groups() -> None:
    assert time_stamp_groups([5, 5, 6, 7, 7, 7, 9], 0, 7) == [(0, 2), (2, 3), (3, 6), (6, 7)]
    assert time_stamp_groups([5, 5, 6, 7, 7, 7, 9], 1, 5) == [(1, 2), (2, 3), (3, 5)]
    assert time_stamp_groups([], 0, 0) == []


def _group(window: str, stream: list[tuple[str, int]] = STREAM) -> tuple[Any, ...]:
    text = TEXT.format(w=window)
    plan = build_plan(parse_workload(text), planner="none")
    queries = [compile_query(e) for e in plan["queries"]]
    t = np.asarray([ty for ty, _ in stream])
    n = len(stream)
    masks = {q.name: {v: t == q.variables[v].type for v in q.variables} for q in queries}
    attrs = {"x": np.asarray([x for _, x in stream], dtype=np.int64)}
    ts = np.arange(1, n + 1, dtype=np.int64) * SECOND
    return text, queries, masks, attrs, ts, np.zeros(n, dtype=np.int64)


def _alone(text: str, stream: list[tuple[str, int]] = STREAM) -> dict[tuple[str, int], Any]:
    plan = build_plan(parse_workload(text), planner="none")
    rows = [{"type": ty, "ts": i + 1, "seq": i, "x": x} for i, (ty, x) in enumerate(stream)]
    got = engine.evaluate(plan, engine.table_from_rows(rows))
    return {(r["query"], r["window_start"]): (r["COUNT(*)"], r["SUM(K.x)"]) for r in got}


def test_run_group_by_hand() -> None:
    text, queries, masks, attrs, ts, kid = _group("1 minute")
    stats = SharedStats()
    out = run_group(queries, {q.name: "K" for q in queries}, masks, np.arange(len(ts)), ts, attrs, kid, stats)
    got = {name: [(r.trends, r.sums[("K", "x")]) for r in res.values()] for name, res in out.items()}
    assert got == {"q1": [(14, 62)], "q2": [(11, 50)], "q3": [(11, 50)]}
    # two snapshots of K (a2 changes q1's B); q1 has an epoch in each, q2 and q3 (K starts
    # its pattern) in the first, where B stays the same
    assert (stats.graphlets, stats.snapshots, stats.shared_events) == (2, 4, 4)


def test_k_total_combines_the_snapshots_coefficients() -> None:
    """The partition's coefficients by hand: M's column totals 8 and 3, and each member's
    running total of K, ``Σ_s (Σ_e M[e,s])·B_s``."""
    _, queries, masks, attrs, ts, kid = _group("1 minute")
    members = [GraphMember(q, "K") for q in queries]
    adj = next(t for t in queries[0].transitions if t.src == t.dst == "K")
    part = GraphPartition(members, 60 * SECOND, 60 * SECOND, adj.adjacent, False, False, ["x"], [], [],
                          SharedStats(), {"x": np.int64}, None)
    kmask = (masks["q1"]["K"]).tolist()
    matches: dict[int, list[tuple[int, str]]] = {}
    for j, m in enumerate(members):
        for v in m.others:
            for r in np.flatnonzero(masks[m.q.name][v]).tolist():
                matches.setdefault(r, []).append((j, v))
    row_attrs = lambda r: {"x": int(attrs["x"][r])}  # noqa: E731
    results = part.run(0, len(ts), ts.tolist(), kmask, matches, row_attrs, {})
    assert [part.coef.range_total(M_KEY, s, s + 1) for s in range(2)] == [8, 3]
    assert [part.k_total(j, 0)[0] for j in range(3)] == [14, 11, 11]
    # results where K ends the pattern (q1, q2, at the window's close) and from B (q3)
    assert {j: res[0][0] for j, res in results.items()} == {0: 14, 1: 11, 2: 11}


@pytest.mark.parametrize("window", ["1 minute", "4 seconds SLIDE 2 seconds", "3 seconds"])
def test_run_group_equals_each_query_alone(window: str) -> None:
    """Sliding and tumbling windows cut the snapshots (one set of windows each)."""
    text, queries, masks, attrs, ts, kid = _group(window)
    out = run_group(queries, {q.name: "K" for q in queries}, masks, np.arange(len(ts)), ts, attrs, kid,
                    SharedStats())
    slide = queries[0].slide
    got = {(name, k * slide // SECOND): (r.trends, r.sums[("K", "x")])
           for name, res in out.items() for (_, k), r in res.items()}
    want = {(q, start // SECOND if isinstance(start, int) else int(start.timestamp())): v
            for (q, start), v in _alone(text).items()}
    assert got == want
