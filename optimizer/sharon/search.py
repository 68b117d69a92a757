"""Sharon's searches over a Sharon graph, and the optimizer from a workload to a plan.

* ``sharon`` (§V-VI): the graph reduction (``graph.reduce``: conflict-free vertices taken,
  conflict-ridden ones removed; the bound is the larger of Eq. 10 and the weight of
  GWMIN's set, both lower bounds of the optimum), then the sharing plan finder on each
  connected component of the reduced graph (independent sets of different components
  combine freely, so the optimum is the sum of the components' optima). The plan finder
  (Algorithms 12-13) walks the valid plans level by level: level 1 is the vertices,
  level 2 the non-adjacent pairs, and a plan of size ``s + 1`` is made from two valid
  plans of size ``s`` with the same first ``s - 1`` vertices whose last vertices are not
  adjacent (Lemmas 4-6: every valid plan is made exactly once, no invalid plan is).
  Plans keep their vertices in increasing order; the best plan seen is kept (the first
  of equal score). The finder enumerates the whole valid space, which grows
  exponentially; past ``MAX_PLANS`` plans in one component, the component is solved by
  ``branch_and_bound`` (exact as well), and past ``MAX_NODES`` nodes of that by GWMIN
  (the paper's fallback; the plan is then not claimed optimal, ``stats.exact``).
* ``greedy``: GWMIN on the whole graph.
* ``exhaustive``: every subset of the vertices, the best independent one; it refuses
  graphs of more than ``EXHAUSTIVE_LIMIT`` vertices (``2**20`` subsets take about a
  second).

``optimize`` builds the graph of a workload: the beneficial candidates
(``expanded=False``, the paper's §III-VI) or the beneficial options of every candidate
(``expanded=True``, §VII), each weighted by its benefit, with Def. 6's conflicts as
edges. By default ``sharon`` and ``exhaustive`` search the expanded graph and ``greedy``
the graph of candidates, as in the paper's experiments (ch. 25.3: the greedy optimizer
"does not resolve sharing conflicts").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.sharon.cost import benefit, non_shared_cost
from trendlake.optimizer.sharon.graph import TOLERANCE, Graph, gwmin, gwmin_bound, members, reduce
from trendlake.optimizer.sharon.model import Candidate, Workload, conflict_masks, from_entries
from trendlake.optimizer.sharon.plan import SearchStats, Shared, SharingPlan
from trendlake.optimizer.sharon.resolve import MAX_OPTIONS, expand

__all__ = ["EXHAUSTIVE_LIMIT", "MAX_NODES", "MAX_PLANS", "SEARCHES", "Selection", "branch_and_bound", "choose",
           "exhaustive", "graph_of", "greedy", "optimize", "plan_finder", "sharon", "vertices_of"]

EXHAUSTIVE_LIMIT = 20
MAX_PLANS = 100_000  # valid plans the plan finder may generate in one component
MAX_NODES = 200_000  # nodes the branch and bound may visit in one component


@dataclass(frozen=True)
class Selection:
    """A search's independent set, its weight and what the search did."""

    vertices: tuple[int, ...]
    weight: float
    conflict_free: int = 0
    conflict_ridden: int = 0
    components: int = 0
    plans: int = 0
    nodes: int = 0
    exact: bool = True
    bound: float | None = None


def plan_finder(g: Graph, within: int, max_plans: int = MAX_PLANS) -> tuple[tuple[int, ...], float, int] | None:
    """Algorithms 12-13 on the vertices of ``within``: the best valid plan, its score and
    the number of valid plans generated; None past ``max_plans``."""
    w, adj = g.weights, g.adj
    level = [((v,), w[v]) for v in members(within)]
    if not level:
        return (), 0.0, 0
    best, best_w = max(level, key=lambda x: (x[1], -x[0][0]))
    generated = len(level)
    while level:
        children: list[tuple[tuple[int, ...], float]] = []
        i = 0
        while i < len(level):  # plans with the same first s - 1 vertices are contiguous
            j = i + 1
            while j < len(level) and level[j][0][:-1] == level[i][0][:-1]:
                j += 1
            for a in range(i, j):
                plan, score = level[a]
                near = adj[plan[-1]]
                for b in range(a + 1, j):
                    last = level[b][0][-1]
                    if not near >> last & 1:
                        children.append((plan + (last,), score + w[last]))
            if generated + len(children) > max_plans:
                return None
            i = j
        generated += len(children)
        for plan, score in children:
            if score > best_w:
                best, best_w = plan, score
        level = children
    return best, best_w, generated


