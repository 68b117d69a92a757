"""A workload on a local event file, no Spark: the job behind ``trendlake eval`` and ``plan``.

``compile_plan`` reads, checks and plans a workload file once (with the statistics
``planning_statistics`` chooses: a file, an assumption, or the evaluated events, through
``jobs.statistics``); ``read_event_file`` types a CSV, JSON-lines or Parquet file
(``engine.files``); ``evaluate_table`` runs the engine's one entry over it; ``json_line`` and
``print_table`` are the output forms (one JSON object or table row per (query, group, window)
with at least one trend); ``sharing_report`` is what each sharing group did.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def read_workload(path: Path) -> str:
    """The text of a workload file; a missing file, a directory or non-UTF-8 bytes are one-line errors."""
    from trendlake.optimizer.errors import OptimizerError

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise OptimizerError(f"no workload file {path}") from None
    except IsADirectoryError:
        raise OptimizerError(f"{path} is a directory, not a workload file (*.etq)") from None
    except PermissionError:
        raise OptimizerError(f"cannot read workload file {path}: permission denied") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise OptimizerError(f"{path}: not UTF-8 text (byte {err.start}, line {line}: {err.reason})") from None


def load_schema(stream: str) -> dict[str, Any]:
    """A stream schema by bundled name or JSON path; a file that is not a JSON object is a one-line error."""
    from trendlake.optimizer.errors import OptimizerError
    from trendlake.schemas import load_stream_schema

    try:
        schema = load_stream_schema(stream)
    except FileNotFoundError as err:
        raise OptimizerError(str(err).strip()) from None
    except IsADirectoryError:
        raise OptimizerError(f"stream schema {stream} is a directory, not a JSON file") from None
    except UnicodeDecodeError as err:
        raise OptimizerError(f"stream schema {stream}: not UTF-8 text (byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise OptimizerError(f"stream schema {stream}: not JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    if not isinstance(schema, dict) or not isinstance(schema.get("stream"), str):
        raise OptimizerError(f"stream schema {stream}: not a stream schema (a JSON object with a \"stream\" name)")
    return schema


def compile_plan(
    workload_path: Path,
    stream: str | None,
    planner: str = "none",
    statistics: Any = None,
) -> tuple[dict[str, Any], str]:
    """Parse, check and plan a workload file; returns (plan, workload hash).

    ``statistics``: a statistics document or ``Statistics``, or a callable ``(workload) -> either`` run
    only when the planner is not ``none`` (computing them costs a pass over the events)."""
    from trendlake import optimizer

    text = read_workload(workload_path)
    schema = load_schema(stream) if stream else None
    workload = optimizer.compile_workload(text, stream_schema=schema, path=str(workload_path))
    if callable(statistics):
        statistics = statistics(workload) if planner != "none" else None
    plan = optimizer.build_plan(
        workload, planner=planner, statistics=statistics, stream=schema["stream"] if schema else None
    )
    return plan, optimizer.workload_hash(text)


def planning_statistics(args: Any, table_of: Any = None) -> Any:
    """What the planner reads, from the planning options of ``args`` (``assume_uniform``,
    ``stats``, ``events``, ``stream``): ``--assume-uniform``, ``--stats``, or a callable computing
    them from an event file (``--events``, or the evaluated file ``table_of()``), as a checked
    ``Statistics`` view: a bad ``--stats`` document is an ``OptimizerError`` naming the field."""
    from trendlake.optimizer.errors import OptimizerError
    from trendlake.optimizer.statistics import Statistics, schema_error

    # eval passes ``table_of`` (its --events is the evaluated file); plan's --events is a
    # statistics source
    stats_file = None if table_of is not None else getattr(args, "events", None)
    if args.assume_uniform:
        if args.stats is not None or stats_file is not None:
            raise OptimizerError("--assume-uniform plans without statistics: drop --stats / --events")
        return Statistics.uniform()
    if args.stats is not None:
        try:
            data = json.loads(args.stats.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise OptimizerError(f"--stats: no file {args.stats}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise OptimizerError(f"--stats {args.stats}: not a JSON file ({err})") from None
        if isinstance(data, dict) and "queries" in data and "statistics" in data:
            data = data["statistics"]  # a plan: reuse the statistics it was made from
        if not isinstance(data, dict) or "types" not in data and data.get("assumption") is None:
            raise OptimizerError(f"--stats {args.stats}: not statistics (no 'types'); see docs/lake.md §stats")
        problem = schema_error(data)
        if problem is not None:
            raise OptimizerError(f"--stats {args.stats}: not statistics: {problem}; see docs/lake.md §stats")
        return Statistics.from_dict(data)
    from trendlake.jobs.statistics import file_statistics

    if stats_file is not None:
        def from_file(workload: Any) -> Statistics:
            schema = _schema(args.stream)
            return Statistics.from_dict(file_statistics(read_event_file(stats_file, schema), workload, schema))

        return from_file
    if table_of is not None:
        return lambda workload: Statistics.from_dict(file_statistics(table_of(), workload, _schema(args.stream)))
    return None


def _schema(stream: str | None) -> dict[str, Any] | None:
    if not stream:
        return None
    from trendlake.schemas import load_stream_schema

    return load_stream_schema(stream)


def new_shared_stats(plan: dict[str, Any], per_window: bool) -> dict[str, Any]:
    """An empty record per sharing group of the plan, for the engine to fill."""
    from trendlake.engine.shared import kind_of

    out = {}
    for group in plan.get("sharing") or []:
        kind = kind_of(group.get("kind", ""))
        if kind is not None:
            out[group["id"]] = kind.new_stats(per_window)
    return out


def sharing_report(plan: dict[str, Any], shared_stats: dict[str, Any]) -> dict[str, Any]:
    """What each sharing group did (``eval --sharing-out``): its envelope and its kind's
    report (``Kind.report``: totals and, per partition and window, what was shared)."""
    from trendlake.engine.shared import kind_of

    groups = []
    for group in plan.get("sharing") or []:
        st = shared_stats.get(group["id"])
        kind = kind_of(group["kind"])
        if st is None or kind is None:
            continue
        groups.append({"id": group["id"], "kind": group["kind"], "queries": group["queries"],
                       **kind.report(group, st)})
    return {"plan_id": plan.get("plan_id"), "planner": plan.get("planner"), "groups": groups}


def read_event_file(path: Path, schema: dict[str, Any] | None = None, columns: set[str] | None = None) -> Any:
    """The events of a file as a typed Arrow table (``engine.files.read_event_table``; without
    a stream schema only the attribute ``columns`` given, when given)."""
    from trendlake.engine.files import read_event_table

    return read_event_table(path, schema, columns)


def evaluate_table(
    plan: Any, table: Any, *, strategy: str = "auto", queries: list[str] | None = None,
    shared_stats: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Result rows of ``plan`` over an event table, per query in plan order (``engine.evaluate``)."""
    from trendlake import engine

    return engine.evaluate(plan, table, strategy=strategy, queries=queries, shared_stats=shared_stats)


