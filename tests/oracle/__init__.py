"""An independent reference for trend aggregation, for tests only.

It follows DESIGN §5 by brute force and shares no code with ``trendlake.engine``
nor with the optimizer's analysis (templates, predicate classes): the pattern
comes from the parsed AST (``optimizer.parse_workload``), the predicates from
the plan's raw expression IR, and everything else -- partitions, windows,
negation, the three semantics, aggregation -- is written here.

    rows = [{"type": "A", "ts": 1, "x": 5}, ...]      # ts in integer seconds
    evaluate(workload_text, rows) -> result rows as the engine's (docs/plan-format.md)

Values too large for a decimal(38,0) column are the string ``"OVERFLOW"``.
"""

from __future__ import annotations

from typing import Any

from tests.oracle.expr import holds, value
from tests.oracle.semantics import Query, TooManyTrends, evaluate_query
from trendlake import optimizer

__all__ = ["Query", "TooManyTrends", "evaluate", "holds", "queries", "value"]


def queries(text: str, plan: dict[str, Any] | None = None) -> list[Query]:
    """The oracle's queries of a workload (plan: the plan JSON, else the optimizer's)."""
    workload = optimizer.compile_workload(text)
    plan = plan or optimizer.build_plan(workload)
    specs = {q["name"]: q for q in plan["queries"]}
    return [Query.of(q, specs[q.name]) for q in workload.queries]


def evaluate(text: str, rows: list[dict[str, Any]], budget: int = 200_000) -> list[dict[str, Any]]:
    """Result rows of every query of the workload, per query in workload order."""
    out: list[dict[str, Any]] = []
    for q in queries(text):
        out.extend(evaluate_query(q, rows, budget))
    return out
