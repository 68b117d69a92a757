"""``trendlake replay``: an interval of bronze through the workload's current plan into the
result tables (the job: ``jobs.replay.replay``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from trendlake.jobs.cli import add_lake_options, timestamp


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay an interval of bronze through the current plan into the result tables",
        description=(
            "Evaluate every query of the workload's current plan for the windows that end in "
            "(FROM, TO] and replace exactly those windows in results.<query>. Idempotent: "
            "rerunning or backfilling an interval leaves the same rows."
        ),
    )
    p.add_argument("workload", type=Path, help="workload file (*.etq) the plan was made for")
    add_lake_options(p, stream="rides")
    p.add_argument("--from", dest="start", required=True, type=timestamp,
                   help="interval start (ISO-8601 or epoch seconds), exclusive")
    p.add_argument("--to", dest="end", required=True, type=timestamp,
                   help="interval end (ISO-8601 or epoch seconds), inclusive")
    p.add_argument("--report-out", type=Path, metavar="REPORT.json",
                   help="write the run's report: rows written, seconds, and the engine seconds per sharing "
                        "group and per query run alone (explain --replay-report compares them with the plan's "
                        "estimates)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.errors import BadInputError
    from trendlake.jobs.replay import replay
    from trendlake.jobs.times import utc

    if args.report_out is not None and not args.report_out.parent.is_dir():
        raise BadInputError(f"--report-out {args.report_out}: folder {args.report_out.parent} does not exist")
    report = replay(args.lake, args.workload, args.start, args.end, stream=args.stream)
    for name, n in report.rows_written.items():
        print(f"results.{name}: {n} rows for windows ending in ({utc(report.start)}, {utc(report.end)}]")
    print(f"plan {report.plan_id}, replay run {report.run_id}, {report.seconds:.1f}s")
    if args.report_out is not None:
        args.report_out.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
        print(f"wrote {args.report_out}", file=sys.stderr)
    return 0
