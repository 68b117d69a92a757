"""The drill job: the trends behind chosen result rows, from bronze into ``trends.<query>``.

``drill(lake, workload, query, top=K | windows=[...])`` picks windows of one query
-- the ``top`` rows of ``results.<query>`` by ``COUNT(*)`` (optionally only
windows ending in ``(start, end]``), or windows listed as ``GROUP=V,...@START`` --
reads exactly the events of each cluster (windows of one group that overlap)
from ``bronze.<stream>`` (partition pruning on ``event_date``, the time range of
their span, the group's values, the query's local predicates pushed down as
replay pushes them), and constructs their trends with
``engine.trends.SharedWindows`` (overlapping windows share graph and graphlets,
each window's trends exactly its own) under a memory budget inside the Spark
executors (``mapInArrow``, one cluster at a time per task). A window
whose trends do not fit is refused (reported with its ``COUNT(*)``); the
others still run. The driver collects the trend rows and replaces exactly the
drilled windows' rows of ``trends.<query>`` in one Delta transaction, so a
rerun leaves the same rows. docs/lake.md, "trends.<query>".
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import BadInputError
from trendlake.jobs.times import micros, utc

log = logging.getLogger("trendlake.drill")

DEFAULT_MEMORY = 2**30  # bytes per window: graph, state and the trends kept (as ``trendlake trends``)
ROWS_PER_BATCH = 4096  # trend rows per Arrow batch an executor yields
# the executors' rows: one info row per window (trend 0, a JSON summary), then its trends
GENERIC_SCHEMA = (
    "_w int, trend long, "
    "events array<struct<id: bigint, type: string, variable: string, ts: timestamp>>, info string"
)


class DrillInputError(BadInputError):
    """The drill cannot run on this input (no such query or window, no result table, bad window text)."""


@dataclass(frozen=True)
class Target:
    """One window to drill: a row of ``results.<query>``."""

    group: tuple[Any, ...]  # GROUP-BY values, typed as the result table holds them
    start: int  # µs
    end: int
    count: int | None  # the row's COUNT(*) (None: no COUNT(*) column, or overflowed)
    overflowed: bool
    plan_id: str | None
    replay_run_id: str | None


@dataclass
class WindowOutcome:
    target: Target
    status: str = "drilled"  # or "refused"
    trends: int = 0  # rows written
    listed: int = 0  # trends of the kind asked for (complete, or all), before the limit
    count_all: int = 0  # every trend: the aggregation's COUNT(*)
    algorithm: str | None = None
    message: str | None = None  # the refusal
    shared: bool = False  # planned on its cluster's shared graph and graphlets (engine.trends.sharing)
    graphlets: dict[str, int] = field(default_factory=dict)  # reused / partly / built


@dataclass
class DrillReport:
    query: str
    table: str
    run_id: str
    complete: bool
    limit: int | None
    memory: int
    group_by: list[str] = field(default_factory=list)
    windows: list[WindowOutcome] = field(default_factory=list)
    version: int | None = None  # of trends.<query> after the commit (None: nothing to do)
    rows_written: int = 0
    seconds: float = 0.0

    @property
    def refused(self) -> list[WindowOutcome]:
        return [w for w in self.windows if w.status == "refused"]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able summary (the DAG task's return value)."""
        from trendlake.engine.timeline import format_ts

        return {
            "query": self.query, "table": self.table, "run_id": self.run_id, "version": self.version,
            "rows_written": self.rows_written, "seconds": round(self.seconds, 3),
            "windows": [{
                "group": [_plain(v) for v in w.target.group], "window_start": format_ts(w.target.start),
                "window_end": format_ts(w.target.end), "count": w.target.count, "status": w.status,
                "trends": w.trends, "message": w.message, "shared": w.shared, "graphlets": w.graphlets,
            } for w in self.windows],
        }


