"""Replay of a generated day vs an I/O baseline on the same SparkSession (``python -m benchmarks replay``).

What is compared, in one process, on the same bronze table and the same SparkSession:

* **replay** — ``jobs.replay.replay`` for the interval: for each distinct
  partition key of the plan, ``jobs.replay.keyed_inputs`` reads the bronze
  panes with that key's queries' predicates pushed down and only the columns
  they read, repartitions by the key and sorts within partitions by
  ``(key, ts, seq)``; the engine runs on the sorted Arrow batches in
  ``mapInArrow`` (``engine.evaluate_table_partials``), the driver merges the
  partial states and replaces the windows in the 50 result tables.
* **baseline** — the pipeline's own I/O without the engine: the very same
  ``keyed_inputs`` DataFrames (same read, filters, columns, repartition and
  sort), then a plain windowed ``COUNT`` per (key, pane) — tumbling windows of
  the smallest slide of that key's queries — computed per Arrow batch with
  pyarrow/numpy in ``mapInArrow``, partial counts merged on the driver and
  written to one Delta table.

The events are ``datagen.streams``'s rides stream at the density of a day of
10 million events (``rate = 10M / 86400`` per second); the bronze table is
written directly from the generated Arrow tables with exactly the schema and
partitioning ``jobs.ingest`` produces (``bronze_schema``, ``event_date``),
``seq`` = position in the stream. The workload is ``datagen.workloads``'
``gloria-mixed`` kind with 50 queries (SEQ and Kleene patterns, three distinct
partition keys), planned by ``jobs.optimize.optimize``.

Sizes: smoke 20k events, small 200k, full 10M (one day). ``--events N`` (or
``TRENDLAKE_REPLAY_BENCH_EVENTS``) sets the event count (the span then shrinks
or grows at the same density; the record says so).
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.experiments.common import OK, Context

TITLE = "Replay (Spark + Delta pipeline) vs an I/O baseline"
PAPER = "DESIGN §6 pipeline; no paper figure"
STREAM = "rides"
WORKLOAD_KIND = "gloria-mixed"
QUERIES = 50
DAY_EVENTS = 10_000_000
RATE = DAY_EVENTS / 86_400  # events per second of a 10M-event day
START = "2026-01-01T00:00:00Z"
GOAL_RATIO = 2.0
EVENTS_ENV = "TRENDLAKE_REPLAY_BENCH_EVENTS"
AGREEMENT_MAX_EVENTS = 500_000  # replay's result tables are compared with engine.evaluate up to this size

STRATEGY_INFO = {
    "replay": {"label": "trendlake replay (engine in mapInArrow, 50 result tables)", "kind": "pipeline", "status": OK},
    "baseline": {"label": "I/O baseline (same read, repartition, sort; windowed COUNT)", "kind": "baseline",
                 "status": OK},
}

BASELINE_SCHEMA = "spec string, key string, window_start long, n long"


# ---------------------------------------------------------------- data and setup


def add_options(p) -> None:
    p.add_argument("--events", type=int, metavar="N",
                   help=f"events in bronze (default by size: 20,000 / 200,000 / {DAY_EVENTS:,}; or ${EVENTS_ENV})")


def event_count(ctx: Context) -> int:
    override = os.environ.get(EVENTS_ENV)
    default = int(float(override)) if override else int(ctx.pick(20_000, 200_000, DAY_EVENTS))
    return int(ctx.option("events", default))


def build_bronze(lake_root: Path, events: int, seed: int) -> dict[str, Any]:
    """Generate ``events`` rides events and write ``bronze/rides`` as ingest would; facts about it."""
    import pyarrow as pa
    from deltalake import write_deltalake
    from trendlake.datagen.streams import generate
    from trendlake.jobs.ingest.tables import as_bronze, bronze_schema
    from trendlake.jobs.lake import Lake
    from trendlake.schemas import load_stream_schema

    stream = load_stream_schema(STREAM)
    schema = bronze_schema(stream)
    lake = Lake(lake_root)
    path = lake.path(lake.bronze(STREAM))
    path.mkdir(parents=True, exist_ok=True)
    facts = {"events": 0, "first_ts": None, "last_ts": None}

    def batches():
        seq = 0
        for table in generate(STREAM, events, seed, start=START, rate_per_second=RATE, chunk_size=500_000):
            n = table.num_rows
            out = as_bronze(
                table, stream, first_seq=seq, source_file="generated-rides.parquet",
                source_checksum=f"generated-rides-seed{seed}-{events}",
            )
            ts = out.column("ts")
            if facts["first_ts"] is None:
                facts["first_ts"] = ts[0].value
            facts["last_ts"] = ts[n - 1].value
            facts["events"] += n
            seq += n
            yield from out.to_batches()

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    write_deltalake(str(path), reader, mode="append", partition_by=["event_date"])
    return facts


def write_workload(path: Path, seed: int) -> str:
    from trendlake.datagen.workloads import generate_workload

    text = generate_workload(WORKLOAD_KIND, QUERIES, seed, STREAM)
    path.write_text(text)
    return text


def replay_interval(facts: dict[str, Any], plan: Any) -> tuple[int, int]:
    """``(start, end]``: from the day's start to past the last window holding an event."""
    from trendlake.engine.timeline import parse_ts

    start = parse_ts(START)
    longest = max(q.within for q in plan.queries.values())
    hour = 3_600_000_000
    end = facts["last_ts"] + longest
    end = start + -(-(end - start) // hour) * hour
    return start, end


# ---------------------------------------------------------------- the baseline job


def baseline_counts(spec: str, keys: list[str], pane: int, batches: Any) -> Any:
    """``mapInArrow`` body: rows per (key, pane) of each sorted batch (partial: a key may span batches)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out_schema = pa.schema([("spec", pa.string()), ("key", pa.string()), ("window_start", pa.int64()),
                            ("n", pa.int64())])
    for batch in batches:
        if batch.num_rows == 0:
            continue
        ts = pc.cast(batch.column("ts"), pa.timestamp("us", tz="UTC")).cast(pa.int64())
        panes = pc.multiply(pc.divide(ts, pa.scalar(pane, pa.int64())), pa.scalar(pane, pa.int64()))
        if keys:
            parts = [pc.cast(batch.column(k), pa.string()) for k in keys]
            key = parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, "|")
        else:
            key = pa.array([""] * batch.num_rows, pa.string())
        grouped = pa.table({"key": key, "window_start": panes}).group_by(["key", "window_start"]).aggregate(
            [("window_start", "count")])
        n = grouped.num_rows
        yield pa.RecordBatch.from_arrays(
            [pa.array([spec] * n, pa.string()), grouped.column("key").combine_chunks(),
             grouped.column("window_start").combine_chunks(),
             grouped.column("window_start_count").combine_chunks().cast(pa.int64())],
            schema=out_schema)


def run_baseline(spark: Any, lake_root: Path, plan_raw: dict[str, Any], start_us: int, end_us: int,
                 out_path: Path) -> dict[str, Any]:
    """The I/O baseline for ``(start, end]``, its counts overwritten into the Delta table ``out_path``."""
    from deltalake import write_deltalake
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.replay import keyed_inputs, needed_range

    from trendlake import engine

    started = time.perf_counter()
    compiled = engine.load_plan(plan_raw)
    lake = Lake(lake_root)
    bronze = lake.read_spark(spark, f"bronze/{STREAM}")
    lo, hi = needed_range(list(compiled.queries.values()), start_us, end_us)
    panes: dict[tuple[str, ...], int] = {}
    out = None
    for item in keyed_inputs(bronze, plan_raw, lo, hi):  # replay's own inputs
        keys = tuple(item.keys)
        pane = min(compiled.queries[n].slide for n in item.queries)
        panes[keys] = pane
        spec = ",".join(keys) or "()"

        def count(batches: Any, _spec: str = spec, _keys: list[str] = item.keys, _pane: int = pane) -> Any:
            return baseline_counts(_spec, _keys, _pane, batches)

        counted = item.frame.mapInArrow(count, BASELINE_SCHEMA)
        out = counted if out is None else out.unionByName(counted)
    partial = out.toArrow()
    merged = partial.group_by(["spec", "key", "window_start"]).aggregate([("n", "sum")])
    merged = merged.rename_columns(["spec", "key", "window_start", "n"])
    write_deltalake(str(out_path), merged, mode="overwrite")
    totals = {}
    for spec, n in zip(merged.column("spec").to_pylist(), merged.column("n").to_pylist(), strict=True):
        totals[spec] = totals.get(spec, 0) + n
    return {"seconds": time.perf_counter() - started, "rows": merged.num_rows, "events_per_key": totals,
            "partial_rows": partial.num_rows, "panes_us": {",".join(k) or "()": v for k, v in panes.items()}}


# ---------------------------------------------------------------- agreement (small sizes)


def check_agreement(lake_root: Path, plan_raw: dict[str, Any], start_us: int, end_us: int) -> list[dict[str, Any]]:
    """Replay's result tables vs ``engine.evaluate`` on the bronze events, windows ending in (start, end]."""
    from trendlake.engine.results import is_equal
    from trendlake.engine.timeline import parse_ts
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.replay import column_name

    from trendlake import engine

    lake = Lake(lake_root)
    bronze = lake.read_arrow(f"bronze/{STREAM}")
    events = bronze.drop_columns(["event_date", "source_file", "source_checksum"])
    want: dict[str, list[dict[str, Any]]] = {q["name"]: [] for q in plan_raw["queries"]}
    for row in engine.evaluate(plan_raw, events):
        if start_us < row["window_end"] <= end_us:
            want[row["query"]].append(row)
    problems = []
    for q in plan_raw["queries"]:
        name = q["name"]
        table = lake.read_arrow(f"results/{name}")
        got = {}
        for r in (table.to_pylist() if table is not None else []):
            got[(tuple(r[g] for g in q["group_by"]), parse_ts(r["window_start"]))] = r
        if len(got) != len(want[name]):
            problems.append({"query": name, "difference": f"{len(got)} rows replayed vs {len(want[name])} expected"})
            continue
        for w in want[name]:
            key = (tuple(w[g] for g in q["group_by"]), w["window_start"])
            r = got.get(key)
            if r is None:
                problems.append({"query": name, "difference": f"missing row {key}"})
                break
            for agg in q["aggregates"]:
                a, b = r[column_name(agg)], w[agg["name"]]
                if b is engine.OVERFLOW:
                    ok = a is None and column_name(agg) in (r["overflowed"] or [])
                else:
                    a = int(a) if isinstance(a, Decimal) else a
                    ok = is_equal(a, b)
                if not ok:
                    problems.append({"query": name, "difference": f"{key} {agg['name']}: {a!r} vs {b!r}"})
                    break
    return problems


# ---------------------------------------------------------------- the experiment


def run(ctx: Context) -> dict[str, Any]:
    from trendlake.jobs.optimize import current_plan, optimize, workload_name
    from trendlake.jobs.replay import replay
    from trendlake.jobs.spark import get_spark
    from trendlake.jobs.times import utc as _dt

    from trendlake import engine

    n_events = event_count(ctx)
    span_s = n_events / RATE
    workdir = Path(tempfile.mkdtemp(prefix="trendlake-replay-bench-"))
    lake_root = workdir / "lake"
    try:
        t = time.perf_counter()
        facts = build_bronze(lake_root, n_events, ctx.seed)
        bronze_s = time.perf_counter() - t
        ctx.log(f"  bronze: {facts['events']} events over {span_s / 3600:.2f} h written in {bronze_s:.1f}s")
        workload_path = workdir / f"replay_bench_{WORKLOAD_KIND}.etq"
        write_workload(workload_path, ctx.seed)
        optimize(lake_root, workload_path, stream=STREAM)
        plan_raw = current_plan(lake_root, workload_name(workload_path))
        plan = engine.load_plan(plan_raw)
        keys = sorted({q.partition_by for q in plan.queries.values()})
        start_us, end_us = replay_interval(facts, plan)
        ctx.log(f"  workload {WORKLOAD_KIND}: {len(plan.queries)} queries, {len(keys)} distinct partition keys "
                f"{[list(k) for k in keys]}; interval {start_us}..{end_us}")

        t = time.perf_counter()
        spark = get_spark()
        spark_start_s = time.perf_counter() - t
        spark.sparkContext.setJobDescription("replay bench")
        parallelism = spark.sparkContext.defaultParallelism
        master = spark.sparkContext.master

        # untimed warm-up over the interval's first hour: starts the JVM's JIT and the Python workers
        t = time.perf_counter()
        run_baseline(spark, lake_root, plan_raw, start_us, min(end_us, start_us + 3_600_000_000),
                     workdir / "warmup_counts")
        warmup_s = time.perf_counter() - t
        ctx.log(f"  warm-up (baseline over the first hour, untimed) {warmup_s:.1f}s")

        times: dict[str, list[float]] = {"baseline": [], "replay": []}
        last_replay = None
        last_baseline = None
        for r in range(ctx.repeat):
            # alternate the order so neither side always runs on a warmer JVM / page cache
            order = ["baseline", "replay"] if r % 2 == 0 else ["replay", "baseline"]
            for name in order:
                gc.collect()
                started = time.perf_counter()
                if name == "replay":
                    last_replay = replay(lake_root, workload_path, _dt(start_us), _dt(end_us), stream=STREAM,
                                         spark=spark)
                else:
                    last_baseline = run_baseline(spark, lake_root, plan_raw, start_us, end_us,
                                                 workdir / "baseline_counts")
                elapsed = time.perf_counter() - started
                times[name].append(elapsed)
                ctx.log(f"  repeat {r + 1}/{ctx.repeat}: {name} {elapsed:.2f}s")

        medians = {k: statistics.median(v) for k, v in times.items()}
        ratio = medians["replay"] / medians["baseline"] if medians["baseline"] > 0 else None

        check = facts["events"] <= AGREEMENT_MAX_EVENTS
        disagreements = check_agreement(lake_root, plan_raw, start_us, end_us) if check else []
        result_rows = sum(last_replay.rows_written.values()) if last_replay else 0
        events_read = sum(last_baseline["events_per_key"].values()) if last_baseline else None

        point_facts = {"events": facts["events"], "queries": len(plan.queries), "partition_keys": len(keys)}
        points = [
            {"figure": "replay_vs_baseline", "x": facts["events"], "strategy": name, **point_facts, "status": OK,
             "times_s": [round(t, 4) for t in times[name]], "median_s": round(medians[name], 4),
             **({"result_rows": result_rows} if name == "replay" else
                {"result_rows": last_baseline["rows"] if last_baseline else None})}
            for name in ("replay", "baseline")
        ]
        ratio_r = round(ratio, 3) if ratio is not None else None
        figure = {
            "id": "replay_vs_baseline",
            "title": f"{WORKLOAD_KIND} x{len(plan.queries)} over {facts['events']:,} rides events",
            "x_label": "events", "x": [facts["events"]], "y_label": "seconds (median of repeats)", "log_y": True,
            "series": {"replay": [round(medians["replay"], 4)], "baseline": [round(medians["baseline"], 4)]},
            "extra": {"ratio": [ratio_r]},
            "notes": [f"replay/baseline = {ratio_r} (goal <= {GOAL_RATIO})"],
            "ratios": {"replay/baseline": [ratio_r]},
        }
        size_note = None
        if facts["events"] < DAY_EVENTS:
            size_note = (f"{facts['events']:,} events = {span_s / 3600:.2f} h at a 10M-event day's density "
                         f"(not a whole day)")
        record = {
            "experiment": ctx.name,
            "title": TITLE,
            "paper": PAPER,
            "compares": "replay of windowed panes through the engine vs reading, repartitioning and sorting "
                        "the same panes and counting rows per (key, pane)",
            "paper_reported": [f"goal: replay <= {GOAL_RATIO}x the I/O baseline"],
            "size": ctx.size,
            "repeat": ctx.repeat,
            "seed": ctx.seed,
            "stream": STREAM,
            "data_source": "trendlake.datagen.streams",
            "status": OK,
            "strategies": STRATEGY_INFO,
            "strategies_ran": ["baseline", "replay"],
            "figures": [figure],
            "ratios": {"replay_vs_baseline: replay/baseline": {"min": ratio_r, "max": ratio_r}},
            "points": points,
            "agreement": {
                "checked": len(plan.queries) if check else 0,
                "all_agree": not disagreements,
                "disagreements": disagreements,
                "against": "trendlake.engine.evaluate on the bronze events (an Arrow table)" if check else
                           f"not checked above {AGREEMENT_MAX_EVENTS:,} events (the in-process evaluation on "
                           "Event objects would take longer than the run)",
            },
            "replay_bench": {
                "events": facts["events"],
                "span_hours": round(span_s / 3600, 3),
                "size_note": size_note,
                "rate_per_second": round(RATE, 3),
                "workload": f"{WORKLOAD_KIND} --queries {QUERIES} --seed {ctx.seed}",
                "queries": len(plan.queries),
                "partition_keys": [list(k) for k in keys],
                "interval_us": [start_us, end_us],
                "plan_id": plan.plan_id,
                "times_s": {k: [round(t, 4) for t in v] for k, v in times.items()},
                "median_s": {k: round(v, 4) for k, v in medians.items()},
                "ratio_replay_over_baseline": ratio_r,
                "goal_ratio": GOAL_RATIO,
                "goal_met": ratio is not None and ratio <= GOAL_RATIO,
                "replay_result_rows": result_rows,
                "replay_events_read": last_replay.events_read if last_replay else None,
                "baseline_rows": last_baseline["rows"] if last_baseline else None,
                "baseline_events_per_key": last_baseline["events_per_key"] if last_baseline else None,
                "baseline_events_counted": events_read,
                "baseline_panes_us": last_baseline["panes_us"] if last_baseline else None,
                "setup_s": {"bronze": round(bronze_s, 3), "spark_session": round(spark_start_s, 3),
                            "warmup": round(warmup_s, 3)},
                "spark_master": master,
                "spark_default_parallelism": parallelism,
            },
        }
        ctx.log(f"  replay {medians['replay']:.2f}s vs baseline {medians['baseline']:.2f}s: ratio {ratio_r} "
                f"(goal <= {GOAL_RATIO}); {result_rows} result rows")
        return record
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
