"""The result of a GLORIA planner: a workload sharing plan (Def. 2.7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["QSet", "SearchStats", "TransitionPlan", "WorkloadPlan"]


@dataclass(frozen=True)
class QSet:
    """Queries that share a transition, with the event type of their snapshots; a query
    not shared on the transition is a Q-set of its own with ``snapshot`` None."""

    queries: tuple[str, ...]
    snapshot: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"queries": list(self.queries), "snapshot": self.snapshot}


@dataclass(frozen=True)
class TransitionPlan:
    """The transition sharing plan (Def. 2.6) of one transition ``source -> target`` (event
    types) of one unit (``unit``: ``A>B``, a Kleene cycle ``K[A>B,B>A]`` or ``alone:q``)."""

    source: str
    target: str
    unit: str
    qsets: tuple[QSet, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, "unit": self.unit,
                "qsets": [q.to_dict() for q in self.qsets]}


@dataclass(frozen=True)
class SearchStats:
    """What the search did: nodes and edges generated and pruned, the case of Algorithm 1,
    and whether the pool graph was a forest (then the plan is optimal in GLORIA's space)."""

    nodes_generated: int
    nodes_pruned: int
    edges_generated: int
    edges_pruned: int
    case: int
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class WorkloadPlan:
    """A workload sharing plan: every transition of every query covered once."""

    planner: str
    transitions: tuple[TransitionPlan, ...]
    cost: float
    non_shared_cost: float
    stats: SearchStats

    def by_unit(self) -> dict[str, tuple[tuple[frozenset[str], str], ...]]:
        """The shared Q-sets per unit, the form ``cost.plan_cost`` and ``cost.validate`` take."""
        out: dict[str, tuple[tuple[frozenset[str], str], ...]] = {}
        for t in self.transitions:
            out.setdefault(t.unit, tuple((frozenset(q.queries), q.snapshot) for q in t.qsets
                                         if q.snapshot is not None))
        return out

    def shared(self) -> tuple[TransitionPlan, ...]:
        """The transitions on which some queries share."""
        return tuple(t for t in self.transitions if any(q.snapshot is not None for q in t.qsets))

    def to_dict(self) -> dict[str, Any]:
        return {"planner": self.planner, "cost": self.cost, "non_shared_cost": self.non_shared_cost,
                "transitions": [t.to_dict() for t in self.transitions], "stats": self.stats.to_dict()}