class _Budget(Exception):
    """The branch and bound ran past its node budget."""


def branch_and_bound(g: Graph, within: int, max_nodes: int = MAX_NODES,
                     start: Sequence[int] = ()) -> tuple[tuple[int, ...], float, int] | None:
    """An exact maximum weight independent set of the vertices of ``within``, depth first:
    take the heaviest vertex left (drop its neighbours) or leave it, never building an
    invalid plan. The vertices are cut once into cliques (greedily, heaviest first); an
    independent set takes at most one vertex of a clique, so a branch whose score plus
    the heaviest vertex left of each clique cannot beat the best plan so far is cut.
    ``start`` (a valid plan) is the first best plan. Returns the plan, its weight and the
    nodes visited; None past ``max_nodes``."""
    verts = sorted(members(within), key=lambda v: (-g.weights[v], v))  # local 0 = heaviest
    local = {v: i for i, v in enumerate(verts)}
    w = [g.weights[v] for v in verts]
    adj = [sum(1 << local[u] for u in members(g.adj[v] & within)) for v in verts]
    cliques = []
    left = (1 << len(verts)) - 1
    while left:  # lowest bit = heaviest vertex
        clique = left & -left
        rest = adj[clique.bit_length() - 1] & left
        while rest:
            low = rest & -rest
            clique |= low
            rest &= adj[low.bit_length() - 1]
        cliques.append(clique)
        left &= ~clique
    best: tuple[tuple[int, ...], float] = (tuple(local[v] for v in start), g.weight(start))
    nodes = 0
    stack: list[tuple[int, float, tuple[int, ...]]] = [((1 << len(verts)) - 1, 0.0, ())]
    while stack:
        cand, score, chosen = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            return None
        if score > best[1]:
            best = (chosen, score)
        bound = score
        for c in cliques:
            low = c & cand
            if low:
                bound += w[(low & -low).bit_length() - 1]
        if not cand or bound <= best[1] + TOLERANCE * max(1.0, abs(best[1])):
            continue
        v = (cand & -cand).bit_length() - 1
        stack.append((cand & ~(1 << v), score, chosen))  # leave v (searched second)
        stack.append((cand & ~adj[v] & ~(1 << v), score + w[v], (*chosen, v)))  # take v
    return tuple(sorted(verts[i] for i in best[0])), best[1], nodes


def sharon(g: Graph, max_plans: int = MAX_PLANS, max_nodes: int = MAX_NODES) -> Selection:
    """The reduction, then per component of the reduced graph the plan finder; past
    ``max_plans`` the branch and bound; past ``max_nodes`` GWMIN (not exact)."""
    red = reduce(g, max(gwmin_bound(g), g.weight(gwmin(g))))
    chosen = list(red.conflict_free)
    plans = nodes = 0
    exact = True
    parts = g.components(sum(1 << v for v in red.remaining))
    for part in parts:
        found = plan_finder(g, part, max_plans)
        if found is not None:
            plans += found[2]
        else:
            plans += max_plans
            found = branch_and_bound(g, part, max_nodes, gwmin(g, part))
            nodes += found[2] if found is not None else max_nodes
        if found is None:
            exact = False
            chosen.extend(gwmin(g, part))
        else:
            chosen.extend(found[0])
    chosen.sort()
    return Selection(tuple(chosen), g.weight(chosen), len(red.conflict_free), len(red.conflict_ridden),
                     len(parts), plans, nodes, exact, red.bound)


