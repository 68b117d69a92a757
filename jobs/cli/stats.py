"""``trendlake stats``: stream statistics over a range of bronze, for the optimizer (the job:
``jobs.stats.run_stats``; the definition: ``jobs.statistics``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from trendlake.jobs.cli import add_lake_options, bad_input, positive_float, timestamp


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "stats",
        help="compute stream statistics over a trailing range of bronze (for the optimizer)",
        description=(
            "Compute per event type rates per pane, burst sizes, group counts and the "
            "selectivity of every local predicate of the workload over the bronze events of "
            "[FROM, TO), in Spark, and append them as one run to stats/<stream>. By default "
            "TO is midnight after the newest event date in bronze and FROM is --days before it."
        ),
    )
    add_lake_options(p)
    p.add_argument("--workload", type=Path, help="workload file (*.etq): bursts per query and predicate selectivities")
    p.add_argument("--from", dest="start", type=timestamp, help="range start (ISO-8601 or epoch seconds), inclusive")
    p.add_argument("--to", dest="end", type=timestamp, help="range end (ISO-8601 or epoch seconds), exclusive")
    p.add_argument("--days", type=positive_float, default=7.0, help="range length when --from is not given (default 7)")
    p.add_argument("--group-by", default="", help="comma-separated attributes: rates and counts per group too")
    p.add_argument("--pane-seconds", type=positive_float, help="pane length (default: the workload's pane, else 60)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.spark import configure_logging
    from trendlake.jobs.stats import default_range, latest_statistics, run_stats

    configure_logging()
    group_by = [g.strip() for g in args.group_by.split(",") if g.strip()]
    with bad_input(ValueError):  # a workload or a time the job cannot read
        start_us, end_us = default_range(args.lake, args.stream, args.start, args.end, args.days)
        version = run_stats(args.lake, args.stream, args.workload, start_us, end_us,
                            group_by=group_by, pane_seconds=args.pane_seconds)
    stats = latest_statistics(args.lake, args.stream)
    assert stats is not None
    print(f"stats/{stats['stream']} version {version}: {stats['events']} events in "
          f"[{stats['range_start']}, {stats['range_end']}), {len(stats['types'])} event types, "
          f"pane {stats['pane_us'] / 1e6:g}s")
    return 0
