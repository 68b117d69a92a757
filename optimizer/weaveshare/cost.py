"""The Weave Share cost model (Eq. 1-5) and the cost look-up table (§8).

Costs are aggregate operations per time unit (per second in the paper, per µs on µs
times), for an input rate ``lambda`` of events per time unit:

* **Tree** (Eq. 1): ``C(t) = lambda + E_t * Omega_t`` -- every input event is
  sub-aggregated once into the current fragment (partial aggregation), and every fragment
  the tree produces (``E_t`` per time unit, ``edges.EdgeBitmap.rate``) is final-aggregated
  ``Omega_t`` times;
* **Overlap factor** (Eq. 2): ``Omega_t = sum over the tree's queries of omega_q``,
  ``omega_q = r_q / s_q`` (§6: the range is the overlap factor times the slide);
* **Plan** (Eq. 3): the sum over its trees;
* **Merge benefit** (Eq. 5): merging ``t_x`` and ``t_y`` saves
  ``lambda + E_x * Omega_x + E_y * Omega_y - E_xy * (Omega_x + Omega_y)`` -- the input is
  sub-aggregated once instead of twice, and both trees' queries now final-aggregate the
  merged tree's fragments.

Example 2 with these: two queries of edge rates 2/9 and 2/6 have a final-aggregation cost
of 0.55 per second each counted once; shared, each examines ``E_ab = 8/18`` (0.88 for both).
Example 3 (ranges 16, 10, 8, slides 4, 5, 4) gives ``2*lambda + 1.9`` for ``{a, c}, {b}``
and ``lambda + 3.2`` for one tree: the paper's 4.3 and 4.4 at ``lambda = 1.2`` (its rate
did not survive; its 11.6 for no sharing, ``3*lambda + 1.9``, is not consistent with them).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from trendlake.optimizer.weaveshare.edges import DEFAULT_MAX_COMPOSITE, EdgeBitmap
from trendlake.optimizer.weaveshare.model import Query, check_rate, grain

__all__ = ["CostTable", "Model", "TreeState", "merge_benefit", "overlap_factor"]


def overlap_factor(queries: Iterable[Query]) -> Fraction:
    """``Omega`` (Eq. 2): the sum of the queries' ``r / s``."""
    return sum((q.overlap for q in queries), Fraction(0))


@dataclass(frozen=True)
class Model:
    """What costs depend on: the input rate, the grain of edge positions (time units per
    grain) and the largest composite slide a tree may have (grains)."""

    rate: float
    grain: int = 1
    limit: int = DEFAULT_MAX_COMPOSITE

    @classmethod
    def of(cls, queries: Iterable[Query], rate: float,
           limit: int = DEFAULT_MAX_COMPOSITE) -> Model:
        return cls(check_rate(rate), grain(queries), limit)

    def edge_rate(self, edges: EdgeBitmap) -> float:
        """Edges per time unit."""
        return edges.count / (edges.length * self.grain)

    def cost(self, edges: EdgeBitmap, omega: float) -> float:
        """Eq. 1."""
        return self.rate + self.edge_rate(edges) * omega


@dataclass(frozen=True)
class TreeState:
    """A tree during the search: its queries, edges, overlap factor and cost (Eq. 1)."""

    queries: tuple[Query, ...]
    edges: EdgeBitmap
    omega: float
    cost: float

    @classmethod
    def of(cls, model: Model, queries: Iterable[Query]) -> TreeState:
        qs = tuple(queries)
        edges = EdgeBitmap.of_queries(qs, model.grain, model.limit)
        omega = float(overlap_factor(qs))
        return cls(qs, edges, omega, model.cost(edges, omega))

    def merge(self, model: Model, other: TreeState) -> TreeState:
        """The tree of both trees' queries (``OptimizerError`` above the composite limit)."""
        edges = self.edges.union(other.edges, model.limit)
        omega = self.omega + other.omega
        return TreeState(self.queries + other.queries, edges, omega, model.cost(edges, omega))


def merge_benefit(model: Model, x: TreeState, y: TreeState) -> float | None:
    """Eq. 5: the cost reduction of merging ``x`` and ``y`` (negative: the merge costs
    more), or None when the merged composite slide exceeds the model's limit."""
    counted = x.edges.merged_count(y.edges, model.limit)
    if counted is None:
        return None
    length, count = counted
    e_xy = count / (length * model.grain)
    return x.cost + y.cost - (model.rate + e_xy * (x.omega + y.omega))


class CostTable:
    """§8's *Cost Lookup* table: the benefit of merging each pair of live trees, computed
    once per pair; a merged tree's row is computed when it is added, the rows of the
    trees it replaced are dropped. ``best()`` is the pair of largest benefit (ties: the
    pair of oldest trees), kept in a heap with lazy deletion."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.trees: dict[int, TreeState] = {}
        self.benefit: dict[tuple[int, int], float] = {}
        self._heap: list[tuple[float, int, int]] = []
        self._next = 0
        self.evaluated = 0

    def add(self, tree: TreeState) -> int:
        """Add a tree, compute its row; its id."""
        new = self._next
        self._next += 1
        for old, t in self.trees.items():
            b = merge_benefit(self.model, t, tree)
            self.evaluated += 1
            if b is not None:
                self.benefit[(old, new)] = b
                heapq.heappush(self._heap, (-b, old, new))
        self.trees[new] = tree
        return new

    def remove(self, tid: int) -> TreeState:
        """Drop a tree and its row."""
        tree = self.trees.pop(tid)
        for other in self.trees:
            self.benefit.pop((min(tid, other), max(tid, other)), None)
        return tree

    def best(self) -> tuple[int, int, float] | None:
        """The live pair of largest benefit, or None when no pair can merge."""
        heap = self._heap
        while heap:
            neg, i, j = heap[0]
            if i in self.trees and j in self.trees:
                return i, j, -neg
            heapq.heappop(heap)
        return None
