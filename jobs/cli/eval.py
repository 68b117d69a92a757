"""``trendlake eval``: a workload over a local event file, no Spark (the job: ``jobs.evaluate``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from trendlake.jobs.cli import add_planning_options, bad_input

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
    add_planning_options(p, events=False)
    p.set_defaults(func=run)


def default_planner(args: argparse.Namespace, events: bool) -> str:
    """``--planner`` as given, else ``auto`` when statistics are given, else ``none``."""
    if args.planner is not None:
        return args.planner
    given = args.stats is not None or args.assume_uniform or (events and getattr(args, "events", None) is not None)
    return "auto" if given else "none"


def check_planner(name: str) -> None:
    """A planner ``get_planner`` can make, else bad input (``--planner: ...``)."""
    from trendlake.jobs.errors import BadInputError
    from trendlake.optimizer.planners import get_planner

    try:
        get_planner(name)
    except (KeyError, ValueError) as err:
        raise BadInputError(f"--planner: {str(err).strip()}") from None


def write_stats(args: argparse.Namespace, plan: dict[str, Any]) -> None:
    """``--stats-out``: the statistics the plan was made from."""
    if args.stats_out is not None:
        args.stats_out.write_text(json.dumps(plan.get("statistics"), indent=2) + "\n")


def run(args: argparse.Namespace) -> int:
    from trendlake.engine.shared import kind_of
    from trendlake.jobs.evaluate import (
        compile_plan,
        evaluate_table,
        json_line,
        load_schema,
        new_shared_stats,
        planning_statistics,
        print_table,
        read_event_file,
        sharing_report,
    )

    from trendlake import engine

    args.planner = default_planner(args, events=False)
    check_planner(args.planner)
    with bad_input(ValueError):  # e.g. a --plan that is not JSON; the engine's input errors are its own
        schema = load_schema(args.stream) if args.stream else None
        table = None

        def table_of(columns: set[str] | None = None) -> Any:
            nonlocal table
            if table is None:
                table = read_event_file(args.events, schema, columns)
            return table

        plan, whash = compile_plan(args.workload, args.stream, args.planner, planning_statistics(args, table_of))
        write_stats(args, plan)
        if args.plan:
            plan = json.loads(args.plan.read_text())
        loaded = engine.load_plan(plan, workload_hash=whash)
        table = table_of(engine.columns_needed(loaded, args.query))  # the columns the plan reads
        shared_stats = new_shared_stats(loaded.raw, bool(args.sharing_out))
        started = time.perf_counter()
        rows = evaluate_table(loaded, table, strategy=args.strategy, queries=args.query, shared_stats=shared_stats)
        elapsed = time.perf_counter() - started
    if args.sharing_out:
        args.sharing_out.write_text(json.dumps(sharing_report(loaded.raw, shared_stats), indent=2) + "\n")
    if args.format == "json":
        for row in rows:
            print(json_line(row))
    else:
        print_table(rows, loaded)
    print(f"{table.num_rows} events, {len(rows)} result rows, {elapsed:.3f}s", file=sys.stderr)
    kinds = {g["id"]: kind_of(g["kind"]) for g in loaded.raw.get("sharing") or []}
    for gid, st in shared_stats.items():
        print(f"sharing group {gid}: {kinds[gid].summary(st)}", file=sys.stderr)
    return 0
