"""``trendlake optimize``: plan a workload from the lake's statistics and make the plan current
(the job: ``jobs.optimize.optimize``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from trendlake.jobs.cli import add_lake_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    from trendlake.optimizer.planners import PLANNERS

    p = sub.add_parser(
        "optimize",
        help="plan a workload from the latest statistics and make the plan current",
        description=(
            "Compile WORKLOAD.etq, plan it from the latest statistics of the stream and store "
            "the plan under LAKE/plans/<workload>/<plan_id>.json with current.json pointing at it."
        ),
    )
    p.add_argument("workload", type=Path, help="workload file (*.etq)")
    add_lake_options(p, stream="optional")
    p.add_argument("--planner", default="auto", choices=sorted(PLANNERS),
                   help=f"planner ({', '.join(sorted(PLANNERS))}; default: auto, the plan of least estimated "
                        "cost, or none without statistics)")
    p.add_argument("--no-stats", action="store_true", help="plan without reading stats.<stream>")
    p.add_argument("--stats", type=Path, metavar="STATS.json",
                   help="plan from these statistics instead of the lake's newest stats run")
    p.add_argument("--assume-uniform", action="store_true",
                   help="plan without statistics, assuming every event type has the same rate (recorded in the plan)")
    p.add_argument("--incremental", action="store_true",
                   help="plan against the workload's current plan: Weave Share's trees woven into the stored "
                        "ones, re-planned where the woven plan costs more than 20%% above one from scratch")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.evaluate import planning_statistics
    from trendlake.jobs.optimize import latest_statistics, optimize, previous_plan, workload_name

    statistics = planning_statistics(args) if (args.stats is not None or args.assume_uniform) else None
    if statistics is None and args.stream and not args.no_stats:
        statistics = latest_statistics(args.lake, args.stream)
    previous = previous_plan(args.lake, workload_name(args.workload)) if args.incremental else None
    ref = optimize(args.lake, args.workload, stream=args.stream, statistics=statistics, planner=args.planner,
                   previous=previous)
    print(f"plan {ref.plan_id} is current for workload {ref.workload} ({ref.path})")
    return 0
