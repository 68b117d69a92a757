"""``trendlake ingest``: new raw event files of a landing folder into bronze (the job:
``jobs.ingest.ingest``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trendlake.jobs.cli import EXIT_JOB_FAILED, add_lake_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="ingest new raw event files from a landing folder into bronze (Delta)",
        description=(
            "Validate every row of the landing folder's new CSV / JSON-lines / Parquet files "
            "against the stream schema and its expectation suite; good rows go to "
            "bronze/<stream>, bad ones to quarantine/<stream> with a reason. Files already "
            "ingested (same SHA-256) are skipped; a file ingested before whose content changed "
            "is refused unless --replace-changed. Links, FIFOs and folders are skipped. "
            "Exit 1 when a file was refused (the others are ingested)."
        ),
    )
    add_lake_options(p)
    p.add_argument("--landing", required=True, type=Path, help="folder of raw event files")
    p.add_argument("--replace-changed", action="store_true",
                   help="a file ingested before whose content changed replaces its earlier rows "
                        "(bronze and quarantine, one transaction each) instead of being refused")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.ingest import ingest, summary
    from trendlake.jobs.lake import resolve_stream
    from trendlake.jobs.spark import configure_logging

    configure_logging()
    _, schema = resolve_stream(args.stream, args.lake)
    report = ingest(args.lake, schema, args.landing, replace_changed=args.replace_changed)  # type: ignore[arg-type]
    sys.stderr.flush()
    print(summary(report), flush=True)
    return EXIT_JOB_FAILED if report.files_refused else 0
