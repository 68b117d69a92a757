"""``trendlake eval`` and ``trendlake plan``: a workload on a local event file, no Spark.

``eval`` compiles the workload, writes its plan in memory, and runs the engine
over a CSV, JSON-lines or Parquet file, printing one JSON object (or table
row) per (query, group, window) with at least one trend. ``plan`` prints the
plan JSON the optimizer writes for a workload.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

STRATEGY_CHOICES = ("auto", "greta", "cogra", "twostep")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate a workload on a local event file (no Spark)",
        description=(
            "Evaluate every query of WORKLOAD.etq over the events of FILE (CSV with a header "
            "naming 'type', 'ts' and attribute columns; JSON lines; or Parquet) and print one "
            "result per (query, group, window) that has at least one trend."
        ),
    )
    p.add_argument("workload", type=Path, help="workload file (*.etq)")
    p.add_argument("--events", required=True, type=Path, metavar="FILE", help="event file: .csv, .jsonl or .parquet")
    p.add_argument("--stream", metavar="SCHEMA", help="stream schema (bundled name like 'rides' or a JSON path) to check the workload against")
    p.add_argument("--strategy", choices=STRATEGY_CHOICES, default="auto", help="engine strategy (default: auto, the optimizer's granularity per query)")
    p.add_argument("--format", choices=("json", "table"), default="json", help="output format (default: json lines)")
    p.add_argument("--plan", type=Path, metavar="PLAN.json", help="run this plan instead of planning the workload (its workload hash must match)")
    p.add_argument("--query", action="append", metavar="NAME", help="evaluate only this query (repeatable)")
    p.add_argument("--sharing-out", type=Path, metavar="REPORT.json",
                   help="write what each sharing group of the plan did, in total and per partition and window: "
                        "bursts of the shared type, shared and split, snapshots")
    _planning_options(p, events=False)
    p.set_defaults(func=run_eval)

    q = sub.add_parser(
        "plan",
        help="print the plan JSON for a workload",
        description="Compile WORKLOAD.etq and print the plan the engine executes (docs/plan-format.md).",
    )
    q.add_argument("workload", type=Path, help="workload file (*.etq)")
    q.add_argument("--stream", metavar="SCHEMA", help="stream schema to check the workload against")
    q.add_argument("--out", type=Path, help="write the plan here instead of stdout")
    _planning_options(q, events=True)
    q.set_defaults(func=run_plan)


def _planning_options(p: argparse.ArgumentParser, *, events: bool) -> None:
    from trendlake.optimizer.planners import PLANNERS

    p.add_argument("--planner", default=None, choices=sorted(PLANNERS),
                   help=f"planner ({', '.join(sorted(PLANNERS))}; default: auto, the plan of least estimated "
                        "cost, when statistics are given (--stats, --assume-uniform"
                        + (", --events" if events else "") + "), else none)")
    if events:
        p.add_argument("--events", type=Path, metavar="FILE",
                       help="compute the statistics the planner needs from this event file")
    p.add_argument("--stats", type=Path, metavar="STATS.json",
                   help="statistics for the planner: a statistics JSON, or a plan whose statistics to reuse"
                   + ("" if events else " (default: computed from the evaluated file)"))
    p.add_argument("--assume-uniform", action="store_true",
                   help="plan without statistics, assuming every event type has the same rate (recorded in the plan)")
    p.add_argument("--stats-out", type=Path, metavar="STATS.json",
                   help="also write the statistics the plan was made from to this file")


def _fail(message: str) -> int:
    print(f"trendlake: error: {message}", file=sys.stderr)
    return 2


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


def planning_statistics(args: argparse.Namespace, table_of: Any = None) -> Any:
    """What the planner reads: ``--assume-uniform``, ``--stats``, or a callable computing
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
    if stats_file is not None:
        return lambda workload: Statistics.from_dict(
            file_statistics(read_event_file(stats_file, _schema(args.stream)), workload, args.stream))
    if table_of is not None:
        return lambda workload: Statistics.from_dict(file_statistics(table_of(), workload, args.stream))
    return None


def file_statistics(table: Any, workload: Any, stream: str | None) -> dict[str, Any]:
    """The statistics of an event table (``jobs.stats.compute_stats``, the stats job's definition)."""
    from trendlake.jobs.stats import compute_stats, statistics_dict

    schema = _schema(stream)
    if schema is None:  # without a stream schema: the event types the file holds
        types = sorted(set(table.column("type").unique().to_pylist()) - {None})
        schema = {"stream": None, "event_types": types, "attributes": {}}
    # partitions are counted per partitioning of the workload's queries ("partitions"); no
    # group_by: per-group rates are for the lake's statistics runs
    rows = compute_stats(table, schema, workload)
    if not rows:
        return {"types": {}, "bursts": {}, "events": 0}
    out = statistics_dict(rows)
    for key in ("run_id", "computed_at", "range_start", "range_end"):
        out.pop(key, None)  # a file's statistics depend on its content only
    from trendlake.optimizer.analysis import panes_us

    out["pane_us"] = panes_us(workload)  # compute_stats' pane: the workload's
    return out