def _plain(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


# --------------------------------------------------------------------------- choosing windows


def count_column(query: dict[str, Any]) -> str | None:
    """The result column of the query's ``COUNT(*)``, None when it returns none."""
    from trendlake.jobs.replay import result_columns

    cols = result_columns(query)
    return next((cols[a["name"]] for a in query["aggregates"] if a["fn"] == "count_star"), None)


def parse_window(text: str, query: dict[str, Any]) -> tuple[dict[str, str], int]:
    """``GROUP=V,...@START`` (``@START`` for a query without GROUP-BY) as ({attribute: value
    text}, start µs); every GROUP-BY attribute once, START a window start of the query."""
    from trendlake.engine.timeline import parse_ts

    where = f"--window {text!r}"
    groups, sep, start_text = text.rpartition("@")
    if not sep or not start_text.strip():
        raise DrillInputError(f"{where}: expected GROUP=VALUE,...@START (START: ISO-8601 or epoch seconds)")
    try:
        start = parse_ts(start_text.strip())
    except (ValueError, OverflowError):
        raise DrillInputError(f"{where}: {start_text!r} is not a time stamp (ISO-8601 or epoch seconds)") from None
    slide = query["window"]["slide_us"]
    if start % slide:
        raise DrillInputError(f"{where}: no window of query {query['name']} starts then (windows start every "
                              f"{slide / 1e6:g} seconds from the epoch)")
    values: dict[str, str] = {}
    for item in (groups.split(",") if groups.strip() else []):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise DrillInputError(f"{where}: expected ATTRIBUTE=VALUE, got {item!r}")
        if key not in query["group_by"]:
            raise DrillInputError(f"{where}: query {query['name']} groups by "
                                  f"{', '.join(query['group_by']) or 'nothing'}, not {key!r}")
        if key in values:
            raise DrillInputError(f"{where}: {key} given twice")
        values[key] = value
    missing = [g for g in query["group_by"] if g not in values]
    if missing:
        raise DrillInputError(f"{where}: query {query['name']} groups by {', '.join(query['group_by'])}; "
                              f"missing {', '.join(missing)}")
    return values, start


def same_value(value: Any, text: str) -> bool:
    """Whether a result table's group value is what ``text`` names (numbers compared as numbers)."""
    if isinstance(value, bool):
        return text.strip().lower() == str(value).lower()
    if isinstance(value, int):
        try:
            return int(text.strip()) == value
        except ValueError:
            return False
    if isinstance(value, float):
        try:
            return float(text.strip()) == value
        except ValueError:
            return False
    return str(value) == text


def result_targets(query: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[Target]:
    """The result rows (as ``read_arrow(...).to_pylist()``) as drill targets."""
    count = count_column(query)
    out = []
    for row in rows:
        over = count is not None and count in (row.get("overflowed") or [])
        value = row.get(count) if count is not None else None
        out.append(Target(
            group=tuple(row[g] for g in query["group_by"]), start=micros(row["window_start"]),
            end=micros(row["window_end"]), count=None if value is None else int(value), overflowed=over,
            plan_id=row.get("plan_id"), replay_run_id=row.get("replay_run_id"),
        ))
    return out


def top_targets(targets: Sequence[Target], k: int) -> list[Target]:
    """The ``k`` rows of largest ``COUNT(*)``; an overflowed count is larger than any stored one.
    Ties: the earlier window first, then the smaller group values (types are the column's)."""
    def key(t: Target) -> tuple[Any, ...]:
        size = math.inf if t.overflowed else (t.count if t.count is not None else -1)
        return (-size, t.start, t.group)

    return sorted(targets, key=key)[:k]


def listed_targets(query: dict[str, Any], targets: Sequence[Target], texts: Sequence[str]) -> list[Target]:
    """The result rows the ``--window`` texts name, in the order given (each once); a window
    without a result row is refused (it has no trend, or its interval was not replayed)."""
    from trendlake.engine.timeline import format_ts

    chosen: list[Target] = []
    for text in texts:
        values, start = parse_window(text, query)
        found = [t for t in targets if t.start == start
                 and all(same_value(v, values[g]) for g, v in zip(query["group_by"], t.group, strict=True))]
        if not found:
            raise DrillInputError(
                f"--window {text!r}: results.{query['name']} has no row for that group and window "
                f"[{format_ts(start)}, {format_ts(start + query['window']['within_us'])}) (no trend there, or its "
                "interval was not replayed)")
        if len(found) > 1:
            raise DrillInputError(f"--window {text!r} names {len(found)} rows of results.{query['name']}")
        if found[0] not in chosen:
            chosen.append(found[0])
    return chosen


# --------------------------------------------------------------------------- executor side


def target_clusters(targets: Sequence[tuple[tuple[Any, ...], int]], within: int) -> list[list[int]]:
    """The targets ((group, start µs)) as clusters: per group, chains of overlapping windows (each
    by start), which share their graph and graphlets (``engine.trends.sharing``)."""
    from trendlake.engine.trends.sharing import clusters

    by_group: dict[Any, list[int]] = {}
    for w, (group, _) in enumerate(targets):
        by_group.setdefault(tuple(group), []).append(w)
    out = []
    for ws in by_group.values():
        for c in clusters([(targets[w][1], targets[w][1] + within) for w in ws]):
            out.append([ws[i] for i in c])
    return sorted(out)


def drill_windows(
    plan_raw: dict[str, Any], query: str, targets: Sequence[tuple[tuple[Any, ...], int]], table: Any,
    complete: bool, memory: int, limit: int | None, clusters: Sequence[Sequence[int]] | None = None,
) -> Iterator[Any]:
    """Arrow batches (``GENERIC_SCHEMA``) of the windows whose events ``table`` holds.

    ``table``: events with ``_c`` (the number of a cluster of ``clusters``: window numbers in
    ``targets``, (group, start µs), of one group that overlap; default ``target_clusters``),
    sorted by ``_c, ts, seq``: each cluster's events, those of its span, contiguous. The
    windows of a cluster are drilled by start sharing their graph and graphlets
    (``engine.trends.SharedWindows``; each window's trends exactly its own). Per window one
    info row (trend 0: JSON with the status, counts, plan and what it shared, or the
    refusal) and its trends, numbered from 1 in the order the algorithm constructs them; the
    trends stream out in batches, never all held.
    """
    import numpy as np
    import pyarrow as pa
    from trendlake.engine.columns import events_from_arrow
    from trendlake.engine.trends import SharedWindows, TrendsRefused
    from trendlake.jobs.replay import compiled_plan

    q = compiled_plan(plan_raw).queries[query]
    clusters = clusters if clusters is not None else target_clusters(targets, q.within)
    schema = arrow_generic_schema()
    c_col = table.column("_c").to_numpy()
    cuts = [0, *(np.flatnonzero(c_col[1:] != c_col[:-1]) + 1).tolist(), len(c_col)]
    for lo, hi in zip(cuts, cuts[1:], strict=False):
        if hi <= lo:
            continue
        c = int(c_col[lo])
        windows = {targets[w][1] // q.slide: w for w in clusters[c]}
        group = targets[clusters[c][0]][0]
        events = events_from_arrow(table.slice(lo, hi - lo).drop_columns(["_c"]), where=f"cluster {c}")
        shared = SharedWindows(q, events, group, sorted(windows), complete=complete, memory=memory, limit=limit)
        for k, p in shared.plans():
            w = windows[k]
            d, refusal = None, p if isinstance(p, TrendsRefused) else None
            if refusal is None:
                try:
                    d = p.drill()
                except TrendsRefused as err:
                    refusal = err
            info: dict[str, Any] = ({"status": "refused", "message": str(refusal)} if refusal is not None
                                    else {"status": "drilled"})
            before = shared.stats.graphlet_counts()
            rows: list[dict[str, Any]] = []
            n = 0
            if d is not None:
                for n, trend in enumerate(d.trends(), start=1):
                    rows.append({"_w": w, "trend": n, "info": None, "events": [
                        {"id": e.seq, "type": e.type, "variable": var, "ts": e.ts} for e, var in trend]})
                    if len(rows) >= ROWS_PER_BATCH:
                        yield pa.RecordBatch.from_pylist(rows, schema=schema)
                        rows = []
                info.update(count_all=d.count_all, listed=d.count, algorithm=d.plan.algorithm,
                            cuts=len(d.plan.cuts), memory=d.plan.memory, shared=d.sharing is not None,
                            **{f"graphlets_{k}": v - before[k] for k, v in shared.stats.graphlet_counts().items()})
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=schema)
            # the info row after the trends: what they shared is known once they are constructed
            yield pa.RecordBatch.from_pylist([{"_w": w, "trend": 0, "events": None, "info": json.dumps(info)}],
                                             schema=schema)


SHARED_COUNTS = ("graphlets_reused", "graphlets_partly", "graphlets_built")


def arrow_generic_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        ("_w", pa.int32()), ("trend", pa.int64()), ("events", events_type()), ("info", pa.string()),
    ])


