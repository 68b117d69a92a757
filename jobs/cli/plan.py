"""``trendlake plan``: the plan JSON of a workload (the job: ``jobs.evaluate.compile_plan``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from trendlake.jobs.cli import add_planning_options
from trendlake.jobs.cli.eval import check_planner, default_planner, write_stats


def add_parser(sub: argparse._SubParsersAction) -> None:
    q = sub.add_parser(
        "plan",
        help="print the plan JSON for a workload",
        description="Compile WORKLOAD.etq and print the plan the engine executes (docs/plan-format.md).",
    )
    q.add_argument("workload", type=Path, help="workload file (*.etq)")
    q.add_argument("--stream", metavar="SCHEMA", help="stream schema to check the workload against")
    q.add_argument("--out", type=Path, help="write the plan here instead of stdout")
    add_planning_options(q, events=True)
    q.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.errors import BadInputError
    from trendlake.jobs.evaluate import compile_plan, planning_statistics

    args.planner = default_planner(args, events=True)
    if args.out is not None and not args.out.parent.is_dir():
        raise BadInputError(f"--out {args.out}: folder {args.out.parent} does not exist")
    check_planner(args.planner)
    plan, _ = compile_plan(args.workload, args.stream, args.planner, planning_statistics(args))
    write_stats(args, plan)
    text = json.dumps(plan, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
        print(f"wrote plan {plan['plan_id']} ({len(plan['queries'])} queries) to {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0
