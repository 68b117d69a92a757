"""``trendlake demo``: the whole pipeline on a generated ride-sharing day (the job: ``jobs.demo``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from trendlake.jobs.cli import positive_int


def demo_doc() -> str:
    from trendlake.jobs import demo

    return demo.__doc__ or ""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="run the whole pipeline on a generated ride-sharing day (Airflow on SQLite, local Spark, Delta on disk)",
        description=demo_doc(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, default=Path("out"), help="folder for the lake, landing files, Airflow home and plot (default: ./out)")
    p.add_argument("--events", type=positive_int, default=200_000, help="events in the generated day (default: 200000)")
    p.add_argument("--seed", type=int, default=7, help="generator seed (default: 7)")
    p.add_argument("--dags", type=Path, default=Path("dags"), help="the Airflow DAG folder (default: ./dags, the repository's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.demo import demo

    return demo(args.out, args.events, args.seed, args.dags)
