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
delta-spark jars on the classpath, ``delta.`<path>``` works as usual in
Python code that calls ``spark.sql`` itself.

**Read-only.** ``run_sql`` (and so ``trendlake sql``) runs only queries over
the registered views. Before Spark executes anything, the text is parsed by
Spark's own parser (``sessionState.sqlParser.parsePlan``, through the JVM
gateway) and the unresolved logical plan is walked (``check_read_only``):
every plan node must be a query operator (``Project``, ``Filter``,
``Aggregate``, ``Join``, ``Sort``, limits, set operations, ``WITH``,
windows, ``VALUES``, ...), every relation a one-part name of a registered
view or of a ``WITH`` query of the statement, every subquery inside an
expression likewise, and no function may be catalog-qualified or call Java
(``reflect``, ``java_method``). Commands, DDL and DML (``INSERT``, ``INSERT
OVERWRITE DIRECTORY``, ``CREATE``, ``DROP``, ``SET``, ``CACHE``, ``ADD JAR``,
``EXPLAIN``, SQL scripts), file-path relations (``text.`/etc/hostname```,
``parquet.`<lake>/...```) and table-valued functions (``read_files``,
``range``) are refused with ``SqlRefused``.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import re
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import JobError

log = logging.getLogger("trendlake.sql")

TABLES_VIEW = "trendlake_tables"

# Logical plan nodes (unresolved, as the parser returns them) a read-only query may contain.
QUERY_NODES = frozenset({
    "Project", "Filter", "Aggregate", "Sort", "GlobalLimit", "LocalLimit", "Limit", "Offset", "Tail",
    "Distinct", "Deduplicate", "Union", "Intersect", "Except", "Join", "LateralJoin", "SubqueryAlias",
    "UnresolvedRelation", "UnresolvedWith", "CTERelationRef", "OneRowRelation", "LocalRelation",
    "UnresolvedInlineTable", "Window", "WithWindowDefinition", "Generate", "Expand", "Pivot", "Unpivot",
    "Sample", "RepartitionByExpression", "Repartition", "UnresolvedHint", "UnresolvedHaving",
    "UnresolvedSubqueryColumnAliases",
})
# Functions that reach outside the query: Java reflection.
REFUSED_FUNCTIONS = frozenset({"reflect", "java_method", "try_reflect"})
SUBQUERY_EXPRESSION = "org.apache.spark.sql.catalyst.expressions.SubqueryExpression"


class SqlRefused(JobError):
    """A statement that is not a read-only query over the lake's views."""


def _seq(jseq: Any) -> list[Any]:
    return [jseq.apply(i) for i in range(jseq.size())]


def _simple_name(jobj: Any) -> str:
    return str(jobj.getClass().getName()).rsplit(".", 1)[-1].rstrip("$")


