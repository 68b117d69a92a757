"""Weave Share's greedy merge (§5, Figure 2), the Shared and No Share baselines, and
Incremental Weave Share (§5.1).

* **Weave Share**: start with one tree per query (No Share); repeatedly merge the pair of
  trees whose merge reduces the plan's cost the most (Eq. 5, read from the cost look-up
  table), while some merge reduces it. Every merge lowers the cost, so the plan never
  costs more than No Share; it may cost more than Shared (the greedy is a heuristic).
* **Shared** (planner ``shared-panes``): one tree of all queries; **No Share** (``none``):
  a tree per query.
* **Incremental**: the stored plan's trees, less the queries removed or changed, plus a
  tree per new or changed query, merged greedily the same way; compared with a reference
  cost (the from-scratch plan's, or the paper's extrapolation of the plan-cost curve), and
  replaced by the from-scratch plan when it deviates by more than the tolerance.

A merge is made only when its benefit exceeds ``1e-12`` times the mean starting tree cost
(float rounding of a zero benefit never merges). Ties go to the pair of older trees.
Trees with the same edges are merged before the loop (``_same_edges``: the merges the loop
would make first anyway), so many queries over few window shapes search over few trees.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.weaveshare.cost import CostTable, Model, TreeState
from trendlake.optimizer.weaveshare.edges import DEFAULT_MAX_COMPOSITE
from trendlake.optimizer.weaveshare.model import Query, check_queries
from trendlake.optimizer.weaveshare.plan import Incremental, Merge, Tree, WeavePlan

__all__ = ["PLANNERS", "evaluate", "greedy_merge", "incremental", "optimize", "plan_trees"]

PLANNERS = ("weaveshare", "shared-panes", "none")
_EPS = 1e-12


def _finish(model: Model, planner: str, states: Iterable[TreeState], order: dict[str, int],
            start_cost: float, merges: Sequence[Merge], evaluated: int) -> WeavePlan:
    """The plan of the final tree states, queries and trees in input order."""
    trees = []
    for s in states:
        qs = tuple(sorted(s.queries, key=lambda q: order[q.name]))
        trees.append(Tree.of(model, TreeState(qs, s.edges, s.omega, s.cost)))
    trees.sort(key=lambda t: order[t.queries[0].name])
    return WeavePlan(planner, tuple(trees), math.fsum(t.cost for t in trees), start_cost,
                     tuple(merges), evaluated)


def _same_edges(model: Model, states: list[TreeState]
                ) -> tuple[list[TreeState], list[tuple[TreeState, TreeState, float]]]:
    """The trees with the same edges merged, and the merges made. Their benefit (Eq. 5) is
    ``lambda``, the most any merge can save (the merged edge rate is at least either
    tree's), and no other merge has it: while two such trees remain, the greedy loop would
    merge them first, in whatever order, to this same partition."""
    groups: dict[tuple[int, int], list[TreeState]] = {}
    for s in states:
        groups.setdefault(s.edges.reduced(), []).append(s)
    out, merges = [], []
    for group in groups.values():
        acc = group[0]
        for other in group[1:]:
            merged = acc.merge(model, other)
            merges.append((acc, other, acc.cost + other.cost - merged.cost))
            acc = merged
        out.append(acc)
    return out, merges


def greedy_merge(model: Model, start: Sequence[Sequence[Query]],
                 planner: str = "weaveshare") -> WeavePlan:
    """Figure 2 from the trees ``start`` (non-empty query groups): merge the pair of
    largest benefit while it is positive (trees with the same edges first, all at once)."""
    order = {q.name: i for i, q in enumerate(q for group in start for q in group)}
    states = [TreeState.of(model, group) for group in start]
    start_cost = cost = math.fsum(s.cost for s in states)
    eps = _EPS * start_cost / max(1, len(start))
    merges: list[Merge] = []

    def record(x: TreeState, y: TreeState, benefit: float, after: float) -> None:
        merges.append(Merge(tuple(q.name for q in x.queries), tuple(q.name for q in y.queries),
                            benefit, after))

    if model.rate > eps:
        states, same = _same_edges(model, states)
        for x, y, benefit in same:
            cost -= benefit
            record(x, y, benefit, cost)
    table = CostTable(model)
    for s in states:
        table.add(s)
    while (best := table.best()) is not None and best[2] > eps:
        i, j, benefit = best
        x, y = table.remove(i), table.remove(j)
        table.add(x.merge(model, y))
        cost = math.fsum(t.cost for t in table.trees.values())
        record(x, y, benefit, cost)
    return _finish(model, planner, table.trees.values(), order, start_cost, merges,
                   table.evaluated)


def evaluate(groups: Sequence[Sequence[Query]], rate: float, planner: str = "given",
             limit: int = DEFAULT_MAX_COMPOSITE) -> WeavePlan:
    """The plan of exactly these trees (no merging): its cost by Eq. 3."""
    queries = check_queries(q for g in groups for q in g)
    model = Model.of(queries, rate, limit)
    order = {q.name: i for i, q in enumerate(queries)}
    states = [TreeState.of(model, g) for g in groups if g]
    cost = math.fsum(s.cost for s in states)
    return _finish(model, planner, states, order, cost, (), 0)


def optimize(queries: Iterable[Query], rate: float, planner: str = "weaveshare",
             limit: int = DEFAULT_MAX_COMPOSITE) -> WeavePlan:
    """The plan of ``planner`` (``PLANNERS``) for queries of one pattern and partitioning at
    input rate ``rate`` (events per time unit); ``limit``: the largest composite slide, in
    grains, of a tree (pairs above it are never merged; ``shared-panes`` raises)."""
    qs = check_queries(queries)
    if planner == "weaveshare":
        return greedy_merge(Model.of(qs, rate, limit), [[q] for q in qs], planner)
    if planner == "shared-panes":
        return evaluate([qs] if qs else [], rate, planner, limit)
    if planner == "none":
        return evaluate([[q] for q in qs], rate, planner, limit)
    raise OptimizerError(f"unknown weaveshare planner {planner!r}; expected one of "
                         f"{', '.join(PLANNERS)}")


def plan_trees(queries: Iterable[Query], rate: float, planner: str = "weaveshare",
               limit: int = DEFAULT_MAX_COMPOSITE) -> list[Tree]:
    """The entry function: ``optimize(...)``'s trees."""
    return list(optimize(queries, rate, planner, limit).trees)


def _reference(curve: Sequence[tuple[int, float]], n: int) -> float:
    """The plan-cost curve's extrapolated cost for ``n`` queries: the least-squares slope
    through the origin of the (queries, cost) points of from-scratch plans, times ``n``."""
    num = math.fsum(k * c for k, c in curve)
    den = math.fsum(k * k for k, _ in curve)
    if den <= 0:
        raise OptimizerError("the plan-cost curve needs a point with at least one query")
    return num / den * n


def _woven(old_trees: Iterable[Tree | Sequence[Query]], qs: tuple[Query, ...]
           ) -> tuple[list[list[Query]], tuple[str, ...], tuple[str, ...]]:
    """The stored trees less the queries removed or changed, a tree per new or changed
    query; the names added and removed (a changed query is both)."""
    current = {q.name: q for q in qs}
    kept: list[list[Query]] = []
    removed: list[str] = []
    have: set[str] = set()
    for tree in old_trees:
        members = tree.queries if isinstance(tree, Tree) else tuple(tree)
        group = [q for q in members if current.get(q.name) == q and q.name not in have]
        removed += [q.name for q in members if current.get(q.name) != q]
        have.update(q.name for q in group)
        if group:
            kept.append(group)
    added = [q for q in qs if q.name not in have]
    return kept + [[q] for q in added], tuple(q.name for q in added), tuple(removed)


def incremental(old_trees: Iterable[Tree | Sequence[Query]], queries: Iterable[Query],
                rate: float, tolerance: float = 0.2,
                curve: Sequence[tuple[int, float]] | None = None,
                limit: int = DEFAULT_MAX_COMPOSITE) -> Incremental:
    """Incremental Weave Share: weave ``queries`` (the whole new set) into ``old_trees``
    (a stored plan's trees, or query groups). The woven plan is kept when its cost exceeds
    the reference by at most ``tolerance`` (relative: 0.2 is 20 %); else the from-scratch
    plan is returned with ``replanned``. The reference is the from-scratch plan's cost, or,
    with ``curve`` ((queries, cost) points of earlier from-scratch plans at this rate), the
    paper's extrapolation, which skips the from-scratch search unless it is needed."""
    if isinstance(tolerance, bool) or not tolerance >= 0:
        raise OptimizerError(f"tolerance must be >= 0, not {tolerance!r}")
    qs = check_queries(queries)
    model = Model.of(qs, rate, limit)
    start, added, removed = _woven(old_trees, qs)
    scratch = None
    try:
        woven = greedy_merge(model, start, "weaveshare-incremental")
    except OptimizerError:  # a kept tree's composite slide exceeds the limit at the new grain
        woven = None
    if curve is None or woven is None:
        scratch = greedy_merge(model, [[q] for q in qs])
        reference = scratch.cost
    else:
        reference = _reference(curve, len(qs))
    if woven is None:
        return Incremental(scratch, True, math.inf, reference, math.inf, added, removed)
    if reference > 0:
        deviation = (woven.cost - reference) / reference
    else:
        deviation = 0.0 if woven.cost <= 0 else math.inf
    if deviation <= tolerance:
        return Incremental(woven, False, woven.cost, reference, deviation, added, removed)
    if scratch is None:
        scratch = greedy_merge(model, [[q] for q in qs])
    return Incremental(scratch, True, woven.cost, reference, deviation, added, removed)