def events_type(ts_type: Any = None) -> Any:
    """``list<struct<id, type, variable, ts>>``: a trend's events (``ts`` µs UTC by default)."""
    import pyarrow as pa

    return pa.list_(pa.struct([
        ("id", pa.int64()), ("type", pa.string()), ("variable", pa.string()),
        ("ts", ts_type if ts_type is not None else pa.timestamp("us", tz="UTC")),
    ]))


def run_sorted_batches(
    plan_raw: dict[str, Any], query: str, targets: Sequence[tuple[tuple[Any, ...], int]], batches: Any,
    complete: bool, memory: int, limit: int | None, clusters: Sequence[Sequence[int]] | None = None,
) -> Iterator[Any]:
    """``mapInArrow`` body: a task's batches (sorted by ``_c, ts, seq``) drilled cluster by cluster."""
    import pyarrow as pa

    pending = [b for b in batches if b.num_rows]
    if not pending:
        return
    yield from drill_windows(plan_raw, query, targets, pa.Table.from_batches(pending), complete, memory, limit,
                             clusters)


# --------------------------------------------------------------------------- the trends table


def trends_schema(query: dict[str, Any], results_schema: Any) -> Any:
    """The Arrow schema of ``trends.<query>`` (docs/lake.md): group columns typed as in
    ``results.<query>``."""
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    fields = [pa.field("query", pa.string(), nullable=False)]
    fields += [results_schema.field(g) for g in query["group_by"]]
    fields += [
        pa.field("window_start", ts, nullable=False), pa.field("window_end", ts, nullable=False),
        pa.field("trend", pa.int64(), nullable=False), pa.field("complete", pa.bool_()),
        pa.field("events", events_type()), pa.field("plan_id", pa.string()), pa.field("replay_run_id", pa.string()),
        pa.field("drill_run_id", pa.string()), pa.field("computed_at", ts), pa.field("window_date", pa.date32()),
    ]
    return pa.schema(fields)


