"""The statistics job: ``run_stats`` computes the statistics of ``jobs.statistics`` (their
definition, rows and Arrow path) in Spark over the bronze events of ``[start, end)`` and appends
them to ``stats/<stream>`` as one run; ``latest_statistics`` reads the newest run back as the
document the optimizer records in a plan. Both paths reduce the events to the same integer
``Aggregates`` and derive the rows with the same ``build_rows``, so they agree exactly.
"""

from __future__ import annotations

import functools
import json
import logging
import operator
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import BadInputError
from trendlake.jobs.statistics import (
    Aggregates,
    BurstSpec,
    PredicateCounter,
    Spec,
    build_rows,
    group_json,
    make_spec,
    pane_count,
    predicate_batches,
    statistics_dict,
    stats_table_schema,
)
from trendlake.jobs.times import micros, utc

log = logging.getLogger("trendlake.stats")


def spark_aggregates(df: Any, spec: Spec, start_us: int, end_us: int) -> Aggregates:
    """The integer aggregates of a Spark DataFrame of events in ``[start_us, end_us)`` (bronze columns)."""
    from pyspark.sql import functions as F

    present = set(df.columns)
    ts_us = F.unix_micros(F.col("ts"))
    pane = F.expr(f"(unix_micros(ts) - pmod(unix_micros(ts), {spec.pane_us})) div {spec.pane_us}")
    cols = [F.col("type"), F.col("ts"), F.col("seq")]
    cols += [F.col(f"`{c}`") if c in present else F.lit(None).cast("string").alias(c) for c in spec.attributes]
    base = (
        df.where((ts_us >= F.lit(start_us)) & (ts_us < F.lit(end_us)))
        .select(*cols)
        .withColumn("_pane", pane)
        .persist()
    )
    try:
        agg = Aggregates(panes=pane_count(start_us, end_us, spec.pane_us))

        def rate_of(frame: Any, keys: list[str]) -> list[Any]:
            per_pane = frame.groupBy("type", *keys, "_pane").count()
            return per_pane.groupBy("type", *keys).agg(
                F.sum("count").alias("events"), F.max("count").alias("most")).collect()

        for r in rate_of(base, []):
            agg.rate[r["type"]] = (int(r["events"]), int(r["most"]))
        if spec.group_by:
            grouped = base
            for k in spec.group_by:
                grouped = grouped.where(F.col(f"`{k}`").isNotNull())
            for r in rate_of(grouped, spec.group_by):
                key = group_json(r[k] for k in spec.group_by)
                agg.group_rate[(r["type"], key)] = (int(r["events"]), int(r["most"]))
            agg.grouped_events = sum(e for e, _ in agg.group_rate.values())
            for t, _key in agg.group_rate:
                agg.groups_by_type[t] = agg.groups_by_type.get(t, 0) + 1
            agg.groups_total = len({key for _t, key in agg.group_rate})
        agg.partitions = _spark_partitions(base, spec.partitionings)
        agg.bursts = _spark_bursts(base, spec.bursts)
        if spec.predicates:
            counter = PredicateCounter(spec.predicates)
            needed = list(dict.fromkeys(["type", *spec.attributes]))
            frame = base.where(F.col("type").isin(counter.types)).select(*[F.col(f"`{c}`") for c in needed])
            specs = spec.predicates

            def count(batches: Iterator[Any]) -> Iterator[Any]:
                return predicate_batches(batches, specs)

            totals = (
                frame.mapInArrow(count, "spec long, conjunct long, events long, matched long")
                .groupBy("spec", "conjunct").agg(F.sum("events").alias("events"), F.sum("matched").alias("matched"))
                .collect()
            )
            found = {(r["spec"], r["conjunct"]): (int(r["events"]), int(r["matched"])) for r in totals}
            agg.predicates = [(i, c, *found.get((i, c), (0, 0))) for i, c, _, _ in counter.counts()]
        return agg
    finally:
        base.unpersist()


