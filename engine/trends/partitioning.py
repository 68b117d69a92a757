"""CET-graph partitioning (dissertation ch. 6-7): cuts, search space, optimizers.

A *plan* is a sorted tuple of cuts (``h_cet``): the time-centric partitioning
into graphlets. The search space holds the plans whose every cut is a *cut* of
the graph (Def. 6.2): each edge crossing it leaves a last vertex of the earlier
graphlet (no edge inside it) and enters a first vertex of the later one (the
dashed edges of Figure 6.3 are refused). Any subset of such cuts keeps that
property for every graphlet, so the plans form Figure 6.2's lattice: a child
adds one cut to its parent. *Atomic graphlets* lie between consecutive cuts.

Optimizers (all return the plan of least CPU whose memory fits ``memory``
bytes, or None when no plan of the space fits; given a list ``evaluated``, they
append every plan they cost to it, for ``trendlake trends --explain``):

* :func:`branch_and_bound` (Algorithm 5): binary level search on the memory of
  the balanced plan of each level, then node search over nearly balanced plans
  (Def. 6.4) from that level down, pruning the descendants of feasible plans;
* :func:`greedy` (§7.2): the level search, then one balanced plan per level
  going down until one fits;
* :func:`exhaustive`: every plan (for checking the others on small graphs).

Theorems 6.1-6.3 (monotonicity, balanced plans cheapest) hold for homogeneous
graphs (Def. 6.5); on others B&B and greedy are heuristics.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence

from trendlake.engine.query import Unsupported
from trendlake.engine.trends.cost import Cost, cost
from trendlake.engine.trends.graph import Paths

__all__ = [
    "MAX_EXHAUSTIVE_CUTS",
    "MAX_NODES",
    "OPTIMIZERS",
    "atomic_sizes",
    "balanced",
    "branch_and_bound",
    "exhaustive",
    "greedy",
    "is_cut",
    "is_effective",
    "nearly_balanced",
    "valid_cuts",
]

MAX_NODES = 2000  # B&B evaluates at most this many plans, then returns the best so far
MAX_EXHAUSTIVE_CUTS = 16


def _invalid(paths: Paths) -> list[int]:
    """Per cut position c (after time stamp group c), how many vertices forbid it."""
    g = paths.group
    diff = [0] * (paths.groups + 1)
    for v in range(len(paths)):
        for nbrs in (paths.succ[v], paths.pred[v]):
            if len(nbrs) > 1:
                lo, hi = min(g[w] for w in nbrs), max(g[w] for w in nbrs)
                if lo < hi:  # neighbours on both sides of every c in [lo, hi)
                    diff[lo] += 1
                    diff[hi] -= 1
    out, run = [], 0
    for c in range(max(paths.groups - 1, 0)):
        run += diff[c]
        out.append(run)
    return out


def is_effective(paths: Paths, graphlet: Sequence[int]) -> bool:
    """Whether an event-centric partitioning (``graphlet[v]``: the graphlet index of each
    vertex) is effective (§6.1): no trend steps from a graphlet to an earlier one, so each
    trend visits each graphlet once. Every time-centric partitioning is."""
    return all(graphlet[v] <= graphlet[w] for v in range(len(paths)) for w in paths.succ[v])


def valid_cuts(paths: Paths) -> list[int]:
    """Every cut of the graph (Def. 6.2), as time stamp group positions."""
    return [c for c, bad in enumerate(_invalid(paths)) if bad == 0]


def is_cut(paths: Paths, c: int) -> bool:
    """Whether a cut after time stamp group ``c`` meets Def. 6.2."""
    bad = _invalid(paths)
    return 0 <= c < len(bad) and bad[c] == 0


def atomic_sizes(paths: Paths, cuts: Sequence[int]) -> list[int]:
    """The number of vertices of each graphlet between consecutive ``cuts``."""
    sizes = [0] * (len(cuts) + 1)
    i = 0
    for g in paths.group:
        while i < len(cuts) and g > cuts[i]:
            i += 1
        sizes[i] += 1
    return sizes


def balanced(paths: Paths, valid: Sequence[int], k: int) -> tuple[int, ...]:
    """A plan of ``k`` graphlets (``k - 1`` of the ``valid`` cuts) whose sizes come closest
    to ``|V| / k`` each: the cut nearest each ideal boundary."""
    sizes = atomic_sizes(paths, valid)
    prefix = list(itertools.accumulate(sizes))[:-1]  # vertices before each valid cut's end
    n = len(paths)
    chosen: list[int] = []
    lo = 0
    for j in range(1, k):
        left = k - 1 - j  # cuts still needed after this one
        hi = len(valid) - left
        target = j * n / k
        best = min(range(lo, hi), key=lambda i: (abs(prefix[i] - target), i))
        chosen.append(valid[best])
        lo = best + 1
    return tuple(chosen)


def nearly_balanced(paths: Paths, valid: Sequence[int], k: int, limit: int = MAX_NODES) -> list[tuple[int, ...]]:
    """The plans of ``k`` graphlets that are balanced or nearly balanced (Def. 6.4), at most
    ``limit`` of them."""
    sizes = atomic_sizes(paths, valid)
    a = len(sizes)
    if not 1 <= k <= a:
        return []
    ideal = math.ceil(len(paths) / k)
    out: list[tuple[int, ...]] = []

    def ok(i: int, j: int, first: bool, last: bool) -> bool:
        size = sum(sizes[i : j + 1])
        if size <= ideal:
            return True
        return (first or size < ideal + sizes[i]) and (last or size < ideal + sizes[j])

    def walk(i: int, left: int, cuts: list[int]) -> None:
        if len(out) >= limit:
            return
        if left == 1:
            if ok(i, a - 1, i == 0, True):
                out.append(tuple(cuts))
            return
        for j in range(i, a - left + 1):
            if ok(i, j, i == 0, False):
                cuts.append(valid[j])
                walk(j + 1, left - 1, cuts)
                cuts.pop()

    walk(0, k, [])
    return out


def _level(paths: Paths, valid: Sequence[int], memory: int, plan_cost: Callable[[tuple[int, ...]], Cost]) -> int | None:
    """Algorithm 5's level search: the fewest graphlets whose balanced plan fits."""
    s, e, level = 1, len(valid) + 1, None
    while s <= e:
        i = s + (e - s) // 2
        if plan_cost(balanced(paths, valid, i)).memory <= memory:
            level, e = i, i - 1
        else:
            s = i + 1
    return level


