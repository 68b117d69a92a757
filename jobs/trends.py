"""``trendlake trends``: the trends behind one result row, from a local event file (no Spark).

The job behind ``jobs/cli/trends.py``: compile the workload, read the events the query
needs, list the windows with their ``COUNT(*)`` or construct the trends of one (group,
window) with ``engine.trends.drill`` under a memory budget. Bad input raises
``BadInputError``; a window over the budget raises the engine's ``TrendsRefused``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import BadInputError

__all__ = ["ROW", "Request", "Window", "drill_file", "list_windows", "trend_row"]

ROW = "__row__"  # the 1-based data row of each event in its file (its id without --id)


@dataclass
class Request:
    workload: Path
    query: str
    events: Path
    stream: str | None = None
    group: tuple[str, ...] = ()  # K=V texts
    window_start: str | None = None
    complete: bool = True
    limit: int | None = None
    memory: int | None = None
    algorithm: str = "auto"
    optimizer: str = "branch-and-bound"
    id_column: str | None = None


@dataclass
class Window:
    """One window of the query with its ``COUNT(*)``."""

    query: str
    group: dict[str, Any]
    start: int
    end: int
    count: int


def _load(req: Request) -> tuple[Any, list[Any]]:
    """The compiled query and the events of the file."""
    import pyarrow as pa
    from trendlake.engine.columns import events_from_arrow
    from trendlake.jobs.evaluate import compile_plan, load_schema, read_event_file

    from trendlake import engine

    plan, whash = compile_plan(req.workload, req.stream)
    loaded = engine.load_plan(plan, workload_hash=whash)
    if req.query not in loaded.queries:
        raise BadInputError(f"--query: no query {req.query!r} in {req.workload} (queries: {', '.join(loaded.queries)})")
    schema = load_schema(req.stream) if req.stream else None
    columns = set(engine.columns_needed(loaded, [req.query]))
    if req.id_column is not None:
        columns.add(req.id_column)
    table = read_event_file(req.events, schema, columns)
    if req.id_column is not None and req.id_column not in table.column_names:
        raise BadInputError(f"--id: {req.events} has no column {req.id_column!r}")
    table = table.append_column(ROW, pa.array(range(1, table.num_rows + 1), pa.int64()))
    ts = table.column("ts").cast(pa.timestamp("us", tz="UTC"))  # µs integers (engine.read_events)
    table = table.set_column(table.column_names.index("ts"), "ts", ts)
    return loaded.queries[req.query], events_from_arrow(table, where=str(req.events))


def _group_filter(q: Any, texts: tuple[str, ...]) -> dict[str, str]:
    """``--group K=V`` options as {attribute: value text}; keys must be GROUP-BY attributes."""
    out: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise BadInputError(f"--group: expected ATTRIBUTE=VALUE, got {text!r}")
        if key not in q.group_by:
            by = ", ".join(q.group_by) or "nothing"
            raise BadInputError(f"--group: query {q.name} groups by {by}, not {key!r}")
        out[key] = value
    return out


def _matches(q: Any, group: tuple[Any, ...], wanted: dict[str, str]) -> bool:
    return all(str(v) == wanted[a] for a, v in zip(q.group_by, group, strict=True) if a in wanted)


def list_windows(req: Request) -> list[Window]:
    """Every window of the query (of the ``--group`` given) with at least one trend."""
    from trendlake.engine.trends import window_counts

    q, events = _load(req)
    return _windows(q, window_counts(q, events), _group_filter(q, req.group))


def _windows(q: Any, counts: dict[Any, int], wanted: dict[str, str]) -> list[Window]:
    out = []
    for (group, k), count in sorted(counts.items(), key=lambda kv: (repr(kv[0][0]), kv[0][1])):
        if _matches(q, group, wanted):
            start, end = q.window_bounds(k)
            out.append(Window(q.name, dict(zip(q.group_by, group, strict=True)), start, end, count))
    return out


def drill_file(req: Request) -> Any:
    """The ``engine.trends.Drill`` of the window starting at ``req.window_start``."""
    from trendlake.engine.timeline import format_ts, parse_ts
    from trendlake.engine.trends import drill, window_counts

    q, events = _load(req)
    wanted = _group_filter(q, req.group)
    if set(wanted) != set(q.group_by):
        missing = [a for a in q.group_by if a not in wanted]
        raise BadInputError(f"--group: query {q.name} groups by {', '.join(q.group_by)}; give "
                            + " ".join(f"--group {a}=VALUE" for a in missing))
    start = parse_ts(req.window_start)
    if start % q.slide:
        raise BadInputError(f"--window-start {req.window_start}: no window of query {q.name} starts then "
                            f"(windows start every {q.slide // 10**6} seconds from the epoch)")
    k = start // q.slide
    windows = [w for w in _windows(q, window_counts(q, events), wanted)]
    groups = {tuple(w.group.values()) for w in windows}
    if not groups:
        raise BadInputError(f"query {q.name} has no trend in the group {wanted}")
    group = next(iter(groups)) if len(groups) == 1 else None
    if group is None:
        raise BadInputError(f"--group {wanted} names {len(groups)} groups of query {q.name}")
    if not any(w.start == start for w in windows):
        raise BadInputError(f"the window of query {q.name} starting {format_ts(start)} has no trend in "
                            f"the group {wanted} (without --window-start the windows with trends are listed)")
    return drill(q, events, group, k, complete=req.complete, algorithm=req.algorithm, memory=req.memory,
                 limit=req.limit, optimizer=req.optimizer)


def trend_row(d: Any, number: int, trend: Any, id_column: str | None) -> dict[str, Any]:
    """One output record of a trend: the row's keys, its number and its events."""
    from trendlake.engine.timeline import format_ts

    row: dict[str, Any] = {"query": d.query.name}
    row.update(zip(d.query.group_by, d.group, strict=True))
    row["window_start"], row["window_end"] = format_ts(d.window[0]), format_ts(d.window[1])
    row["trend"] = number
    row["events"] = [
        {"id": e.attrs.get(id_column) if id_column else e.attrs[ROW], "type": e.type, "variable": var, "ts": format_ts(e.ts)}
        for e, var in trend
    ]
    return row
