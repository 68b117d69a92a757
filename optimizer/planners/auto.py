"""The ``auto`` planner: every applicable costed planner's plan estimated, the cheapest kept.

``CONSIDERED`` lists the planners ``auto`` compares (each kind's costed
planners join it as they land). Each one plans the workload from the same
entries, candidates and statistics; its plan's estimate is
``optimizer.cost.plan_cost``. Planners of different kinds share different
queries, so ``auto`` also combines them: every group any of them formed,
largest estimated saving first, each kept when none of its queries is in a
group kept before (``hamlet+gloria`` when groups of both are kept). The
cheapest of these plans wins; on equal estimates the earlier in
``CONSIDERED`` (``none`` first: the plan with the fewest moving parts), a
combination only when strictly cheaper than each planner alone. Every other
plan is recorded in the plan's ``alternatives`` with its estimate and why it
lost (more expensive, or could not plan: its error). Without statistics
nothing can be estimated and ``auto`` is ``none``, which it says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trendlake.optimizer.candidates import Candidates
from trendlake.optimizer.cost import plan_cost
from trendlake.optimizer.errors import OptimizerError

__all__ = ["CONSIDERED", "Choice", "choose", "plan"]

CONSIDERED = ("none", "hamlet", "hamlet-static", "gloria", "sharon", "shared-panes", "weaveshare")


@dataclass
class Choice:
    """The planner ``auto`` chose, its groups and estimate, and the alternatives it rejected."""

    planner: str
    groups: list[dict[str, Any]]
    estimated_cost: float | None
    alternatives: list[dict[str, Any]] = field(default_factory=list)


def choose(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> Choice:
    """Plan with every planner of ``CONSIDERED`` and keep the cheapest (see the module doc)."""
    from trendlake.optimizer.planners import PLANNERS

    if statistics is None:
        return Choice("none", [], None, [
            {"planner": p, "estimated_cost": None, "reason": "no statistics: plans cannot be estimated"}
            for p in CONSIDERED if p != "none"])
    tried: list[tuple[str, list[dict[str, Any]] | None, float | None, str | None]] = []
    for name in CONSIDERED:
        try:
            groups = PLANNERS[name](entries, candidates, statistics)
        except OptimizerError as err:
            tried.append((name, None, None, str(err)))
            continue
        cost, _ = plan_cost(entries, groups, statistics)
        tried.append((name, groups, cost, None))
    combined = _combined(tried)
    if combined is not None:
        names, groups = combined
        cost, _ = plan_cost(entries, groups, statistics)
        tried.append(("+".join(names), groups, cost, None))
    costed = [(cost, i) for i, (_, groups, cost, _) in enumerate(tried) if cost is not None]
    best_cost, best = min(costed)
    name, groups, _, _ = tried[best]
    assert groups is not None
    alternatives = []
    for other, _, cost, error in tried:
        if other == name:
            continue
        if error is not None:
            reason = f"could not plan: {error}"
        elif cost is not None and cost > best_cost:
            ratio = cost / best_cost if best_cost > 0 else float("inf")
            reason = f"estimated {ratio:.2f}x the cost of {name}"
        else:
            reason = f"estimated the same cost as {name}, which comes first"
        alternatives.append({"planner": other, "estimated_cost": None if cost is None else round(cost, 6),
                             "reason": reason})
    return Choice(name, groups, round(best_cost, 6), alternatives)


def _combined(
    tried: list[tuple[str, list[dict[str, Any]] | None, float | None, str | None]],
) -> tuple[list[str], list[dict[str, Any]]] | None:
    """The groups of every planner, largest estimated saving first, each kept when its queries
    are in no group kept before; with the planners whose groups were kept. None unless groups
    of two or more planners are kept (else it is one planner's plan, or less)."""
    offered = [(g["estimated_cost"]["non_shared"] - g["estimated_cost"]["shared"], i, name, g)
               for i, (name, groups, _, _) in enumerate(tried) for g in groups or []]
    offered.sort(key=lambda x: (-x[0], x[1]))
    taken: set[str] = set()
    kept: list[tuple[str, dict[str, Any]]] = []
    for saving, _, name, g in offered:
        if saving > 0 and not taken & set(g["queries"]):
            kept.append((name, g))
            taken.update(g["queries"])
    names = list(dict.fromkeys(name for name, _ in kept))
    if len(names) < 2:
        return None
    return names, [dict(g) for _, g in kept]


def plan(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """The groups of the plan ``choose`` keeps."""
    return choose(entries, candidates, statistics).groups
