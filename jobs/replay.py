"""The replay job: run a plan over the bronze panes of an interval into result tables.

For the windows that *end* inside ``(start, end]`` (a window ending exactly at
``end`` belongs to this interval, one ending at ``start`` to the previous
one), replay reads the needed panes of ``bronze.<stream>`` (partition pruning
on ``event_date``, a time filter, local predicates pushed down into Spark),
partitions them by each query's group-by and equivalence attributes, orders
each partition by ``(key, ts, seq)``, runs the engine per key in the Spark
executors (``mapInArrow`` over the sorted partitions), and replaces exactly those windows in every
``results.<query>`` table in one Delta transaction per table. Windows are
independent, so a rerun or a backfill of the same interval leaves the same
rows (all columns but ``computed_at`` and ``replay_run_id``).

A run is staged before it commits (``stage_results``): every table's rows
are computed, typed and checked against the table's schema and partitioning
first, so whatever can fail fails before anything is written. Each run has
an id (``replay_run_id``, in every row it writes) and rows in
``replay_log/<workload>``: ``started`` before the first commit, then
``complete`` or ``failed`` with the tables and versions it committed
(docs/lake.md §Replay runs).
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import BadInputError, JobError
from trendlake.jobs.times import micros, utc

log = logging.getLogger("trendlake.replay")

GENERIC_SCHEMA = "query string, group_json string, window_start long, window_end long, state_json string"


class ReplayError(JobError):
    """Replay refused to commit (rows it computed fall outside the windows it replaces)."""


class ReplayInputError(ReplayError, BadInputError):
    """Replay cannot run on this input (an empty interval, a plan for another workload, no
    bronze table, a result column named twice)."""


@dataclass
class ReplayReport:
    plan_id: str
    start: int
    end: int
    run_id: str = ""
    events_read: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    evaluate_seconds: float = 0.0  # read, shuffle, engine, driver merge
    write_seconds: float = 0.0  # the result tables' transactions
    # the engine's own seconds, summed over the executors' chunks: per sharing group
    # ("groups") and per query run alone ("queries"); engine.evaluate_partials' timings
    engine_seconds: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON (``replay --report-out``; ``explain --replay-report`` reads it)."""
        from trendlake.engine import format_ts

        return {
            "plan_id": self.plan_id, "run_id": self.run_id,
            "interval": {"start": format_ts(self.start), "end": format_ts(self.end)},
            "rows_written": dict(self.rows_written), "seconds": round(self.seconds, 3),
            "evaluate_seconds": round(self.evaluate_seconds, 3), "write_seconds": round(self.write_seconds, 3),
            "engine_seconds": {part: {k: round(v, 6) for k, v in sorted(d.items())}
                               for part, d in sorted(self.engine_seconds.items())},
        }


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


_PLANS: dict[str, Any] = {}
_PLANS_KEPT = 8


def compiled_plan(plan_raw: dict[str, Any]) -> Any:
    """The compiled plan, once per Python worker process and plan *content*.

    The plan travels with every task (pickled in the ``mapInArrow`` closure);
    each executor's Python workers compile it once. Workers are reused across
    the jobs of a session, so the cache is keyed by a hash of the whole plan:
    a plan edited under the same ``plan_id`` is compiled anew, never served
    from an earlier job.
    """
    import hashlib

    from trendlake import engine

    key = hashlib.sha256(json.dumps(plan_raw, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    if key not in _PLANS:
        if len(_PLANS) >= _PLANS_KEPT:
            _PLANS.clear()
        _PLANS[key] = engine.load_plan(plan_raw)
    return _PLANS[key]


def _generic_arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        ("query", pa.string()), ("group_json", pa.string()), ("window_start", pa.int64()),
        ("window_end", pa.int64()), ("state_json", pa.string()),
    ])


