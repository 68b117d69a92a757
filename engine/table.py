"""Former home of the columnar executor, kept for callers that import from here;
the executor is ``engine.executor`` (``engine.evaluate_partials``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from trendlake.engine.executor import (
    Partials,
    evaluate_partials,
    mandatory_variables,
    referenced_attributes,
)
from trendlake.engine.plan import Plan
from trendlake.engine.timeline import key_runs

__all__ = ["evaluate_table_partials", "key_runs", "mandatory_variables", "referenced_attributes"]


def evaluate_table_partials(
    plan: Plan,
    table: Any,
    *,
    queries: Iterable[str] | None = None,
    strategy: str = "auto",
    sorted_by: Sequence[str] | None = None,
) -> dict[str, Partials]:
    """``engine.evaluate_partials`` under its former name."""
    return evaluate_partials(plan, table, queries=queries, strategy=strategy, sorted_by=sorted_by)
