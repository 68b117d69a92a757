"""The ``none`` planner: every query runs alone, nothing is shared."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trendlake.optimizer.candidates import Candidates


def plan(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """No groups."""
    return []
