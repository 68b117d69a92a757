"""The result of a Sharon search: the chosen candidates (a valid sharing plan, Def. 7)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["SearchStats", "Shared", "SharingPlan"]


@dataclass(frozen=True)
class Shared:
    """One chosen candidate: ``pattern`` (event types) shared by ``queries``, starting at
    ``positions[i]`` in ``queries[i]`` (0-based index of the pattern's first type in the
    query's pattern), with its benefit (Eq. 8). ``candidate`` is the candidate's id (an
    option's id names its queries); ``origin`` the candidate an option was expanded from."""

    candidate: str
    pattern: tuple[str, ...]
    queries: tuple[str, ...]
    positions: tuple[int, ...]
    benefit: float
    origin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "pattern": list(self.pattern), "queries": list(self.queries),
                "positions": list(self.positions), "benefit": self.benefit, "origin": self.origin}


@dataclass(frozen=True)
class SearchStats:
    """What the search saw and did.

    ``candidates``: sharing candidates of the workload; ``vertices``/``edges``: the Sharon
    graph searched (beneficial candidates, or options with ``expand``); ``bound``: Eq. 10
    on it; ``conflict_free``/``conflict_ridden``: vertices the reduction took or removed
    (``sharon`` only); ``components``: connected parts of the reduced graph searched;
    ``plans``: plans generated (valid plans for ``sharon``, every subset for
    ``exhaustive``); ``exact``: whether the plan is an optimum of the graph (False for
    ``greedy``, and for ``sharon`` where a part fell back to GWMIN past the plan limit)."""

    search: str
    candidates: int
    vertices: int
    edges: int
    bound: float
    conflict_free: int
    conflict_ridden: int
    components: int
    plans: int
    nodes: int
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SharingPlan:
    """The chosen candidates, their score (Def. 8: the sum of their benefits) and the cost
    of computing every query of the model alone (Eq. 2 summed), both per window."""

    shared: tuple[Shared, ...]
    score: float
    non_shared_cost: float
    stats: SearchStats
    # the Sharon graph searched: its vertices' candidates, their benefits, the conflicts as
    # neighbour bit masks and the chosen vertices (``graph_dict``)
    vertices: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    weights: tuple[float, ...] = field(default=(), repr=False, compare=False)
    adjacency: tuple[int, ...] = field(default=(), repr=False, compare=False)
    chosen: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def by_query(self) -> dict[str, list[tuple[int, int, str]]]:
        """Query -> its shared parts as (first position, length, candidate id), in order."""
        out: dict[str, list[tuple[int, int, str]]] = {}
        for s in self.shared:
            for q, m in zip(s.queries, s.positions, strict=True):
                out.setdefault(q, []).append((m, len(s.pattern), s.candidate))
        return {q: sorted(parts) for q, parts in out.items()}

    def graph_dict(self, limit: int = 40) -> dict[str, Any]:
        """The Sharon graph searched, for a picture: at most ``limit`` vertices, the chosen ones
        first, then those in conflict with a chosen one, then the others, each by benefit
        (largest first); each vertex's candidate id, pattern, queries, benefit and whether it was
        chosen; the conflicts among them as index pairs; the whole graph's sizes."""
        near = 0
        for v in self.chosen:
            near |= self.adjacency[v]
        chosen = set(self.chosen)
        order = sorted(range(len(self.vertices)),
                       key=lambda v: (v not in chosen, not near >> v & 1, -self.weights[v], v))[:max(0, limit)]
        index = {v: i for i, v in enumerate(order)}
        vertices = [{"candidate": c.id, "pattern": list(c.pattern), "queries": list(c.queries),
                     "benefit": round(self.weights[v], 6), "chosen": v in chosen}
                    for v in order for c in [self.vertices[v]]]
        edges = [[index[a], index[b]] for a in order for b in order
                 if a < b and self.adjacency[a] >> b & 1]
        total = sum(m.bit_count() for m in self.adjacency) // 2
        return {"vertices": vertices, "edges": edges, "vertices_total": len(self.vertices), "edges_total": total}

    def to_dict(self) -> dict[str, Any]:
        return {"shared": [s.to_dict() for s in self.shared], "score": self.score,
                "non_shared_cost": self.non_shared_cost, "stats": self.stats.to_dict()}