def _literal(value: Any) -> str:
    """A DataFusion SQL literal of a group value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"'{value}'"
    return "'" + str(value).replace("'", "''") + "'"


def windows_predicate(query: dict[str, Any], targets: Sequence[Target]) -> str:
    """The Delta predicate selecting exactly the rows of ``targets``' windows."""
    def stamp(us: int) -> str:
        return f"'{utc(us).strftime('%Y-%m-%d %H:%M:%S.%f')}'"

    terms = []
    for t in targets:
        parts = [f"window_date = '{utc(t.end - 1).date().isoformat()}'", f"window_start = {stamp(t.start)}"]
        parts += [f"{g} = {_literal(v)}" for g, v in zip(query["group_by"], t.group, strict=True)]
        terms.append("(" + " AND ".join(parts) + ")")
    return " OR ".join(terms)


def trends_table(
    query: dict[str, Any], targets: Sequence[Target], rows: Any, schema: Any, complete: bool, run_id: str,
    computed_at: datetime,
) -> Any:
    """The typed rows of ``trends.<query>`` from the executors' trend rows (``_w``, ``trend``, ``events``)."""
    import pyarrow as pa

    w = rows.column("_w").to_pylist()
    columns: dict[str, Any] = {
        "query": pa.array([query["name"]] * len(w), pa.string()),
    }
    for i, g in enumerate(query["group_by"]):
        columns[g] = pa.array([targets[x].group[i] for x in w], schema.field(g).type)
    ts = pa.timestamp("us", tz="UTC")
    columns["window_start"] = pa.array([utc(targets[x].start) for x in w], ts)
    columns["window_end"] = pa.array([utc(targets[x].end) for x in w], ts)
    columns["trend"] = rows.column("trend").cast(pa.int64())
    columns["complete"] = pa.array([complete] * len(w), pa.bool_())
    columns["events"] = rows.column("events").cast(events_type())
    columns["plan_id"] = pa.array([targets[x].plan_id for x in w], pa.string())
    columns["replay_run_id"] = pa.array([targets[x].replay_run_id for x in w], pa.string())
    columns["drill_run_id"] = pa.array([run_id] * len(w), pa.string())
    columns["computed_at"] = pa.array([computed_at] * len(w), ts)
    columns["window_date"] = pa.array([utc(targets[x].end - 1).date() for x in w], pa.date32())
    return pa.table(columns, schema=schema)


