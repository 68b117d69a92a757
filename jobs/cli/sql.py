"""``trendlake sql``: read-only Spark SQL over the lake's tables (the job: ``jobs.sql``)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from trendlake.jobs.cli import add_lake_options, positive_int


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sql",
        help="run Spark SQL over the lake's tables (temporary views <kind>_<name>)",
        description=(
            "Register every Delta table of the lake as a temporary view named <kind>_<name> "
            "(results_stuck_trips, bronze_rides, quarantine_rides, stats_rides, ...) and "
            "trendlake_tables (table_name, view, kind, name, version, rows, path), run the "
            "query and print the result. Read-only: only queries over these views that call "
            "side-effect-free built-in functions run; INSERT, CREATE, DROP, SET, CACHE, file "
            "paths (text.`/path`), table-valued functions, reflection (reflect, java_method) "
            "and UDFs are refused before Spark runs anything. The query text is at most "
            f"{max_query_bytes()} bytes."
        ),
    )
    add_lake_options(p, stream=None)
    p.add_argument("--limit", type=positive_int, default=100, help="rows to print with --format table (default 100)")
    p.add_argument(
        "--format", choices=("table", "csv", "json"), default="table",
        help="table (up to --limit rows), or every row as CSV with a header / JSON lines (for scripts)",
    )
    p.add_argument("--file", type=Path, help="read the query from this file (UTF-8) instead of the argument")
    p.add_argument(
        "query", nargs="?",
        help='SQL text, e.g. "SELECT * FROM trendlake_tables"; - reads it from standard input',
    )
    p.set_defaults(func=run)


def max_query_bytes() -> int:
    from trendlake.jobs.sql import MAX_QUERY_BYTES

    return MAX_QUERY_BYTES


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.sql import print_rows, quiet_spark, read_query, run_sql, spark_error

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    sql = read_query(args)
    spark = quiet_spark()
    try:
        df = run_sql(spark, args.lake, sql, show=args.format == "table", limit=args.limit)
        if args.format != "table":
            print_rows(df, args.format)
    except Exception as err:  # noqa: BLE001 - Spark's errors while the query runs, as SqlError
        mapped = spark_error(err)
        if mapped is None or mapped is err:
            raise
        raise mapped from None
    return 0