def _coster(
    paths: Paths, graph: tuple[int, int] | None, evaluated: list[Cost] | None = None
) -> Callable[[tuple[int, ...]], Cost]:
    """The cost of a plan, each plan costed once (and appended to ``evaluated`` when given)."""
    seen: dict[tuple[int, ...], Cost] = {}

    def plan_cost(cuts: tuple[int, ...]) -> Cost:
        if cuts not in seen:
            seen[cuts] = cost(paths, "h-cet", cuts, graph)
            if evaluated is not None:
                evaluated.append(seen[cuts])
        return seen[cuts]

    return plan_cost


def branch_and_bound(
    paths: Paths, memory: int, graph: tuple[int, int] | None = None, max_nodes: int = MAX_NODES,
    *, evaluated: list[Cost] | None = None,
) -> Cost | None:
    """Algorithm 5 (B&B): the cheapest plan found within ``memory`` bytes, or None. Every plan
    it costs is appended to ``evaluated`` (when given)."""
    valid = valid_cuts(paths)
    plan_cost = _coster(paths, graph, evaluated)
    level = _level(paths, valid, memory, plan_cost)
    if level is None:
        return None
    solution: Cost | None = None
    pruned: list[frozenset[int]] = []
    heap: list[tuple[int, int, tuple[int, ...]]] = []
    seen = 0

    def push(k: int) -> None:
        for cuts in nearly_balanced(paths, valid, k, max_nodes):
            if not any(p <= set(cuts) for p in pruned):
                heapq.heappush(heap, (plan_cost(cuts).cpu, k, cuts))

    push(level)
    while heap and seen < max_nodes:
        _, k, cuts = heapq.heappop(heap)
        seen += 1
        if any(p <= set(cuts) for p in pruned):
            continue
        c = plan_cost(cuts)
        if c.memory <= memory:
            if solution is None or c.cpu < solution.cpu:
                solution = c
            pruned.append(frozenset(cuts))  # its descendants cost more CPU (Theorem 6.2)
        if k == level:
            level += 1
            push(level)
    return solution


def greedy(
    paths: Paths, memory: int, graph: tuple[int, int] | None = None, *, evaluated: list[Cost] | None = None
) -> Cost | None:
    """§7.2: the level search, then one balanced plan per level until one fits."""
    valid = valid_cuts(paths)
    plan_cost = _coster(paths, graph, evaluated)
    level = _level(paths, valid, memory, plan_cost)
    if level is None:
        return None
    for k in range(level, len(valid) + 2):
        c = plan_cost(balanced(paths, valid, k))
        if c.memory <= memory:
            return c
    return None


def exhaustive(
    paths: Paths, memory: int, graph: tuple[int, int] | None = None, *, evaluated: list[Cost] | None = None
) -> Cost | None:
    """Every plan of the search space (at most 2^MAX_EXHAUSTIVE_CUTS): the cheapest that fits."""
    valid = valid_cuts(paths)
    if len(valid) > MAX_EXHAUSTIVE_CUTS:
        raise Unsupported(f"exhaustive partitioning search over {len(valid)} cuts: at most "
                          f"{MAX_EXHAUSTIVE_CUTS} (use branch-and-bound or greedy)")
    best: Cost | None = None
    for r in range(len(valid) + 1):
        for cuts in itertools.combinations(valid, r):
            c = cost(paths, "h-cet", cuts, graph)
            if evaluated is not None:
                evaluated.append(c)
            if c.memory <= memory and (best is None or (c.cpu, c.memory) < (best.cpu, best.memory)):
                best = c
    return best


OPTIMIZERS: dict[str, Callable[..., Cost | None]] = {
    "branch-and-bound": branch_and_bound,
    "greedy": greedy,
    "exhaustive": exhaustive,
}
