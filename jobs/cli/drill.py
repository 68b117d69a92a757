"""``trendlake drill``: the trends behind chosen result rows, from bronze into ``trends.<query>``
(a Spark job: ``jobs.drill.drill``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from trendlake.jobs.cli import EXIT_JOB_FAILED, add_lake_options, positive_int, timestamp
from trendlake.jobs.cli.trends import DEFAULT_MEMORY, byte_size


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "drill",
        help="construct the trends of the top (or listed) windows of a query into trends.<query>",
        description=(
            "Read the events of each chosen (group, window) of query Q from bronze, construct its "
            "complete trends (every trend with --all) under the memory budget, and replace those "
            "windows' rows of trends.<query>. Windows: the --top K rows of results.<query> by "
            "COUNT(*), or --window GROUP=V,...@START (repeatable). A window whose trends do not fit "
            "--memory is refused and reported with its COUNT(*); the others are written (exit 1)."
        ),
    )
    p.add_argument("--workload", required=True, type=Path, help="workload file (*.etq) the plan was made for")
    add_lake_options(p, stream="rides")
    p.add_argument("--query", required=True, metavar="Q", help="the query")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--top", type=positive_int, metavar="K", help="the K rows of largest COUNT(*)")
    which.add_argument("--window", action="append", default=[], metavar="GROUP=V,...@START",
                       help="a window by its GROUP-BY values and start, e.g. district=center@2026-01-01T11:40:00Z "
                            "(@START alone without GROUP-BY; repeatable)")
    p.add_argument("--from", dest="start", type=timestamp, help="with --top: only windows ending after this time")
    p.add_argument("--to", dest="end", type=timestamp, help="with --top: only windows ending at or before this time")
    p.add_argument("--limit", type=positive_int, metavar="N", help="at most N trends per window, in time order")
    p.add_argument("--memory", type=byte_size, default=DEFAULT_MEMORY, metavar="BYTES",
                   help="memory budget per window: graph, state and kept trends (default 1G)")
    p.add_argument("--all", action="store_true", help="every trend, not only the complete ones")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.engine.timeline import format_ts
    from trendlake.jobs.drill import drill

    report = drill(
        args.lake, args.workload, args.query, top=args.top, windows=args.window, start=args.start, end=args.end,
        limit=args.limit, memory=args.memory, complete=not args.all, stream=args.stream,
    )
    kind = "trends" if args.all else "complete trends"
    for w in report.windows:
        t = w.target
        group = ",".join(f"{g}={v}" for g, v in zip(report.group_by, t.group, strict=True))
        where = f"{group}@{format_ts(t.start)}" if group else f"@{format_ts(t.start)}"
        count = "overflowed" if t.overflowed else t.count
        if w.status == "refused":
            print(f"{where}: refused (COUNT(*) {count}): {w.message}")
        else:
            g = w.graphlets
            shared = (f", graphlets shared with the overlapping windows: {g.get('reused', 0)} reused, "
                      f"{g.get('partly', 0)} partly, {g.get('built', 0)} built") if w.shared else ""
            print(f"{where}: {w.trends} of {w.listed} {kind} (COUNT(*) {count}), {w.algorithm}{shared}")
    if report.version is None:
        print(f"{report.table}: no windows to drill")
    else:
        print(f"{report.table}: {report.rows_written} rows for {len(report.windows)} windows, version "
              f"{report.version}, drill run {report.run_id}, {report.seconds:.1f}s")
    return EXIT_JOB_FAILED if report.refused else 0