def _spark_partitions(base: Any, partitionings: list[tuple[str, ...]]) -> list[tuple[int, int, dict[str, tuple[int, int]]]]:
    """``_partitions_arrow`` of every partitioning in two Spark jobs (per type, and overall):
    ``countDistinct`` over a partitioning's keys leaves out rows lacking one, as the engine does."""
    from pyspark.sql import functions as F

    if not partitionings:
        return []

    def keyed(keys: tuple[str, ...]) -> Any:
        lacking = functools.reduce(operator.or_, [F.col(f"`{k}`").isNull() for k in keys])
        return F.when(lacking, None).otherwise(F.lit(1))

    def distinct(keys: tuple[str, ...]) -> Any:
        return F.countDistinct(*[F.col(f"`{k}`") for k in keys])

    exprs = [e for i, keys in enumerate(partitionings)
             for e in (distinct(keys).alias(f"p{i}"), F.count(keyed(keys)).alias(f"e{i}"))]
    per_type = base.groupBy("type").agg(*exprs).collect()
    overall = base.agg(*[distinct(keys).alias(f"p{i}") for i, keys in enumerate(partitionings)]).collect()[0]
    out = []
    for i in range(len(partitionings)):
        types = {r["type"]: (int(r[f"p{i}"]), int(r[f"e{i}"])) for r in per_type if r[f"e{i}"]}
        out.append((int(overall[f"p{i}"]), sum(e for _, e in types.values()), types))
    return out


def _spark_bursts(base: Any, bursts: list[BurstSpec]) -> list[dict[str, tuple[int, int, int]]]:
    """Every burst spec's runs in one Spark query: per spec, the runs of one event type in a row
    (per partition of its ``partition_by``, in ``ts, seq`` order) as ``type -> (runs, events, most)``.

    The specs' events are stacked under a spec number, with one column per key attribute of
    any spec (NULL where a spec does not partition by it), and numbered into runs in one
    window partitioned by the spec and the keys: one shuffle and one job for all specs
    where a query per spec scanned the events once each.
    """
    from functools import reduce

    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not bursts:
        return []
    keys = list(dict.fromkeys(k for b in bursts for k in b.partition_by))
    key_cols = [f"_k{j}" for j in range(len(keys))]
    key_types = dict(base.dtypes)
    stacked = []
    for i, b in enumerate(bursts):
        frame = base.where(F.col("type").isin(list(b.types)))
        for k in b.partition_by:
            frame = frame.where(F.col(f"`{k}`").isNotNull())
        stacked.append(frame.select(
            F.lit(i).alias("_spec"), "type", "ts", "seq",
            *[(F.col(f"`{k}`") if k in b.partition_by else F.lit(None).cast(key_types[k])).alias(c)
              for k, c in zip(keys, key_cols, strict=True)],
        ))
    frame = reduce(lambda a, b: a.unionByName(b), stacked)
    order = Window.partitionBy("_spec", *key_cols).orderBy("ts", "seq")
    prev = F.lag("type").over(order)
    frame = frame.withColumn("_new", F.when(prev.isNull() | (prev != F.col("type")), 1).otherwise(0))
    frame = frame.withColumn("_run", F.sum("_new").over(order.rowsBetween(Window.unboundedPreceding, 0)))
    runs = frame.groupBy("_spec", *key_cols, "_run", "type").count()
    per_type = runs.groupBy("_spec", "type").agg(
        F.count("*").alias("runs"), F.sum("count").alias("events"), F.max("count").alias("most"))
    out: list[dict[str, tuple[int, int, int]]] = [{} for _ in bursts]
    for r in per_type.collect():
        out[r["_spec"]][r["type"]] = (int(r["runs"]), int(r["events"]), int(r["most"]))
    return out


