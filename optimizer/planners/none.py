"""The ``none`` planner: every query runs alone, nothing is shared."""

from __future__ import annotations

from typing import Any

from trendlake.optimizer import ast
from trendlake.optimizer.statistics import Statistics


def plan(workload: ast.Workload, statistics: Statistics | None = None) -> dict[str, Any]:
    """No sharing and no cost estimate."""
    return {"sharing": [], "estimated_cost": None, "alternatives": []}