# --------------------------------------------------------------------------- the job


def window_events(
    bronze: Any, plan_raw: dict[str, Any], query: dict[str, Any], targets: Sequence[Target],
    clusters: Sequence[Sequence[int]],
) -> Any:
    """Every cluster's events from bronze (``clusters``: target numbers of one group whose
    windows overlap), tagged ``_c`` (its number), partitioned by ``_c`` and sorted by ``_c, ts,
    seq``: the date partitions and time range of its windows' span, its group's values, the
    partition key present, the query's local predicates pushed down (as replay's
    ``keyed_inputs``), only the columns the query reads. An event is read once per cluster."""
    from pyspark.sql import functions as F
    from trendlake.engine.executor import referenced_attributes
    from trendlake.jobs.spark_expr import pushdown_filter

    columns = set(bronze.columns)
    keys = list(query.get("partition_by", []))
    keep = ["type", "ts", "seq", *keys]
    keep += sorted(c for c in referenced_attributes(query) & columns if c not in keep)
    cond = pushdown_filter(plan_raw, bronze.dtypes, [query["name"]])
    frame = None
    for i, members in enumerate(clusters):
        t = targets[members[0]]
        lo, hi = min(targets[w].start for w in members), max(targets[w].end for w in members)
        part = bronze.where(
            (F.col("event_date") >= F.lit(utc(lo).date())) & (F.col("event_date") <= F.lit(utc(hi - 1).date()))
        ).where((F.col("ts") >= F.lit(utc(lo))) & (F.col("ts") < F.lit(utc(hi))))
        for g, v in zip(query["group_by"], t.group, strict=True):
            part = part.where(F.col(g) == F.lit(v))
        for k in keys:
            part = part.where(F.col(k).isNotNull())
        if cond is not None:
            part = part.where(cond)
        part = part.select(*keep).withColumn("_c", F.lit(i).cast("int"))
        frame = part if frame is None else frame.unionByName(part)
    return frame.repartition(F.col("_c")).sortWithinPartitions("_c", "ts", "seq")


