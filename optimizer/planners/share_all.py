"""The ``share-all`` planner: every candidate shared, whatever it costs.

For measuring and testing the shared executors themselves (the costed
planners decide with ``optimizer.cost``): the candidates of every kind, in
the order found (largest first), a query in at most one group, each group
statically decided (``Candidate.forced_group``). Needs no statistics; its
groups carry no cost estimate (0, 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trendlake.optimizer.candidates import Candidates, find

__all__ = ["every_sharable_set", "plan"]


def plan(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Every sharable set of the queries as a group."""
    groups: list[dict[str, Any]] = []
    taken: set[str] = set()
    for found in candidates.values():
        for cand in found:
            members = [q for q in cand.queries if q not in taken]
            if len(members) >= 2:
                groups.append(cand.forced_group(entries, members))
                taken.update(members)
    return groups


def every_sharable_set(entries: Sequence[dict[str, Any]], decision: str = "static") -> list[dict[str, Any]]:
    """The groups of ``plan`` for a plan's query entries, numbered ``g0``, ``g1``, ... and
    decided per burst (``decision`` dynamic) or statically, where the kind decides per burst."""
    by_name = {e["name"]: e for e in entries}
    groups = plan(by_name, find(by_name), None)
    for i, g in enumerate(groups):
        g["id"] = f"g{i}"
        if "decision" in g["body"]:
            g["body"]["decision"] = decision
    return groups
