"""Planner registry: ``PLANNERS[name](workload, statistics) -> dict``.

``statistics`` is the checked view ``optimizer.statistics.Statistics`` (or None): planners
read it through its accessors (``events_per_window``, ``mean_burst``, ``steps_per_window``,
``selectivity_of``, ``partitions``; ``optimizer.cost.rates_for``), never the document.

A planner returns ``{"sharing": [...], "estimated_cost": number | None,
"alternatives": [{"planner", "estimated_cost"}, ...]}``; ``build_plan`` puts
these into the plan next to the per-query entries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trendlake.optimizer import ast
from trendlake.optimizer.planners import hamlet, none
from trendlake.optimizer.statistics import Statistics

Planner = Callable[[ast.Workload, "Statistics | None"], dict[str, Any]]

PLANNERS: dict[str, Planner] = {
    "none": none.plan,
    "hamlet": hamlet.plan_dynamic,
    "hamlet-static": hamlet.plan_static,
}


def get_planner(name: str) -> Planner:
    """The registered planner ``name``; ValueError naming the known ones otherwise."""
    try:
        return PLANNERS[name]
    except KeyError:
        raise ValueError(f"unknown planner {name!r} (known: {', '.join(sorted(PLANNERS))})") from None