def drill(
    lake_root: str | Path,
    workload_path: str | Path,
    query: str,
    *,
    top: int | None = None,
    windows: Sequence[str] = (),
    start: Any = None,
    end: Any = None,
    limit: int | None = None,
    memory: int = DEFAULT_MEMORY,
    complete: bool = True,
    stream: str = "rides",
    spark: Any = None,
    plan: dict[str, Any] | None = None,
) -> DrillReport:
    """Construct the trends of the ``top`` windows of ``results.<query>`` (by ``COUNT(*)``; with
    ``start``/``end`` only windows ending in ``(start, end]``) or of the listed ``windows``
    (``GROUP=V,...@START``), and replace those windows' rows of ``trends.<query>``."""
    from trendlake.jobs import lake as lakelib
    from trendlake.jobs.optimize import current_plan, workload_name
    from trendlake.jobs.replay import new_run_id
    from trendlake.jobs.spark import get_spark

    from trendlake import engine, optimizer

    started = time.perf_counter()
    if (top is None) == (not windows):
        raise DrillInputError("give --top K or --window GROUP=V,...@START (one or more), and not both")
    if top is not None and top < 1:
        raise DrillInputError(f"--top {top}: must be at least 1")
    if windows and (start is not None or end is not None):
        raise DrillInputError("--from/--to choose among the top windows; listed windows need neither")
    if (start is None) != (end is None):
        raise DrillInputError("give both --from and --to, or neither")
    if limit is not None and limit < 1:
        raise DrillInputError(f"--limit {limit}: must be at least 1")
    if memory < 1:
        raise DrillInputError(f"--memory {memory}: must be at least 1 byte")
    text = Path(workload_path).read_text()
    plan = plan if plan is not None else current_plan(lake_root, workload_name(workload_path))
    try:
        engine.load_plan(plan, workload_hash=optimizer.workload_hash(text))
    except engine.PlanError as err:
        raise DrillInputError(f"refusing plan: {err}") from None
    specs = {q["name"]: q for q in plan["queries"]}
    if query not in specs:
        raise DrillInputError(f"--query: no query {query!r} in the plan of {workload_path} "
                              f"(queries: {', '.join(specs)})")
    spec = specs[query]
    lakelib.check_name(query, "query name")
    stream = lakelib.resolve_stream(stream, lake_root, need_schema=False)[0]
    lake = lakelib.Lake(lake_root)
    results = lake.read_arrow(f"results/{query}")
    if results is None:
        raise DrillInputError(f"no table results.{query} under {lake_root}; run replay first")
    table_name = f"trends/{query}"
    lake.path(table_name)
    targets = result_targets(spec, results.to_pylist())
    if top is not None:
        if count_column(spec) is None:
            raise DrillInputError(f"--top: query {query} returns no COUNT(*) to rank its windows by; "
                                  "list windows with --window")
        if start is not None:
            lo, hi = micros(start), micros(end)
            if hi <= lo:
                raise DrillInputError(f"empty interval: --to must be after --from ({start} .. {end})")
            targets = [t for t in targets if lo < t.end <= hi]
        chosen = top_targets(targets, top)
    else:
        chosen = listed_targets(spec, targets, windows)
    computed_at = datetime.now(UTC)
    report = DrillReport(query, table_name, new_run_id(computed_at), complete, limit, memory,
                         list(spec["group_by"]), [WindowOutcome(t) for t in chosen])
    if not chosen:
        report.seconds = time.perf_counter() - started
        log.info("drill %s: no windows to drill", query)
        return report

    if not lake.exists(f"bronze/{stream}"):  # before a JVM starts: the error comes at once
        raise DrillInputError(f"no bronze table for stream {stream!r} under {lake_root}; run ingest first")
    spark = spark or get_spark()
    bronze = lake.read_spark(spark, f"bronze/{stream}")
    pairs = [(t.group, t.start) for t in chosen]
    clusters = target_clusters(pairs, spec["window"]["within_us"])
    frame = window_events(bronze, plan, spec, chosen, clusters)

    def run(batches: Any) -> Any:
        return run_sorted_batches(plan, query, pairs, batches, complete, memory, limit, clusters)

    import pyarrow.compute as pc

    rows = frame.mapInArrow(run, GENERIC_SCHEMA).toArrow()
    is_info = pc.equal(rows.column("trend"), 0)
    info = rows.filter(is_info)
    for w, text_info in zip(info.column("_w").to_pylist(), info.column("info").to_pylist(), strict=True):
        data, outcome = json.loads(text_info), report.windows[w]
        outcome.status, outcome.message = data["status"], data.get("message")
        outcome.count_all, outcome.listed = data.get("count_all", 0), data.get("listed", 0)
        outcome.algorithm = data.get("algorithm")
        outcome.shared = bool(data.get("shared"))
        outcome.graphlets = {k.removeprefix("graphlets_"): data.get(k, 0) for k in SHARED_COUNTS}
    trend_rows = rows.filter(pc.invert(is_info))
    for w in trend_rows.column("_w").to_pylist():
        report.windows[w].trends += 1

    schema = trends_schema(spec, results.schema)
    data = trends_table(spec, chosen, trend_rows, schema, complete, report.run_id, computed_at)
    report.version = lake.write(table_name, data, lakelib.ReplaceWhere(windows_predicate(spec, chosen)),
                                partition_by=["window_date"])
    report.rows_written = data.num_rows
    report.seconds = time.perf_counter() - started
    log.info("drilled %d windows of %s (%d refused): %d trend rows, version %s, %.1fs", len(chosen), query,
             len(report.refused), data.num_rows, report.version, report.seconds)
    return report
