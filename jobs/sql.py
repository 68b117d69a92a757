"""Spark SQL over the lake: every Delta table as a temporary view.

``run_sql(spark, lake_root, sql)`` registers each table ``<kind>/<name>`` of
the lake as the temporary view ``<kind>_<name>`` (``results_stuck_trips``,
``bronze_rides``, ``quarantine_rides``, ``ingest_log_rides``,
``stats_rides``) over its *current snapshot* (``Lake.read_spark``: only the
files of the snapshot, never the table folder), plus ``trendlake_tables``
(``table_name``, ``view``, ``kind``, ``name``, ``version``, ``rows``,
``path``), then runs ``sql``.

Why not ``results.stuck_trips``: Spark 4 refuses qualified temporary view
names (``TEMP_VIEW_NAME_TOO_MANY_NAME_PARTS``), a persistent view may not
reference a temporary one, and a catalog table ``USING parquet LOCATION
<table folder>`` would read files that Delta overwrites removed. With
delta-spark jars on the classpath, ``delta.`<path>``` works as usual.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("trendlake.sql")

TABLES_VIEW = "trendlake_tables"


def view_name(table: str) -> str:
    """``results/stuck_trips`` -> ``results_stuck_trips`` (other characters than [A-Za-z0-9_] become ``_``)."""
    kind, _, name = table.replace(".", "/", 1).partition("/")
    return re.sub(r"\W", "_", f"{kind}_{name}")


def register_views(spark: Any, lake_root: str | Path) -> list[dict[str, Any]]:
    """Register every lake table (and ``trendlake_tables``) as temporary views of ``spark``; their rows."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType
    from trendlake.jobs.lake import Lake

    lake = Lake(lake_root)
    if not lake.root.is_dir():
        raise FileNotFoundError(f"lake folder {lake.root} does not exist")
    listing = []
    for table in lake.tables():
        kind, name = table.split("/", 1)
        view = view_name(table)
        df = lake.read_spark(spark, table)
        df.createOrReplaceTempView(view)
        listing.append({
            "table_name": f"{kind}.{name}", "view": view, "kind": kind, "name": name,
            "version": lake.version(table), "rows": lake.row_count(table), "path": str(lake.path(table)),
        })
    schema = StructType([
        StructField("table_name", StringType()), StructField("view", StringType()),
        StructField("kind", StringType()), StructField("name", StringType()),
        StructField("version", LongType()), StructField("rows", LongType()), StructField("path", StringType()),
    ])
    spark.createDataFrame([tuple(r[f.name] for f in schema) for r in listing], schema).createOrReplaceTempView(TABLES_VIEW)
    log.info("registered %d lake tables as views: %s", len(listing), ", ".join(r["view"] for r in listing))
    return listing


def run_sql(
    spark: Any, lake_root: str | Path, sql: str, show: bool = False, as_arrow: bool = False, limit: int = 100
) -> Any:
    """Run ``sql`` over the lake's views; a DataFrame, or a ``pyarrow.Table`` with ``as_arrow``.

    ``show=True`` also prints up to ``limit`` rows as a table.
    """
    register_views(spark, lake_root)
    df = spark.sql(sql)
    if show:
        df.show(n=limit, truncate=False)
    return df.toArrow() if as_arrow else df


# ---------------------------------------------------------------------- CLI


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "sql",
        help="run Spark SQL over the lake's tables (temporary views <kind>_<name>)",
        description=(
            "Register every Delta table of the lake as a temporary view named <kind>_<name> "
            "(results_stuck_trips, bronze_rides, quarantine_rides, stats_rides, ...) and "
            "trendlake_tables (table_name, view, kind, name, version, rows, path), run the "
            "query and print the result."
        ),
    )
    p.add_argument("--lake", required=True, type=Path, help="lake root folder")
    p.add_argument("--limit", type=int, default=100, help="rows to print (default 100)")
    p.add_argument("query", help='SQL text, e.g. "SELECT * FROM trendlake_tables"')
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from trendlake.jobs.spark import get_spark

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    spark = get_spark()
    try:
        run_sql(spark, args.lake, args.query, show=True, limit=args.limit)
    except FileNotFoundError as err:
        print(f"trendlake: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - Spark's AnalysisException / ParseException
        if type(err).__name__ in ("AnalysisException", "ParseException", "SparkRuntimeException"):
            print(f"trendlake: error: {err}", file=sys.stderr)
            return 2
        raise
    return 0