def run_stats(
    lake_root: str | Path,
    stream: str,
    workload_path: str | Path | None,
    start: Any,
    end: Any,
    spark: Any = None,
    group_by: list[str] | None = None,
    pane_seconds: float | None = None,
) -> int:
    """Compute the statistics of bronze events in ``[start, end)`` in Spark; append them as one run.

    Returns the new version of ``stats/<stream>``. ``stream`` is a bundled
    stream name or a stream schema path; ``start``/``end`` are ISO-8601 text,
    datetimes or µs.
    """
    import pyarrow as pa
    from pyspark.sql import functions as F
    from trendlake.jobs.lake import Lake, resolve_stream
    from trendlake.jobs.spark import get_spark

    started = time.perf_counter()
    name, schema = resolve_stream(stream, lake_root)
    assert schema is not None
    start_us, end_us = micros(start), micros(end)
    if end_us <= start_us:
        raise BadInputError(f"empty stats range: end must be after start ({start} .. {end})")
    spec = make_spec(schema, workload_path, pane_seconds, group_by)
    lake = Lake(lake_root)
    if not lake.exists(lake.bronze(name)):  # before a JVM starts: the error comes at once
        raise FileNotFoundError(f"no bronze table for stream {name!r} under {lake_root}; run ingest first")
    spark = spark or get_spark()
    bronze = lake.read_spark(spark, lake.bronze(name))
    first, last = utc(start_us).date(), utc(end_us - 1).date()
    bronze = bronze.where((F.col("event_date") >= F.lit(first)) & (F.col("event_date") <= F.lit(last)))
    rows = build_rows(spec, spark_aggregates(bronze, spec, start_us, end_us))
    run = {
        "run_id": uuid.uuid4().hex,
        "stream": name,
        "computed_at": datetime.now(UTC),
        "range_start": utc(start_us),
        "range_end": utc(end_us),
        "pane_us": spec.pane_us,
        "workload_hash": spec.workload_hash,
        "group_by": json.dumps(spec.group_by) if spec.group_by else None,
    }
    table = pa.Table.from_pylist([{**run, **r} for r in rows], schema=stats_table_schema())
    version = lake.write(lake.stats(name), table)
    log.info("stats %s [%s, %s): %d rows, version %s in %.1fs",
             name, utc(start_us), utc(end_us), len(rows), version, time.perf_counter() - started)
    return version


# ---------------------------------------------------------------------- reading runs back


def read_runs(lake_root: str | Path, stream: str) -> Any:
    """The whole ``stats/<stream>`` table as Arrow (None when absent)."""
    from trendlake.jobs.lake import Lake

    lake = Lake(lake_root)
    return lake.read_arrow(lake.stats(_stream_name(stream, lake_root)))


def latest_statistics(
    lake_root: str | Path, stream: str, workload: Any = None
) -> dict[str, Any] | None:
    """The newest stats run of ``stats/<stream>`` as a JSON-able dict, or None when there is none.

    With ``workload`` (a path, text or ``sha256:`` hash), only runs computed
    for that workload count.
    """
    table = read_runs(lake_root, stream)
    if table is None or table.num_rows == 0:
        return None
    rows = table.to_pylist()
    if workload is not None:
        wanted = workload if str(workload).startswith("sha256:") else _workload_hash(workload)
        rows = [r for r in rows if r["workload_hash"] == wanted]
        if not rows:
            return None
    newest = max(rows, key=lambda r: (r["computed_at"], r["run_id"]))
    run_rows = [r for r in rows if r["run_id"] == newest["run_id"]]
    return statistics_dict(run_rows)


def _workload_hash(workload: Any) -> str:
    from trendlake import optimizer
    text = Path(workload).read_text() if isinstance(workload, Path) or Path(str(workload)).exists() else str(workload)
    return optimizer.workload_hash(text)


def _stream_name(stream: str, lake_root: str | Path) -> str:
    from trendlake.jobs.lake import resolve_stream

    return resolve_stream(stream, lake_root, need_schema=False)[0]


def default_range(lake_root: str | Path, stream: str, start: Any, end: Any, days: float) -> tuple[int, int]:
    """``(start_us, end_us)`` from the CLI options (``end`` defaults to after bronze's newest event date)."""
    from trendlake.jobs.lake import Lake

    if end is not None:
        end_us = micros(end)
    else:
        lake = Lake(lake_root)
        newest = lake.max_partition_value(lake.bronze(_stream_name(stream, lake_root)), "event_date")
        if newest is None:
            raise FileNotFoundError(f"no bronze events for stream {stream!r} under {lake_root}; run ingest first")
        day = datetime.fromisoformat(str(newest)).replace(tzinfo=UTC) + timedelta(days=1)
        end_us = micros(day)
    start_us = micros(start) if start is not None else end_us - int(days * 86_400_000_000)
    return start_us, end_us
