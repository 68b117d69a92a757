"""The replay job: run a plan over the bronze panes of an interval into result tables.

For the windows that *end* inside ``(start, end]`` (a window ending exactly at
``end`` belongs to this interval, one ending at ``start`` to the previous
one), replay reads the needed panes of ``bronze.<stream>`` (partition pruning
on ``event_date``, a time filter, local predicates pushed down into Spark),
partitions them by each query's group-by and equivalence attributes, orders
each partition by ``(ts, seq)``, runs the engine per partition in the Spark
executors (``applyInArrow``), and replaces exactly those windows in every
``results.<query>`` table in one Delta transaction per table. Windows are
independent, so a rerun or a backfill of the same interval leaves the same
rows (all columns but ``computed_at``).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

log = logging.getLogger("trendlake.replay")

GENERIC_SCHEMA = "query string, group_json string, window_start long, window_end long, values_json string"
SAFE_PUSHDOWN_OPS = {"+", "-", "*", "neg", "=", "!=", "<", "<=", ">", ">=", "in"}


class ReplayError(RuntimeError):
    """Replay cannot run (no plan, a plan for another workload, no bronze table)."""


@dataclass
class ReplayReport:
    plan_id: str
    start: int
    end: int
    events_read: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


# --------------------------------------------------------------------------- windows


def windows_ending_in(within: int, slide: int, start: int, end: int) -> range:
    """Indexes k of windows ``[k*slide, k*slide + within)`` whose end lies in ``(start, end]``."""
    first = -((-(start + 1 - within)) // slide)  # ceil((start + 1 - within) / slide)
    last = (end - within) // slide
    return range(first, last + 1)


def needed_range(queries: list[Any], start: int, end: int) -> tuple[int, int]:
    """The event-time range ``[lo, hi)`` that the windows ending in ``(start, end]`` cover."""
    lo, hi = end, end
    for q in queries:
        ks = windows_ending_in(q.within, q.slide, start, end)
        if len(ks):
            lo = min(lo, ks[0] * q.slide)
            hi = max(hi, ks[-1] * q.slide + q.within)
    return lo, hi


# --------------------------------------------------------------------------- executor side


def evaluate_partition(
    plan_raw: dict[str, Any], query_names: list[str], table: Any, start: int, end: int
) -> Any:
    """Run the named queries over one partition (an Arrow table); generic result rows."""
    import pyarrow as pa

    import engine
    from engine.events import events_from_arrow

    plan = engine.load_plan(plan_raw)
    table = table.sort_by([("ts", "ascending"), ("seq", "ascending")])
    events = events_from_arrow(table, where="bronze")
    out: dict[str, list[Any]] = {n: [] for n in ("query", "group_json", "window_start", "window_end", "values_json")}
    for name in query_names:
        query = plan.queries[name]
        for row in engine.evaluate_query(query, events):
            w_end = row["window_end"]
            if not (start < w_end <= end):
                continue
            out["query"].append(name)
            out["group_json"].append(json.dumps([row[g] for g in query.group_by]))
            out["window_start"].append(row["window_start"])
            out["window_end"].append(w_end)
            out["values_json"].append(
                json.dumps({a.name: _jsonable(row[a.name]) for a in query.aggregates})
            )
    return pa.table(out, schema=pa.schema([
        ("query", pa.string()), ("group_json", pa.string()), ("window_start", pa.int64()),
        ("window_end", pa.int64()), ("values_json", pa.string()),
    ]))


def _jsonable(value: Any) -> Any:
    from engine import OVERFLOW

    return "OVERFLOW" if value is OVERFLOW else value


# --------------------------------------------------------------------------- pushdown


def spark_column(expr: dict[str, Any]) -> Any:
    """A Spark Column for a plan expression, or None when it is not safe to push down."""
    from pyspark.sql import functions as F

    if "lit" in expr:
        return F.lit(expr["lit"])
    if "attr" in expr:
        return None if expr.get("next") else F.col(expr["attr"])
    op = expr["op"]
    if op not in SAFE_PUSHDOWN_OPS:
        return None
    args = [spark_column(a) for a in expr.get("args", [])]
    if any(a is None for a in args):
        return None
    if op == "neg":
        return -args[0]
    if op == "in":
        return args[0].isin(list(expr["values"]))
    left, right = args
    return {
        "+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
        "=": lambda: left == right, "!=": lambda: left != right, "<": lambda: left < right,
        "<=": lambda: left <= right, ">": lambda: left > right, ">=": lambda: left >= right,
    }[op]()


def pushdown_filter(plan_raw: dict[str, Any], columns: set[str]) -> Any:
    """A Spark condition keeping every event some query may use (None: keep all).

    Contiguous queries see every event of their partition, so a plan with one
    pushes down nothing. Otherwise an event is kept when it may match some
    variable: its type, required attributes present and the local predicates
    that can be expressed safely in Spark (others are left to the engine).
    """
    from functools import reduce

    from pyspark.sql import functions as F

    if any(q["semantics"] == "contiguous" for q in plan_raw["queries"]):
        return None
    options = []
    for q in plan_raw["queries"]:
        required = q.get("required_attributes", {})
        for var in q["variables"]:
            cond = F.col("type") == F.lit(var["type"])
            for attr in required.get(var["name"], []):
                if attr not in columns:
                    cond = F.lit(False)
                    break
                cond = cond & F.col(attr).isNotNull()
            for expr in q.get("local_predicates", {}).get(var["name"], []):
                attrs = _attrs_of(expr)
                col = spark_column(expr) if attrs <= columns else None
                if col is not None:
                    cond = cond & col
            options.append(cond)
    if not options:
        return F.lit(False)
    return reduce(lambda a, b: a | b, options)


def _attrs_of(expr: dict[str, Any]) -> set[str]:
    if "attr" in expr:
        return {expr["attr"]}
    found: set[str] = set()
    for a in expr.get("args", []):
        found |= _attrs_of(a)
    return found


# --------------------------------------------------------------------------- result tables


def result_schema(query: dict[str, Any], bronze_schema: Any) -> Any:
    """The Arrow schema of ``results.<query>`` (docs/lake.md)."""
    import pyarrow as pa

    def attr_type(name: str) -> pa.DataType:
        return _arrow_type(bronze_schema, name)

    fields = [pa.field(g, attr_type(g)) for g in query["group_by"]]
    fields += [
        pa.field("window_start", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("window_end", pa.timestamp("us", tz="UTC"), nullable=False),
    ]
    for agg in query["aggregates"]:
        fn = agg["fn"]
        if fn in ("count_star", "count"):
            typ = pa.decimal128(38, 0)
        elif fn == "sum":
            base = attr_type(agg["attr"])
            typ = pa.decimal128(38, 0) if pa.types.is_integer(base) else pa.float64()
        elif fn == "avg":
            typ = pa.float64()
        else:
            typ = attr_type(agg["attr"])
        fields.append(pa.field(agg["name"], typ))
    fields += [
        pa.field("overflowed", pa.list_(pa.string())),
        pa.field("plan_id", pa.string()),
        pa.field("computed_at", pa.timestamp("us", tz="UTC")),
        pa.field("window_date", pa.date32()),
    ]
    return pa.schema(fields)


def _arrow_type(schema: Any, name: str) -> Any:
    import pyarrow as pa

    if schema is not None and name in schema.names:
        typ = schema.field(name).type
        if pa.types.is_integer(typ):
            return pa.int64()
        return typ
    return pa.string()


def result_table(query: dict[str, Any], rows: list[dict[str, Any]], schema: Any, plan_id: str, computed_at: datetime) -> Any:
    """Typed Arrow table of one query's generic result rows."""
    import pyarrow as pa

    columns: dict[str, list[Any]] = {f.name: [] for f in schema}
    aggs = query["aggregates"]
    for row in rows:
        group = json.loads(row["group_json"])
        values = json.loads(row["values_json"])
        for g, v in zip(query["group_by"], group, strict=True):
            columns[g].append(v)
        columns["window_start"].append(_dt(row["window_start"]))
        columns["window_end"].append(_dt(row["window_end"]))
        over = []
        for agg in aggs:
            v = values.get(agg["name"])
            if v == "OVERFLOW":
                over.append(agg["name"])
                v = None
            elif v is not None and pa.types.is_decimal(schema.field(agg["name"]).type):
                v = Decimal(int(v))
            columns[agg["name"]].append(v)
        columns["overflowed"].append(over)
        columns["plan_id"].append(plan_id)
        columns["computed_at"].append(computed_at)
        columns["window_date"].append(_dt(row["window_end"] - 1).date())
    return pa.table(columns, schema=schema)