def check_read_only(spark: Any, sql: str, views: set[str] | frozenset[str]) -> None:
    """Raise ``SqlRefused`` unless ``sql`` is one query reading only ``views`` (see the module doc).

    Nothing is executed: the text is only parsed, by Spark's parser.
    """
    jvm = spark.sparkContext._jvm
    parser = spark._jsparkSession.sessionState().sqlParser()
    try:
        root = parser.parsePlan(sql)
    except Exception as err:  # noqa: BLE001 - py4j wraps Spark's ParseException
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise SqlRefused(f"not valid Spark SQL: {first}") from None
    allowed = {v.lower() for v in views}
    subquery_cls = jvm.java.lang.Class.forName(SUBQUERY_EXPRESSION, False, root.getClass().getClassLoader())
    ctes: set[str] = set()
    plans = [root]
    seen = 0
    while plans:
        node = plans.pop()
        seen += 1
        if seen > 100_000:
            raise SqlRefused("query too large to check")
        kind = _simple_name(node)
        if kind == "UnresolvedTableValuedFunction":
            raise SqlRefused("table-valued functions (read_files, range, ...) are not allowed: query the lake's views")
        if kind not in QUERY_NODES:
            raise SqlRefused(
                f"only read-only queries over the lake's views are allowed, not {kind} "
                "(no INSERT, CREATE, DROP, SET, CACHE, ADD JAR, EXPLAIN or scripts)"
            )
        if kind == "UnresolvedWith":
            for pair in _seq(node.cteRelations()):
                ctes.add(str(pair._1()).lower())
                plans.append(pair._2())
        if kind == "UnresolvedRelation":
            parts = [str(p) for p in _seq(node.multipartIdentifier())]
            name = ".".join(parts)
            if len(parts) != 1:
                raise SqlRefused(
                    f"{name} is not a lake view: file paths (text.`/path`, parquet.`/path`) and "
                    "qualified names are not allowed; list the views with SELECT * FROM trendlake_tables"
                )
            if parts[0].lower() not in allowed and parts[0].lower() not in ctes:
                raise SqlRefused(f"{name} is not a lake view (SELECT * FROM trendlake_tables lists them)")
            if node.isStreaming():
                raise SqlRefused(f"streaming reads of {name} are not allowed")
        exprs = _seq(node.expressions())
        while exprs:
            expr = exprs.pop()
            if subquery_cls.isInstance(expr):
                plans.append(expr.plan())
            if _simple_name(expr) == "UnresolvedFunction":
                fparts = [str(p).lower() for p in _seq(expr.nameParts())]
                if len(fparts) != 1 or fparts[0] in REFUSED_FUNCTIONS:
                    raise SqlRefused(f"function {'.'.join(fparts)} is not allowed in lake queries")
            exprs.extend(_seq(expr.children()))
        plans.extend(_seq(node.children()))


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
    """Run the read-only query ``sql`` over the lake's views; a DataFrame, or a ``pyarrow.Table`` with ``as_arrow``.

    Anything but a query over the views raises ``SqlRefused`` before Spark runs it.
    ``show=True`` also prints up to ``limit`` rows as a table.
    """
    listing = register_views(spark, lake_root)
    check_read_only(spark, sql, {r["view"] for r in listing} | {TABLES_VIEW})
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
            "query and print the result. Read-only: only queries over these views run; "
            "INSERT, CREATE, DROP, SET, CACHE, file paths (text.`/path`) and table-valued "
            "functions are refused before Spark runs anything."
        ),
    )
    p.add_argument("--lake", required=True, type=Path, help="lake root folder")
    p.add_argument("--limit", type=int, default=100, help="rows to print with --format table (default 100)")
    p.add_argument(
        "--format", choices=("table", "csv", "json"), default="table",
        help="table (up to --limit rows), or every row as CSV with a header / JSON lines (for scripts)",
    )
    p.add_argument("query", help='SQL text, e.g. "SELECT * FROM trendlake_tables"')
    p.set_defaults(func=_run)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def print_rows(df: Any, fmt: str, out: Any = None) -> int:
    """Every row of ``df`` as CSV (with a header) or JSON lines; the number of rows."""
    out = out or sys.stdout
    n = 0
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(df.columns)
        for row in df.toLocalIterator():
            writer.writerow(["" if v is None else _plain(v) for v in row])
            n += 1
    else:
        for row in df.toLocalIterator():
            out.write(json.dumps({k: _plain(v) for k, v in row.asDict(recursive=True).items()}) + "\n")
            n += 1
    return n


def _run(args: argparse.Namespace) -> int:
    from trendlake.jobs.spark import get_spark

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    spark = get_spark()
    try:
        df = run_sql(spark, args.lake, args.query, show=args.format == "table", limit=args.limit)
        if args.format != "table":
            print_rows(df, args.format)
    except (FileNotFoundError, SqlRefused) as err:
        print(f"trendlake: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - Spark's AnalysisException / ParseException
        if type(err).__name__ in ("AnalysisException", "ParseException", "SparkRuntimeException"):
            print(f"trendlake: error: {str(err).strip().splitlines()[0]}", file=sys.stderr)
            return 2
        raise
    return 0