def greedy(g: Graph) -> Selection:
    """GWMIN on the whole graph."""
    chosen = sorted(gwmin(g))
    return Selection(tuple(chosen), g.weight(chosen), exact=False)


def exhaustive(g: Graph, limit: int = EXHAUSTIVE_LIMIT) -> Selection:
    """Every subset of the vertices (``2**n``), the heaviest independent one."""
    if g.n > limit:
        raise OptimizerError(f"exhaustive search: the Sharon graph has {g.n} vertices, more than {limit} "
                             f"(2**{g.n} plans); use the sharon or greedy search")
    size = 1 << g.n
    score = [0.0] * size
    valid = bytearray(size)
    valid[0] = 1
    best, best_w = 0, 0.0
    w, adj = g.weights, g.adj
    for mask in range(1, size):
        low = mask & -mask
        v = low.bit_length() - 1
        rest = mask ^ low
        if valid[rest] and not adj[v] & rest:
            valid[mask] = 1
            s = score[mask] = score[rest] + w[v]
            if s > best_w:
                best, best_w = mask, s
    return Selection(tuple(members(best)), best_w, plans=size)


SEARCHES: Mapping[str, Callable[..., Selection]] = {"sharon": sharon, "greedy": greedy, "exhaustive": exhaustive}


def vertices_of(wl: Workload, expanded: bool = True, max_options: int = MAX_OPTIONS) -> list[tuple[Candidate, float]]:
    """The Sharon graph's vertices with their benefits: the beneficial candidates, or the
    beneficial options of every candidate."""
    if expanded:
        return expand(wl, wl.candidates, max_options)
    out = []
    for c in wl.candidates:
        value = benefit(wl, c)
        if value > 0:
            out.append((c, value))
    return out


def graph_of(cands: Sequence[Candidate], weights: Sequence[float]) -> Graph:
    """The Sharon graph of ``cands`` weighted by ``weights`` (Algorithm 1's edges: Def. 6)."""
    return Graph(weights, (), [c.id for c in cands], conflict_masks(cands))


def optimize(wl: Workload, search: str = "sharon", expanded: bool | None = None, max_options: int = MAX_OPTIONS,
             max_plans: int = MAX_PLANS, max_nodes: int = MAX_NODES) -> SharingPlan:
    """The sharing plan ``search`` finds on the workload's Sharon graph (``expanded``:
    with options; default: for ``sharon`` and ``exhaustive``, not for ``greedy``)."""
    if search not in SEARCHES:
        raise OptimizerError(f"unknown Sharon search {search!r}: one of {', '.join(SEARCHES)}")
    if expanded is None:
        expanded = search != "greedy"
    verts = vertices_of(wl, expanded, max_options)
    cands = [c for c, _ in verts]
    g = graph_of(cands, [v for _, v in verts])
    sel = sharon(g, max_plans, max_nodes) if search == "sharon" else SEARCHES[search](g)
    shared = tuple(Shared(c.id, c.pattern, c.queries, tuple(c.positions[q] for q in c.queries), verts[v][1], c.origin)
                   for v in sel.vertices for c in [cands[v]])
    stats = SearchStats(search, len(wl.candidates), g.n, g.edge_count,
                        sel.bound if sel.bound is not None else gwmin_bound(g), sel.conflict_free,
                        sel.conflict_ridden, sel.components, sel.plans, sel.nodes, sel.exact)
    return SharingPlan(shared, sel.weight, non_shared_cost(wl), stats, tuple(cands), tuple(g.weights),
                       tuple(g.adj), tuple(sel.vertices))


def choose(entries: Sequence[Mapping[str, Any]], rates: Mapping[str, float],
           selectivity: Mapping[tuple[str, str], float] | None = None, search: str = "sharon",
           expanded: bool | None = None) -> SharingPlan:
    """The chosen candidates, with their benefits, of the plan's query entries under
    ``rates`` (event type -> events per window)."""
    return optimize(from_entries(entries, rates, selectivity), search, expanded)
