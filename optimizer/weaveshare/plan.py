"""The result of Weave Share: execution trees, the steps that built them, and the
incremental outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trendlake.optimizer.weaveshare.cost import Model, TreeState
from trendlake.optimizer.weaveshare.model import Query

__all__ = ["Incremental", "Merge", "Tree", "WeavePlan"]


@dataclass(frozen=True)
class Tree:
    """An execution tree: its queries (in the order they joined), its composite slide and
    its edges as positions of ``(0, composite_slide]`` (time units), its edge rate (edges
    per time unit), overlap factor ``Omega`` and cost (Eq. 1, operations per time unit)."""

    queries: tuple[Query, ...]
    composite_slide: int
    edges: tuple[int, ...]
    edge_rate: float
    overlap: float
    cost: float

    @classmethod
    def of(cls, model: Model, state: TreeState) -> Tree:
        g = model.grain
        return cls(state.queries, state.edges.length * g,
                   tuple(p * g for p in state.edges.positions()),
                   model.edge_rate(state.edges), state.omega, state.cost)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(q.name for q in self.queries)

    def to_dict(self) -> dict[str, Any]:
        return {"queries": [q.to_dict() for q in self.queries],
                "composite_slide": self.composite_slide, "edges": list(self.edges),
                "edge_rate": self.edge_rate, "overlap": self.overlap, "cost": self.cost}


@dataclass(frozen=True)
class Merge:
    """One merge of the greedy loop: the two trees' queries, the benefit (Eq. 5) and the
    plan's cost after it."""

    left: tuple[str, ...]
    right: tuple[str, ...]
    benefit: float
    cost: float


@dataclass(frozen=True)
class WeavePlan:
    """A plan: its trees (every query in exactly one), its cost (Eq. 3), the cost of the
    plan it started from, the merges made and the pair benefits evaluated."""

    planner: str
    trees: tuple[Tree, ...]
    cost: float
    start_cost: float
    merges: tuple[Merge, ...]
    evaluated: int

    def groups(self) -> list[list[str]]:
        return [list(t.names) for t in self.trees]

    def to_dict(self) -> dict[str, Any]:
        return {"planner": self.planner, "cost": self.cost, "start_cost": self.start_cost,
                "trees": [t.to_dict() for t in self.trees],
                "merges": [m.__dict__ for m in self.merges], "evaluated": self.evaluated}


@dataclass(frozen=True)
class Incremental:
    """The outcome of weaving a changed query set into a stored plan: the plan returned
    (the woven one, or the from-scratch one when ``replanned``), the woven plan's cost,
    the reference it was compared with and their relative deviation."""

    plan: WeavePlan
    replanned: bool
    woven_cost: float
    reference_cost: float
    deviation: float
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def trees(self) -> tuple[Tree, ...]:
        return self.plan.trees