def _schema(stream: str | None) -> dict[str, Any] | None:
    if not stream:
        return None
    from trendlake.schemas import load_stream_schema

    return load_stream_schema(stream)


def _write_stats(args: argparse.Namespace, plan: dict[str, Any]) -> None:
    if args.stats_out is not None:
        args.stats_out.write_text(json.dumps(plan.get("statistics"), indent=2) + "\n")


def default_planner(args: argparse.Namespace, events: bool) -> str:
    """``--planner`` as given, else ``auto`` when statistics are given, else ``none``."""
    if args.planner is not None:
        return args.planner
    given = args.stats is not None or args.assume_uniform or (events and getattr(args, "events", None) is not None)
    return "auto" if given else "none"


def run_plan(args: argparse.Namespace) -> int:
    from trendlake.optimizer.errors import OptimizerError
    from trendlake.optimizer.planners import get_planner

    args.planner = default_planner(args, events=True)
    if args.out is not None and not args.out.parent.is_dir():
        return _fail(f"--out {args.out}: folder {args.out.parent} does not exist")
    try:
        get_planner(args.planner)
    except (KeyError, ValueError) as err:
        return _fail(f"--planner: {str(err).strip()}")
    try:
        plan, _ = compile_plan(args.workload, args.stream, args.planner, planning_statistics(args))
        _write_stats(args, plan)
    except OptimizerError as err:
        return _fail(str(err))
    except OSError as err:
        return _fail(f"{getattr(err, 'filename', None) or ''}: {err.strerror or err}".lstrip(": "))
    text = json.dumps(plan, indent=2)
    if args.out:
        try:
            args.out.write_text(text + "\n")
        except OSError as err:
            return _fail(f"--out {args.out}: {err.strerror or err}")
        print(f"wrote plan {plan['plan_id']} ({len(plan['queries'])} queries) to {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from trendlake.engine.events import EventFileError
    from trendlake.optimizer.errors import OptimizerError
    from trendlake.optimizer.planners import get_planner

    from trendlake import engine, optimizer

    args.planner = default_planner(args, events=False)
    try:
        get_planner(args.planner)
    except (KeyError, ValueError) as err:
        return _fail(f"--planner: {str(err).strip()}")
    try:
        schema = _schema(args.stream)
        table = None

        def table_of(columns: set[str] | None = None) -> Any:
            nonlocal table
            if table is None:
                table = read_event_file(args.events, schema, columns)
            return table

        plan, whash = compile_plan(args.workload, args.stream, args.planner, planning_statistics(args, table_of))
        _write_stats(args, plan)
        if args.plan:
            plan = json.loads(args.plan.read_text())
        loaded = engine.load_plan(plan, workload_hash=whash)
        table = table_of(engine.columns_needed(loaded, args.query))  # the columns the plan reads
        shared_stats = _shared_stats(loaded.raw, bool(getattr(args, "sharing_out", None)))
        started = time.perf_counter()
        rows = evaluate_table(loaded, table, strategy=args.strategy, queries=args.query, shared_stats=shared_stats)
        elapsed = time.perf_counter() - started
        if getattr(args, "sharing_out", None):
            args.sharing_out.write_text(json.dumps(sharing_report(loaded.raw, shared_stats), indent=2) + "\n")
    except optimizer.WorkloadError as err:
        return _fail(f"invalid workload, nothing evaluated:\n{err}")
    except OptimizerError as err:
        return _fail(str(err))
    except (engine.PlanError, EventFileError, FileNotFoundError, engine.Unsupported, ValueError) as err:
        return _fail(str(err))
    if args.format == "json":
        for row in rows:
            print(json_line(row))
    else:
        print_table(rows, loaded)
    print(
        f"{table.num_rows} events, {len(rows)} result rows, {elapsed:.3f}s",
        file=sys.stderr,
    )
    from trendlake.engine.shared import kind_of

    kinds = {g["id"]: kind_of(g["kind"]) for g in loaded.raw.get("sharing") or []}
    for gid, st in shared_stats.items():
        print(f"sharing group {gid}: {kinds[gid].summary(st)}", file=sys.stderr)
    return 0


def _shared_stats(plan: dict[str, Any], per_window: bool) -> dict[str, Any]:
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


def json_line(row: dict[str, Any]) -> str:
    """One output line of ``--format json``: strict JSON (``allow_nan=False``)."""
    return json.dumps(json_row(row), allow_nan=False)


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
