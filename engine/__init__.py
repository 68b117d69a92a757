"""The trendlake runtime: executes a plan over time-ordered events.

``evaluate(plan, events)`` partitions the events per query by its group-by
and equivalence attributes, runs the chosen strategy on each partition and
returns one result row per (query, group, window) with at least one trend.
The engine reads only the plan JSON (docs/plan-format.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from trendlake.engine.events import Event, format_ts, partition, read_events
from trendlake.engine.plan import Plan, PlanError, load_plan
from trendlake.engine.query import CompiledQuery, Unsupported
from trendlake.engine.results import CAP, OVERFLOW, WindowResult, finalize, merge_into

__all__ = [
    "CAP",
    "OVERFLOW",
    "Event",
    "Plan",
    "PlanError",
    "Unsupported",
    "STRATEGIES",
    "evaluate",
    "evaluate_partials",
    "evaluate_query",
    "finish_query",
    "format_ts",
    "load_plan",
    "read_events",
    "strategy_for",
]

Runner = Callable[[CompiledQuery, list[Event]], dict[int, WindowResult]]


def _loader(module: str) -> Callable[[], Runner]:
    def load() -> Runner:
        return importlib.import_module(module).run

    return load


# strategy name -> loader of its ``run(query, events) -> {window index: WindowResult}``
STRATEGIES: dict[str, Callable[[], Runner]] = {
    "twostep": _loader("trendlake.engine.strategies.reference"),
    "greta": _loader("trendlake.engine.strategies.greta"),
    "cogra": _loader("trendlake.engine.strategies.cogra"),
}


def strategy_for(query: CompiledQuery, strategy: str) -> str:
    """The concrete strategy for ``query``: ``auto`` follows the plan's granularity."""
    if strategy != "auto":
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r} (use auto, {', '.join(sorted(STRATEGIES))})")
        return strategy
    if query.granularity in ("type", "mixed", "pattern") and "cogra" in STRATEGIES:
        return "cogra"
    return "greta"


def _runner(name: str) -> Runner:
    if name not in STRATEGIES:
        raise ValueError(f"strategy {name!r} is not available in this build")
    return STRATEGIES[name]()


Partials = dict[tuple[tuple[Any, ...], int], WindowResult]


def query_partials(
    query: CompiledQuery,
    events: Iterable[Event],
    strategy: str = "auto",
    parts: dict[tuple[Any, ...], list[Event]] | None = None,
) -> Partials:
    """Unfinalized results of one query: (group values, window index) -> state.

    The stream is split into partitions by the equivalence and group-by
    attributes (DESIGN §5); the states of partitions with the same group-by
    values are merged, so there is one entry per (group, window).
    """
    name = strategy_for(query, strategy)
    run = _runner(name)
    positions = [query.partition_by.index(g) for g in query.group_by]
    out: Partials = {}
    if parts is None:
        parts = partition(events, query.partition_by)
    for key, part in parts.items():
        try:
            results = run(query, part)
        except Unsupported:
            if strategy != "auto":
                raise
            # the general event-grained strategy evaluates every query
            run = _runner("greta")
            results = run(query, part)
        group = tuple(key[i] for i in positions)
        for k, result in results.items():
            if result.trends:
                merge_into(out, (group, k), result)
    return out


def finish_query(query: CompiledQuery, partials: Partials) -> list[dict[str, Any]]:
    """Result rows (DESIGN §5) of merged partial results, sorted by group and window."""
    rows = []
    for (group, k), result in partials.items():
        if not result.trends:
            continue
        start, end = query.window_bounds(k)
        row: dict[str, Any] = {"query": query.name}
        row.update(zip(query.group_by, group, strict=True))
        row["window_start"] = start
        row["window_end"] = end
        row.update(finalize(query, result))
        rows.append(row)
    rows.sort(key=lambda r: (tuple(_sortable(r.get(g)) for g in query.group_by), r["window_start"]))
    return rows


def evaluate_query(
    query: CompiledQuery, events: Iterable[Event], strategy: str = "auto"
) -> list[dict[str, Any]]:
    """Result rows of one query over a time-ordered event list (all partitions)."""
    return finish_query(query, query_partials(query, events, strategy))


def evaluate_partials(
    plan: Plan,
    events: Iterable[Event],
    *,
    strategy: str = "auto",
    queries: Iterable[str] | None = None,
) -> dict[str, Partials]:
    """Unfinalized results per query of ``plan``, to be merged across event sets
    holding disjoint partitions (``results.merge``) and finished with
    ``finish_query``; this is how distributed replay combines its partitions."""
    events = list(events)
    wanted = list(plan.queries) if queries is None else list(queries)
    out: dict[str, Partials] = {}
    split: dict[tuple[str, ...], dict[tuple[Any, ...], list[Event]]] = {}  # once per partition key
    for name in wanted:
        if name not in plan.queries:
            raise PlanError(f"plan has no query {name!r}")
        query = plan.queries[name]
        if query.partition_by not in split:
            split[query.partition_by] = partition(events, query.partition_by)
        out[name] = query_partials(query, events, strategy, split[query.partition_by])
    return out


def evaluate(
    plan: Plan | dict[str, Any] | str | Path,
    events: Iterable[Event],
    *,
    workload_hash: str | None = None,
    strategy: str = "auto",
    queries: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """Run every query of ``plan`` (or the named ones) over ``events``.

    Rows come out per query in plan order, then by group and window start.
    """
    if not isinstance(plan, Plan):
        plan = load_plan(plan, workload_hash)
    elif workload_hash is not None and plan.workload_hash != workload_hash:
        plan = load_plan(plan.raw, workload_hash)
    rows: list[dict[str, Any]] = []
    for name, partials in evaluate_partials(plan, events, strategy=strategy, queries=queries).items():
        rows.extend(finish_query(plan.queries[name], partials))
    return rows


def _sortable(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))
