"""The Sharon graph (§IV-V, dissertation ch. 23.1-23.2): candidates as weighted vertices,
sharing conflicts as edges, GWMIN and the graph reduction.

The graph knows weights and edges, not workloads: ``optimizer.sharon.search`` builds it
from a workload's candidates and benefits, the paper's worked example builds it with the
example's benefit values. Vertices are ``0 .. n-1``; ``adj[v]`` is the bit mask of ``v``'s
neighbours; a vertex set is a bit mask too.

* **GWMIN** (Sakai et al., the greedy algorithm the paper cites): repeatedly take the
  vertex with the largest ``weight / (degree + 1)`` in what is left (ties: the lower
  vertex), drop it and its neighbours. Its set weighs at least Eq. 10's
  ``sum(weight(u) / (degree(u) + 1))`` (``gwmin_bound``).
* **Reduction** (Algorithm 11), to a fixed point: a vertex without neighbours left is
  *conflict-free* and goes to every optimal plan (Def. 14); a vertex whose
  ``Score_max`` -- the weight of the conflict-free vertices plus every vertex left that is
  not its neighbour (itself included, Def. 12) -- is below the bound is *conflict-ridden*
  (Def. 13) and is removed. The bound is computed once on the whole graph: Eq. 10 by
  default, as the paper does (``search.sharon`` passes the larger of Eq. 10 and the
  weight of GWMIN's set: any valid plan's weight is a lower bound of the optimum as
  well). Each removal only lowers other vertices' ``Score_max``, so the fixed point
  does not depend on the order. A vertex is removed only when ``Score_max`` is below the
  bound by more than a relative ``1e-9`` (rounding never removes a vertex of an optimal
  plan).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Graph", "Reduction", "gwmin", "gwmin_bound", "reduce"]

TOLERANCE = 1e-9


class Graph:
    """A Sharon graph: ``weights[v] > 0`` (benefits), undirected ``edges`` (conflicts),
    or ``adj``, the neighbours of each vertex as a bit mask (symmetric)."""

    def __init__(self, weights: Sequence[float], edges: Iterable[tuple[int, int]],
                 labels: Sequence[Hashable] | None = None, adj: Sequence[int] | None = None) -> None:
        self.weights = [float(w) for w in weights]
        self.n = len(self.weights)
        bad = [v for v, w in enumerate(self.weights) if not 0 < w < float("inf")]
        if bad:
            raise ValueError(f"Sharon graph: vertex {bad[0]} has weight {self.weights[bad[0]]} (benefits are > 0)")
        self.adj = [0] * self.n if adj is None else list(adj)
        if len(self.adj) != self.n or any(m >> v & 1 or m >> self.n for v, m in enumerate(self.adj)):
            raise ValueError(f"Sharon graph: adjacency masks do not fit {self.n} vertices")
        for a, b in edges:
            if a == b or not (0 <= a < self.n and 0 <= b < self.n):
                raise ValueError(f"Sharon graph: bad edge ({a}, {b}) among {self.n} vertices")
            self.adj[a] |= 1 << b
            self.adj[b] |= 1 << a
        self.labels = list(labels) if labels is not None else list(range(self.n))
        if len(self.labels) != self.n:
            raise ValueError(f"Sharon graph: {len(self.labels)} labels for {self.n} vertices")

    @property
    def all(self) -> int:
        return (1 << self.n) - 1

    @property
    def edge_count(self) -> int:
        return sum(a.bit_count() for a in self.adj) // 2

    def degree(self, v: int, within: int | None = None) -> int:
        return (self.adj[v] & (self.all if within is None else within)).bit_count()

    def weight(self, vertices: Iterable[int]) -> float:
        return sum(self.weights[v] for v in vertices)

    def independent(self, vertices: Iterable[int]) -> bool:
        """Whether no two of ``vertices`` are in conflict (a valid plan, Def. 7)."""
        mask = 0
        for v in vertices:
            if self.adj[v] & mask or mask >> v & 1:
                return False
            mask |= 1 << v
        return True

    def components(self, within: int) -> list[int]:
        """The connected components of the vertices of ``within``, by lowest vertex."""
        out = []
        left = within
        while left:
            comp = frontier = left & -left
            while frontier:
                reach = 0
                for v in members(frontier):
                    reach |= self.adj[v]
                frontier = reach & left & ~comp
                comp |= frontier
            out.append(comp)
            left &= ~comp
        return out

    def to_dot(self) -> str:
        """The graph in Graphviz ``dot`` form: vertices labelled ``label: weight``."""
        lines = ["graph sharon {"]
        for v in range(self.n):
            text = str(self.labels[v]).replace('"', '\\"')
            lines.append(f'  v{v} [label="{text}: {self.weights[v]:g}"];')
        for a in range(self.n):
            for b in members(self.adj[a] >> (a + 1) << (a + 1)):
                lines.append(f"  v{a} -- v{b};")
        lines.append("}")
        return "\n".join(lines)


def members(mask: int) -> list[int]:
    """The vertices of a bit mask, in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def gwmin_bound(g: Graph, within: int | None = None) -> float:
    """Eq. 10: the weight GWMIN is guaranteed to reach on the vertices of ``within``."""
    mask = g.all if within is None else within
    return sum(g.weights[v] / (g.degree(v, mask) + 1) for v in members(mask))


def gwmin(g: Graph, within: int | None = None) -> list[int]:
    """GWMIN's independent set on the vertices of ``within``, in the order taken."""
    left = g.all if within is None else within
    w, adj = g.weights, g.adj
    out = []
    while left:
        best, ratio = -1, -1.0
        for v in members(left):
            r = w[v] / ((adj[v] & left).bit_count() + 1)
            if r > ratio:
                best, ratio = v, r
        out.append(best)
        left &= ~(adj[best] | 1 << best)
    return out


@dataclass(frozen=True)
class Reduction:
    """Algorithm 11's result: the vertices left to search, the conflict-free ones (in every
    optimal plan) and the conflict-ridden ones (in none), and the bound used."""

    remaining: tuple[int, ...]
    conflict_free: tuple[int, ...]
    conflict_ridden: tuple[int, ...]
    bound: float


def reduce(g: Graph, bound: float | None = None) -> Reduction:
    """Algorithm 11 on the whole graph with ``bound`` (default Eq. 10 on the whole graph)."""
    bound = gwmin_bound(g) if bound is None else bound
    left = g.all
    free: list[int] = []
    ridden: list[int] = []
    free_weight = 0.0
    changed = True
    while changed:
        changed = False
        total = free_weight + g.weight(members(left))
        for v in members(left):
            if not left >> v & 1:
                continue
            if not g.adj[v] & left:
                free.append(v)
                free_weight += g.weights[v]
                left &= ~(1 << v)
                changed = True
                continue
            score_max = total - g.weight(members(g.adj[v] & left))
            if score_max < bound - TOLERANCE * max(1.0, abs(bound)):
                ridden.append(v)
                left &= ~(1 << v)
                total -= g.weights[v]
                changed = True
    return Reduction(tuple(members(left)), tuple(sorted(free)), tuple(sorted(ridden)), bound)