def _dt(us: int) -> datetime:
    seconds, micros = divmod(us, 1_000_000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=micros)


def window_predicate(start: int, end: int) -> str:
    """The Delta predicate selecting the rows replay replaces: window_end in (start, end]."""
    return (
        f"window_end > '{_dt(start).strftime('%Y-%m-%d %H:%M:%S.%f')}' "
        f"AND window_end <= '{_dt(end).strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    )


# --------------------------------------------------------------------------- the job


def parse_time(value: str | int | datetime) -> int:
    from engine.events import parse_ts

    return parse_ts(value)


def replay(
    lake_root: str | Path,
    workload_path: str | Path,
    start: str | int | datetime,
    end: str | int | datetime,
    *,
    stream: str = "rides",
    spark: Any = None,
    plan: dict[str, Any] | None = None,
) -> ReplayReport:
    """Replay the windows ending in ``(start, end]`` of every query of the current plan."""
    import engine
    import optimizer
    from jobs import lake as lakelib
    from jobs.optimize import current_plan, workload_name
    from jobs.spark import get_spark

    started = time.perf_counter()
    start_us, end_us = parse_time(start), parse_time(end)
    if end_us <= start_us:
        raise ReplayError(f"empty interval: --to must be after --from ({start} .. {end})")
    text = Path(workload_path).read_text()
    whash = optimizer.workload_hash(text)
    plan = plan if plan is not None else current_plan(lake_root, workload_name(workload_path))
    try:
        compiled = engine.load_plan(plan, workload_hash=whash)
    except engine.PlanError as err:
        raise ReplayError(f"refusing plan: {err}") from None
    report = ReplayReport(compiled.plan_id, start_us, end_us)
    spark = spark or get_spark()
    lake = lakelib.Lake(lake_root)
    bronze = lake.read_spark(spark, f"bronze/{stream}")
    if bronze is None:
        raise ReplayError(f"no bronze table for stream {stream!r} under {lake_root}; run ingest first")
    bronze_schema = lake.arrow_schema(f"bronze/{stream}")
    lo, hi = needed_range(list(compiled.queries.values()), start_us, end_us)
    from pyspark.sql import functions as F

    events = bronze.where(
        (F.col("event_date") >= F.lit(_dt(lo).date())) & (F.col("event_date") <= F.lit(_dt(hi - 1).date()))
    ).where((F.col("ts") >= F.lit(_dt(lo))) & (F.col("ts") < F.lit(_dt(hi))))
    cond = pushdown_filter(plan, set(bronze.columns))
    if cond is not None:
        events = events.where(cond)
    keep = [c for c in bronze.columns if c not in ("event_date", "source_file")]
    events = events.select(*keep)

    by_key: dict[tuple[str, ...], list[str]] = {}
    for name, q in compiled.queries.items():
        by_key.setdefault(q.partition_by, []).append(name)
    generic = None
    for keys, names in by_key.items():
        part = events
        for k in keys:
            part = part.where(F.col(k).isNotNull())

        def run_group(table: Any, _names: list[str] = names) -> Any:
            return evaluate_partition(plan, _names, table, start_us, end_us)

        grouped = part.groupBy(*keys) if keys else part.groupBy(F.lit(0))
        out = grouped.applyInArrow(run_group, GENERIC_SCHEMA)
        generic = out if generic is None else generic.unionByName(out)
    rows = generic.toArrow().to_pylist() if generic is not None else []
    computed_at = datetime.now(UTC)
    for q in plan["queries"]:
        name = q["name"]
        schema = result_schema(q, bronze_schema)
        table = result_table(q, [r for r in rows if r["query"] == name], schema, compiled.plan_id, computed_at)
        lake.replace_rows(f"results/{name}", table, window_predicate(start_us, end_us), partition_by=["window_date"])
        report.rows_written[name] = table.num_rows
    report.seconds = time.perf_counter() - started
    log.info(
        "replayed %s .. %s with plan %s: %s rows in %.1fs",
        _dt(start_us), _dt(end_us), compiled.plan_id, sum(report.rows_written.values()), report.seconds,
    )
    return report


def add_parser(sub: Any) -> None:
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
    p.add_argument("--lake", required=True, type=Path, help="lake root folder")
    p.add_argument("--stream", default="rides", help="stream name (default: rides)")
    p.add_argument("--from", dest="start", required=True, help="interval start (ISO-8601 or epoch seconds), exclusive")
    p.add_argument("--to", dest="end", required=True, help="interval end (ISO-8601 or epoch seconds), inclusive")
    p.set_defaults(func=_run)


def _run(args: Any) -> int:
    import sys

    try:
        report = replay(args.lake, args.workload, args.start, args.end, stream=args.stream)
    except (ReplayError, FileNotFoundError, ValueError) as err:
        print(f"trendlake: error: {err}", file=sys.stderr)
        return 2
    for name, n in report.rows_written.items():
        print(f"results.{name}: {n} rows for windows ending in ({_dt(report.start)}, {_dt(report.end)}]")
    print(f"plan {report.plan_id}, {report.seconds:.1f}s")
    return 0