def json_value(value: Any) -> Any:
    """A result value as valid JSON: OVERFLOW, infinities and NaN as the strings
    ``"OVERFLOW"``, ``"Infinity"``, ``"-Infinity"`` and ``"NaN"`` (JSON has no literal for
    them), ``-0.0`` as ``0.0`` (the two compare equal; one output form). Other values as
    they are: integers exact at any size, finite floats as Python's shortest repr."""
    from trendlake.engine import OVERFLOW

    if value is OVERFLOW:
        return "OVERFLOW"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (math.inf, -math.inf):
            return "Infinity" if value > 0 else "-Infinity"
        if value == 0.0:
            return 0.0
    return value


def json_row(row: dict[str, Any]) -> dict[str, Any]:
    """A result row for output: ISO-8601 UTC window bounds, other values by ``json_value``."""
    from trendlake.engine import format_ts

    out = {}
    for key, value in row.items():
        if key in ("window_start", "window_end"):
            out[key] = format_ts(value)
        else:
            out[key] = json_value(value)
    return out


_STRICT = json.JSONEncoder(allow_nan=False)  # made once: json.dumps makes one per call given options


def json_line(row: dict[str, Any]) -> str:
    """One output line of ``--format json``: strict JSON (``allow_nan=False``)."""
    return _STRICT.encode(json_row(row))


def print_table(rows: list[dict[str, Any]], plan: Any) -> None:
    by_query: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_query.setdefault(row["query"], []).append(json_row(row))
    for name, query_rows in by_query.items():
        columns = [c for c in query_rows[0] if c != "query"]
        cells = [[_cell(r.get(c)) for c in columns] for r in query_rows]
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
        print(f"== {name} ({len(query_rows)} rows)")
        print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
        for row in cells:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
        print()


def _cell(value: Any) -> str:
    """A table cell of a ``json_row`` value: the same words for OVERFLOW, infinities and NaN."""
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
