"""The ``share-all`` planner: every candidate shared, whatever it costs.

For measuring and testing the shared executors themselves (the costed
planners decide with ``optimizer.cost``): for each kind, its candidates in
the order found (largest first), a query in at most one group. Needs no
statistics; its groups carry no cost estimate (0, 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trendlake.optimizer.candidates import Candidates, kleene
from trendlake.optimizer.cost import CLASS_UPDATE_COST, PYTHON_SNAPSHOT_COST, SNAPSHOT_COST
from trendlake.optimizer.planners.hamlet import counts_only

__all__ = ["every_sharable_set", "plan"]


def plan(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Every sharable set of the queries as a group, statically decided."""
    return _groups(entries, candidates, "static")


def every_sharable_set(entries: Sequence[dict[str, Any]], decision: str = "static") -> list[dict[str, Any]]:
    """The groups of ``plan`` for a plan's query entries, numbered ``g0``, ``g1``, ... and
    decided per burst (``decision`` dynamic) or statically."""
    by_name = {e["name"]: e for e in entries}
    groups = _groups(by_name, {kleene.KIND: kleene.candidates(list(entries))}, decision)
    for i, g in enumerate(groups):
        g["id"] = f"g{i}"
    return groups


def _groups(entries: Mapping[str, dict[str, Any]], candidates: Candidates, decision: str) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = []
    taken: set[str] = set()
    for cand in candidates.get(kleene.KIND, []):
        members = {q: v for q, v in cand.variables.items() if q not in taken}
        if len(members) < 2:
            continue
        if not cand.graph and all(counts_only(entries[q]) for q in members):  # the compiled pass
            parameters = {"snapshot_cost": SNAPSHOT_COST, "class_update_cost": CLASS_UPDATE_COST}
        else:
            parameters = {"snapshot_cost": PYTHON_SNAPSHOT_COST}
        groups.append(kleene.group(
            entries, members, cand.type, graph=cand.graph, decision=decision, same_predicates=False,
            parameters=parameters, estimated_cost=(0.0, 0.0),
        ))
        taken.update(members)
    return groups
