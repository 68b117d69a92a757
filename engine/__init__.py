"""trendlake's runtime: executes a plan over time-ordered events of many partitions.

``evaluate(plan, data)`` is the one entry: ``data`` is a pyarrow Table (or an
iterable of record batches) of events; per query the events are split by its
group-by and equivalence attributes and evaluated by the strategy the plan
(or ``strategy=``) chooses; one result row per (query, group, window) with at
least one trend. ``evaluate_partials`` / ``finish`` split this in two for
replay's executors. The engine reads only the plan JSON (docs/plan-format.md);
its design is described in docs/engine.md.
"""

from __future__ import annotations

from trendlake.engine.columns import Event, table_from_events, table_from_rows
from trendlake.engine.errors import EngineError, EventFileError
from trendlake.engine.events import read_events
from trendlake.engine.executor import (
    Partials,
    columns_needed,
    evaluate,
    evaluate_partials,
    finish,
    finish_query,
)
from trendlake.engine.numbers import CAP
from trendlake.engine.plan import Plan, PlanError, check_plan, load_plan
from trendlake.engine.query import CompiledQuery, Unsupported
from trendlake.engine.results import OVERFLOW, WindowResult, finalize, merge
from trendlake.engine.strategies import STRATEGIES, Strategy, choose, strategy_for
from trendlake.engine.timeline import format_ts

__all__ = [
    "CAP",
    "OVERFLOW",
    "STRATEGIES",
    "CompiledQuery",
    "EngineError",
    "Event",
    "EventFileError",
    "Partials",
    "Plan",
    "PlanError",
    "Strategy",
    "Unsupported",
    "WindowResult",
    "check_plan",
    "choose",
    "columns_needed",
    "evaluate",
    "evaluate_partials",
    "finalize",
    "finish",
    "finish_query",
    "format_ts",
    "load_plan",
    "merge",
    "read_events",
    "strategy_for",
    "table_from_events",
    "table_from_rows",
]