def evaluate_table(
    plan_raw: dict[str, Any], query_names: list[str], table: Any, start: int, end: int,
    sorted_by: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Partial (unfinalized) results of the events of some partitions (an Arrow table),
    windows ending in ``(start, end]``, as generic rows.

    The queries go through ``engine.evaluate_partials`` as one set, so a
    plan that shares work among queries of the same partition key is executed
    as planned. Several partitions (equivalence values) may belong to one
    group, and they may be evaluated in different tasks, so executors ship
    mergeable states and the driver combines them per (query, group, window)
    before finalizing.
    """
    from trendlake.engine.results import to_state

    from trendlake import engine

    plan = compiled_plan(plan_raw)
    timings: dict[str, dict[str, float]] = {}
    partials = engine.evaluate_partials(plan, table, queries=query_names, sorted_by=sorted_by, timings=timings)
    # the chunk's engine seconds ride along as a row without a query name (names are never empty)
    out = [{"query": "", "group_json": "", "window_start": 0, "window_end": 0, "state_json": json.dumps(timings)}]
    for name, by_window in partials.items():
        query = plan.queries[name]
        for (group, k), state in by_window.items():
            w_start, w_end = query.window_bounds(k)
            if not (start < w_end <= end):
                continue
            out.append({
                "query": name,
                "group_json": json.dumps(list(group)),
                "window_start": w_start,
                "window_end": w_end,
                "state_json": json.dumps(to_state(state)),
            })
    return out


def finish_rows(plan: Any, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Merge the executors' partial rows per (query, group, window) and finalize them.

    Returns query -> engine result rows (aggregates by name as written).
    """
    from trendlake.engine.results import from_state, merge_into

    from trendlake import engine

    partials: dict[str, dict[tuple[tuple[Any, ...], int], Any]] = {name: {} for name in plan.queries}
    for row in rows:
        if not row["query"]:  # the engine seconds of a chunk (``engine_seconds``)
            continue
        query = plan.queries[row["query"]]
        key = (tuple(json.loads(row["group_json"])), row["window_start"] // query.slide)
        merge_into(partials[row["query"]], key, from_state(json.loads(row["state_json"])))
    return {name: engine.finish_query(plan.queries[name], p) for name, p in partials.items()}


def engine_seconds(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The engine seconds the executors' chunks spent, summed per sharing group and per query
    run alone (the rows ``evaluate_table`` adds without a query name)."""
    total: dict[str, dict[str, float]] = {"groups": {}, "queries": {}}
    for row in rows:
        if row["query"]:
            continue
        for part, spent in json.loads(row["state_json"]).items():
            into = total.setdefault(part, {})
            for name, seconds in spent.items():
                into[name] = into.get(name, 0.0) + seconds
    return total


CHUNK_ROWS = 200_000  # rows evaluated together by an executor (whole partitions)


def evaluate_sorted_batches(
    plan_raw: dict[str, Any], query_names: list[str], keys: list[str], batches: Any, start: int, end: int
) -> Any:
    """``mapInArrow`` body: batches sorted by ``keys, ts, seq``; generic result rows.

    Rows of one key are contiguous (the DataFrame was repartitioned by the keys
    and sorted within partitions), possibly across batch boundaries. Batches
    are collected into chunks of about ``CHUNK_ROWS`` rows cut where a key
    starts, so every partition is evaluated whole, in one chunk.
    """
    import numpy as np
    import pyarrow as pa
    from trendlake.engine.timeline import key_runs

    schema = _generic_arrow_schema()

    def run(table: Any) -> Any:
        rows = evaluate_table(plan_raw, query_names, table, start, end, sorted_by=keys)
        return pa.RecordBatch.from_pylist(rows, schema=schema) if rows else None

    pending: list[Any] = []
    size = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        pending.append(batch)
        size += batch.num_rows
        if size < CHUNK_ROWS or not keys:
            continue
        table = pa.Table.from_batches(pending)
        cut = int(np.flatnonzero(key_runs(table, keys))[-1])  # where the last key starts
        if cut == 0:
            continue  # one key so far: keep collecting
        out = run(table.slice(0, cut))
        if out is not None:
            yield out
        pending = table.slice(cut).to_batches()
        size = table.num_rows - cut
    if pending:
        out = run(pa.Table.from_batches(pending))
        if out is not None:
            yield out


@dataclass
class KeyedInput:
    """The events one partition key's queries need, ready for ``mapInArrow``."""

    keys: list[str]
    queries: list[str]
    frame: Any  # repartitioned by keys, sorted within partitions by (keys, ts, seq)


def keyed_inputs(bronze: Any, plan_raw: dict[str, Any], lo: int, hi: int) -> list[KeyedInput]:
    """Per distinct partition key of the plan: the bronze events of ``[lo, hi)`` its
    queries may use, with only the columns they read, partitioned and sorted.

    Partition pruning on ``event_date``, a time filter, the key's queries' local
    predicates pushed down (``pushdown_filter``), rows lacking a key value
    dropped, projection to ``type, ts, seq``, the keys and the attributes the
    queries mention; then ``repartition(keys)`` and ``sortWithinPartitions(keys,
    ts, seq)`` so every partition's events arrive contiguous and in time order.
    """
    from pyspark.sql import functions as F
    from trendlake.engine.executor import referenced_attributes
    from trendlake.jobs.spark_expr import pushdown_filter

    columns = set(bronze.columns)
    window = bronze.where(
        (F.col("event_date") >= F.lit(utc(lo).date())) & (F.col("event_date") <= F.lit(utc(hi - 1).date()))
    ).where((F.col("ts") >= F.lit(utc(lo))) & (F.col("ts") < F.lit(utc(hi))))
    specs = {q["name"]: q for q in plan_raw["queries"]}
    by_key: dict[tuple[str, ...], list[str]] = {}
    for q in plan_raw["queries"]:
        by_key.setdefault(tuple(q.get("partition_by", [])), []).append(q["name"])
    out = []
    for keys, names in by_key.items():
        part = window
        cond = pushdown_filter(plan_raw, bronze.dtypes, names)
        if cond is not None:
            part = part.where(cond)
        for k in keys:
            part = part.where(F.col(k).isNotNull())
        used = set().union(*(referenced_attributes(specs[n]) for n in names))
        keep = ["type", "ts", "seq", *keys]
        keep += sorted(c for c in used & columns if c not in keep)
        part = part.select(*keep)
        key_cols = list(keys)
        part = part.repartition(*[F.col(k) for k in key_cols]) if key_cols else part.repartition(1)
        out.append(KeyedInput(key_cols, names, part.sortWithinPartitions(*key_cols, "ts", "seq")))
    return out


# --------------------------------------------------------------------------- result tables


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def column_name(agg: dict[str, Any]) -> str:
    """The result-table column of one RETURN aggregate.

    Its alias when it has one; otherwise a plain SQL identifier derived from the
    aggregate (``COUNT(*)`` -> ``count``, ``COUNT(R2)`` -> ``count_r2``,
    ``SUM(Travel.duration)`` -> ``sum_travel_duration``), so that analysts never
    need to quote result columns in Spark SQL and Delta accepts the name.
    """
    if _IDENT.match(agg["name"]):
        return agg["name"]
    fn = "count" if agg["fn"] == "count_star" else agg["fn"]
    parts = [fn] + [p for p in (agg.get("var"), agg.get("attr")) if p]
    return "_".join(parts).lower()


def result_columns(query: dict[str, Any]) -> dict[str, str]:
    """Aggregate name as written -> result-table column; refuses clashes."""
    out: dict[str, str] = {}
    taken = set(query["group_by"]) | {
        "window_start", "window_end", "overflowed", "plan_id", "replay_run_id", "computed_at", "window_date",
    }
    for agg in query["aggregates"]:
        col = column_name(agg)
        if col in taken:
            raise ReplayInputError(
                f"query {query['name']}: aggregate {agg['name']} maps to result column {col!r}, "
                "which is already used; give it an alias with AS"
            )
        taken.add(col)
        out[agg["name"]] = col
    return out


def result_schema(query: dict[str, Any], bronze_schema: Any) -> Any:
    """The Arrow schema of ``results.<query>`` (docs/lake.md)."""
    import pyarrow as pa

    def attr_type(name: str) -> pa.DataType:
        return _arrow_type(bronze_schema, name)

    fields = [pa.field(g, attr_type(g)) for g in query["group_by"]]
    cols = result_columns(query)
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
        fields.append(pa.field(cols[agg["name"]], typ))
    fields += [
        pa.field("overflowed", pa.list_(pa.string())),
        pa.field("plan_id", pa.string()),
        pa.field("replay_run_id", pa.string()),
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


def result_table(
    query: dict[str, Any], rows: list[dict[str, Any]], schema: Any, plan_id: str, computed_at: datetime,
    run_id: str | None = None,
) -> Any:
    """Typed Arrow table of one query's finished result rows (``finish_rows``)."""
    import pyarrow as pa
    from trendlake.engine import OVERFLOW

    columns: dict[str, list[Any]] = {f.name: [] for f in schema}
    aggs = query["aggregates"]
    cols = result_columns(query)
    for row in rows:
        for g in query["group_by"]:
            columns[g].append(_stored(row[g]))
        columns["window_start"].append(utc(row["window_start"]))
        columns["window_end"].append(utc(row["window_end"]))
        over = []
        for agg in aggs:
            col = cols[agg["name"]]
            v = row[agg["name"]]
            if v is OVERFLOW:
                over.append(col)
                v = None
            elif v is not None and pa.types.is_decimal(schema.field(col).type):
                v = Decimal(int(v))
            columns[col].append(_stored(v))
        columns["overflowed"].append(over)
        columns["plan_id"].append(plan_id)
        if "replay_run_id" in columns:
            columns["replay_run_id"].append(run_id)
        columns["computed_at"].append(computed_at)
        columns["window_date"].append(utc(row["window_end"] - 1).date())
    return pa.table(columns, schema=schema)


def _stored(value: Any) -> Any:
    """A value as a result table stores it: ``-0.0`` as ``0.0`` (they compare equal; eval
    prints ``0.0`` too), infinities and NaN as the double column's own values."""
    if isinstance(value, float) and value == 0.0:
        return 0.0
    return value


def window_predicate(start: int, end: int) -> str:
    """The Delta predicate selecting the rows replay replaces: window_end in (start, end]."""
    return (
        f"window_end > '{utc(start).strftime('%Y-%m-%d %H:%M:%S.%f')}' "
        f"AND window_end <= '{utc(end).strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    )


# --------------------------------------------------------------------------- the job


def new_run_id(now: datetime) -> str:
    """A replay run id: UTC start time and a random suffix, e.g. ``20260102T030405Z-1a2b3c4d``."""
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:8]}"


@dataclass
class StagedTable:
    """One result table's rows, typed and checked, ready for its commit."""

    query: str
    table: str
    data: Any
    predicate: str


def stage_results(
    lake: Any, plan: dict[str, Any], finished: dict[str, list[dict[str, Any]]], bronze_schema: Any,
    plan_id: str, computed_at: datetime, run_id: str, start_us: int, end_us: int,
) -> list[StagedTable]:
    """Every result table of a run, computed and checked before the first commit.

    Builds each query's typed Arrow rows and checks them against the existing
    table (table name and path, partitioning, schema, rows inside the
    replaced windows). A result table written before ``replay_run_id`` existed
    gets that (nullable) column added, a metadata-only commit that changes no
    row, once every table has been staged.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    from trendlake.jobs import lake as lakelib

    staged: list[StagedTable] = []
    missing_run_column: list[str] = []
    lo, hi = pa.scalar(utc(start_us), pa.timestamp("us", tz="UTC")), pa.scalar(utc(end_us), pa.timestamp("us", tz="UTC"))
    for q in plan["queries"]:
        name = q["name"]
        table = f"results/{name}"
        lake.path(table)  # a valid table name under the lake root
        schema = result_schema(q, bronze_schema)
        data = result_table(q, finished.get(name, []), schema, plan_id, computed_at, run_id)
        if lake.exists(table):
            lake._partitioning(table, ["window_date"])
            current = lake.arrow_schema(table)
            if "replay_run_id" not in current.names:
                missing_run_column.append(table)
                current = current.append(pa.field("replay_run_id", pa.string()))
            lakelib._check_same_schema(table, current, data.schema)
            data = data.select(current.names).cast(lakelib._nullable(current))
        if data.num_rows:
            ends = data.column("window_end")
            outside = pc.sum(pc.or_(pc.less_equal(ends, lo), pc.greater(ends, hi))).as_py()
            if outside:
                raise ReplayError(f"{table}: {outside} rows outside the windows being replaced; nothing written")
        staged.append(StagedTable(name, table, data, window_predicate(start_us, end_us)))
    for table in missing_run_column:
        _add_run_id_column(lake, table)
    return staged


def _add_run_id_column(lake: Any, table: str) -> None:
    from deltalake import DeltaTable
    from deltalake.schema import Field, PrimitiveType

    DeltaTable(str(lake.path(table))).alter.add_columns([Field("replay_run_id", PrimitiveType("string"), nullable=True)])
    log.info("added column replay_run_id to %s", table)


def log_table_name(workload: str) -> str:
    """The replay log's table name for a workload file's stem (``my-rides`` -> ``my_rides``):
    workload file names may hold characters a lake table name may not."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", workload)[:128]
    return name if name and not name[0].isdigit() else f"w_{name}"[:128]


def replay_log_schema() -> Any:
    """The Arrow schema of ``replay_log/<workload>`` (docs/lake.md)."""
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    return pa.schema([
        ("run_id", pa.string()), ("workload", pa.string()), ("plan_id", pa.string()), ("stream", pa.string()),
        ("interval_start", ts), ("interval_end", ts), ("status", pa.string()),
        ("tables", pa.list_(pa.string())), ("versions", pa.list_(pa.int64())), ("rows", pa.list_(pa.int64())),
        ("error", pa.string()), ("started_at", ts), ("logged_at", ts),
    ])


def write_replay_log(
    lake: Any, table: str, entry: dict[str, Any], status: str, tables: list[str], versions: list[int],
    rows: list[int], error: str | None = None,
) -> None:
    """Append one row to the replay log: ``started`` (tables planned), ``complete`` or ``failed`` (tables committed)."""
    import pyarrow as pa

    row = dict(entry, status=status, tables=tables, versions=versions, rows=rows, error=error,
               logged_at=datetime.now(UTC))
    lake.write(table, pa.Table.from_pylist([row], schema=replay_log_schema()))


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
    from trendlake.jobs import lake as lakelib
    from trendlake.jobs.optimize import current_plan, workload_name
    from trendlake.jobs.spark import get_spark

    from trendlake import engine, optimizer

    started = time.perf_counter()
    start_us, end_us = micros(start), micros(end)
    if end_us <= start_us:
        raise ReplayInputError(f"empty interval: --to must be after --from ({start} .. {end})")
    text = Path(workload_path).read_text()
    whash = optimizer.workload_hash(text)
    plan = plan if plan is not None else current_plan(lake_root, workload_name(workload_path))
    try:
        compiled = engine.load_plan(plan, workload_hash=whash)
    except engine.PlanError as err:
        raise ReplayInputError(f"refusing plan: {err}") from None
    stream = lakelib.resolve_stream(stream, lake_root, need_schema=False)[0]
    for q in plan["queries"]:  # every result table name, before anything runs or is written
        lakelib.check_name(q["name"], "query name")
    report = ReplayReport(compiled.plan_id, start_us, end_us)
    lake = lakelib.Lake(lake_root)
    if not lake.exists(f"bronze/{stream}"):  # before a JVM starts: the error comes at once
        raise ReplayInputError(f"no bronze table for stream {stream!r} under {lake_root}; run ingest first")
    spark = spark or get_spark()
    bronze = lake.read_spark(spark, f"bronze/{stream}")
    bronze_schema = lake.arrow_schema(f"bronze/{stream}")
    lo, hi = needed_range(list(compiled.queries.values()), start_us, end_us)
    generic = None
    for item in keyed_inputs(bronze, plan, lo, hi):

        def run_sorted(batches: Any, _names: list[str] = item.queries, _keys: list[str] = item.keys) -> Any:
            return evaluate_sorted_batches(plan, _names, _keys, batches, start_us, end_us)

        out = item.frame.mapInArrow(run_sorted, GENERIC_SCHEMA)
        generic = out if generic is None else generic.unionByName(out)
    partial_rows = generic.toArrow().to_pylist() if generic is not None else []
    finished = finish_rows(compiled, partial_rows)
    report.engine_seconds = engine_seconds(partial_rows)
    report.evaluate_seconds = time.perf_counter() - started
    computed_at = datetime.now(UTC)
    report.run_id = run_id = new_run_id(computed_at)
    staged = stage_results(lake, plan, finished, bronze_schema, compiled.plan_id, computed_at, run_id, start_us, end_us)
    log_table = f"replay_log/{log_table_name(workload_name(workload_path))}"
    entry = {
        "run_id": run_id, "workload": workload_name(workload_path), "plan_id": compiled.plan_id, "stream": stream,
        "interval_start": utc(start_us), "interval_end": utc(end_us), "started_at": computed_at,
    }
    write_replay_log(lake, log_table, entry, "started", [s.table for s in staged], [], [])
    committed: list[tuple[str, int, int]] = []
    try:
        for item in staged:
            version = lake.write(
                item.table, item.data, lakelib.ReplaceWhere(item.predicate), partition_by=["window_date"],
                settle_after=False,
            )
            committed.append((item.table, version, item.data.num_rows))
            report.rows_written[item.query] = item.data.num_rows
    except BaseException as err:
        try:
            write_replay_log(
                lake, log_table, entry, "failed", [c[0] for c in committed], [c[1] for c in committed],
                [c[2] for c in committed], error=f"{type(err).__name__}: {err}",
            )
        except Exception as log_err:  # noqa: BLE001 - the original error matters more
            log.warning("could not record the failed replay run %s: %s", run_id, log_err)
        raise
    finally:
        lakelib.settle()  # once for all the result tables' writes
    write_replay_log(
        lake, log_table, entry, "complete", [c[0] for c in committed], [c[1] for c in committed],
        [c[2] for c in committed],
    )
    report.seconds = time.perf_counter() - started
    report.write_seconds = report.seconds - report.evaluate_seconds
    # the run's report beside the plans: what explain --replay-report and the demo read
    folder = lake.reports(workload_name(workload_path))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{run_id}.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    log.info(
        "replayed %s .. %s with plan %s: %s rows in %.1fs (read + evaluate %.1fs, write %d tables %.1fs)",
        utc(start_us), utc(end_us), compiled.plan_id, sum(report.rows_written.values()), report.seconds,
        report.evaluate_seconds, len(report.rows_written), report.write_seconds,
    )
    return report
