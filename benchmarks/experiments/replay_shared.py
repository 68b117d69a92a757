"""Replay of a shared plan vs the plan that shares nothing, on the same lake and SparkSession.

The pipeline end to end (``jobs.replay.replay``: Delta bronze panes read by
Spark, the engine in ``mapInArrow``, 50 Delta result tables) over a generated
rides stream at the density of a 10M-event day, for the ``hamlet-shared``
workload with ``adjacent=true`` (50 queries sharing rising trends of
``Travel``, ``Travel.duration < NEXT(Travel).duration``: event-grained):

* **replay-none** — the plan of planner ``none``: every query alone (GRETA's
  graph per query and partition);
* **replay-hamlet** — the plan of planner ``hamlet`` from the statistics of the
  bronze events (``trendlake eval``'s ``file_statistics``, as ``trendlake plan
  --events`` computes them): the shared event-grained graph per group, where
  the cost model says it pays;
* **replay-forced** — the ``none`` plan with every sharable set as one group
  (``common.forced_sharing``), handed to ``replay``: what the shared executor
  costs in the pipeline whatever the cost model says.

The two plans alternate in each repeat (``optimize`` makes one current, then
``replay`` runs it); planning is not timed. After the last repeat of each, the
result tables are read back and must agree (floats to 1e-9 relative).

Sizes: smoke 20k events, small 200k, full 2M (4.8 hours of the day); set
``--events`` (or ``TRENDLAKE_REPLAY_BENCH_EVENTS``) to override the count. Each size but smoke
first runs an untimed warm-up round; smoke checks that the experiment runs
and agrees, its times compare nothing.
"""

from __future__ import annotations

import gc
import shutil
import statistics
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.experiments.common import OK, Context, forced_sharing, rows_agree

TITLE = "Replay of a shared plan (hamlet) vs each query alone (none), Spark + Delta"
PAPER = "Hamlet (SIGMOD 2021) §6 through the pipeline (DESIGN §6); no paper figure"
QUERIES = 50
STRATEGIES = ("replay-none", "replay-hamlet", "replay-forced")


def add_options(p) -> None:
    p.add_argument("--events", type=int, metavar="N",
                   help="events in bronze (default by size: 20,000 / 200,000 / 2,000,000; or "
                        "$TRENDLAKE_REPLAY_BENCH_EVENTS)")


def _event_count(ctx: Context) -> int:
    import os

    from benchmarks.experiments.replay import EVENTS_ENV

    override = os.environ.get(EVENTS_ENV)
    return int(ctx.option("events", int(float(override)) if override else int(ctx.pick(20_000, 200_000, 2_000_000))))


def _results(lake_root: Path, plan_raw: dict[str, Any]) -> list[dict[str, Any]]:
    """Every result table's rows (group values, window start, aggregates), in one sorted list."""
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.replay import column_name

    lake = Lake(lake_root)
    out = []
    for q in plan_raw["queries"]:
        table = lake.read_arrow(f"results/{q['name']}")
        rows = []
        for r in (table.to_pylist() if table is not None else []):
            row = {"query": q["name"], **{g: r[g] for g in q["group_by"]}, "window_start": str(r["window_start"])}
            for a in q["aggregates"]:
                v = r[column_name(a)]
                row[a["name"]] = int(v) if isinstance(v, Decimal) else v
            rows.append(row)
        out += sorted(rows, key=lambda row: repr(list(row.values())))
    return out


def run(ctx: Context) -> dict[str, Any]:
    from trendlake.datagen.workloads import generate_workload
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan, optimize, workload_name
    from trendlake.jobs.replay import replay
    from trendlake.jobs.spark import get_spark
    from trendlake.jobs.statistics import file_statistics
    from trendlake.jobs.times import utc as _dt

    from benchmarks.experiments.replay import RATE, STREAM, build_bronze, replay_interval
    from trendlake import engine, optimizer

    n_events = _event_count(ctx)
    workdir = Path(tempfile.mkdtemp(prefix="trendlake-replay-shared-"))
    lake_root = workdir / "lake"
    try:
        t = time.perf_counter()
        facts = build_bronze(lake_root, n_events, ctx.seed)
        bronze_s = time.perf_counter() - t
        ctx.log(f"  bronze: {facts['events']} events over {n_events / RATE / 3600:.2f} h in {bronze_s:.1f}s")
        text = generate_workload("hamlet-shared", QUERIES, ctx.seed, STREAM, adjacent=True)
        workload_path = workdir / "rising.etq"
        workload_path.write_text(text)
        events = Lake(lake_root).read_arrow(f"bronze/{STREAM}").drop_columns(
            ["event_date", "source_file", "source_checksum"])
        t = time.perf_counter()
        stats = file_statistics(events, optimizer.compile_workload(text), STREAM)
        stats_s = time.perf_counter() - t
        plans: dict[str, dict[str, Any]] = {}
        for name, planner in (("replay-none", "none"), ("replay-hamlet", "hamlet")):
            optimize(lake_root, workload_path, stream=STREAM, statistics=stats if planner != "none" else None,
                     planner=planner)
            plans[name] = current_plan(lake_root, workload_name(workload_path))
        plans["replay-forced"] = forced_sharing(plans["replay-none"], "static")
        groups = [len(g["queries"]) for g in plans["replay-hamlet"]["sharing"]]
        ctx.log(f"  planner hamlet: groups of {groups} queries (statistics in {stats_s:.1f}s)")
        start_us, end_us = replay_interval(facts, engine.load_plan(plans["replay-none"]))
        spark = get_spark()
        spark.sparkContext.setJobDescription("replay shared bench")
        times: dict[str, list[float]] = {n: [] for n in STRATEGIES}
        results: dict[str, Any] = {}
        rows_written: dict[str, int] = {}
        # an untimed first round warms the JVM and the workers (none at smoke size: module doc)
        warm = ctx.pick(0, 1, 1)
        for r in range(warm + ctx.repeat):
            order = list(STRATEGIES) if r % 2 == 0 else list(reversed(STRATEGIES))
            for name in order:
                planner = "hamlet" if name == "replay-hamlet" else "none"
                optimize(lake_root, workload_path, stream=STREAM,
                         statistics=stats if planner != "none" else None, planner=planner)
                given = plans[name] if name == "replay-forced" else None
                gc.collect()
                started = time.perf_counter()
                report = replay(lake_root, workload_path, _dt(start_us), _dt(end_us), stream=STREAM, spark=spark,
                                plan=given)
                elapsed = time.perf_counter() - started
                rows_written[name] = sum(report.rows_written.values())
                if r < warm:
                    ctx.log(f"  warm-up: {name} {elapsed:.2f}s (untimed)")
                    continue
                times[name].append(elapsed)
                ctx.log(f"  repeat {r - warm + 1}/{ctx.repeat}: {name} {elapsed:.2f}s")
                if r == warm + ctx.repeat - 1:  # the tables as this plan's last replay left them
                    results[name] = _results(lake_root, plans[name])
        medians = {k: statistics.median(v) for k, v in times.items()}
        ratio = medians["replay-none"] / medians["replay-hamlet"] if medians["replay-hamlet"] else None
        disagreements = [
            {"strategies": ["replay-none", other], "difference": diff}
            for other in ("replay-hamlet", "replay-forced")
            if (diff := rows_agree(results["replay-none"], results[other])) is not None
        ]
        point_facts = {"events": facts["events"], "queries": QUERIES}
        points = [
            {"figure": "replay_shared", "x": facts["events"], "strategy": name, **point_facts, "status": OK,
             "times_s": [round(t, 4) for t in times[name]], "median_s": round(medians[name], 4),
             "result_rows": rows_written[name]}
            for name in STRATEGIES
        ]
        ratio_r = round(ratio, 3) if ratio is not None else None
        forced_r = round(medians["replay-none"] / medians["replay-forced"], 3) if medians["replay-forced"] else None
        ctx.log(f"  none {medians['replay-none']:.2f}s, hamlet {medians['replay-hamlet']:.2f}s, forced "
                f"{medians['replay-forced']:.2f}s: none/hamlet {ratio_r}, none/forced {forced_r}; "
                f"{len(disagreements)} disagreements")
        return {
            "experiment": ctx.name,
            "title": TITLE,
            "paper": PAPER,
            "compares": "replay of the workload under the hamlet plan vs the plan sharing nothing, same lake",
            "paper_reported": ["Hamlet 1-2 orders of magnitude over GRETA (in-process, not through a pipeline)"],
            "size": ctx.size,
            "repeat": ctx.repeat,
            "seed": ctx.seed,
            "stream": STREAM,
            "data_source": "trendlake.datagen.streams",
            "status": OK,
            "strategies": {
                "replay-none": {"label": "replay, plan none (each query alone)", "kind": "pipeline", "status": OK},
                "replay-hamlet": {"label": "replay, plan hamlet (shared graph)", "kind": "pipeline", "status": OK},
                "replay-forced": {"label": "replay, every sharable set shared", "kind": "pipeline", "status": OK},
            },
            "strategies_ran": list(STRATEGIES),
            "figures": [{
                "id": "replay_shared",
                "title": f"hamlet-shared adjacent=true x{QUERIES} over {facts['events']:,} rides events",
                "x_label": "events", "y_label": "seconds", "x": [facts["events"]],
                "series": {name: [round(medians[name], 4)] for name in STRATEGIES}, "notes": [],
            }],
            "ratios": {"replay_shared: replay-none/replay-hamlet": {"min": ratio_r, "max": ratio_r},
                       "replay_shared: replay-none/replay-forced": {"min": forced_r, "max": forced_r}},
            "points": points,
            "agreement": {"checked": QUERIES, "all_agree": not disagreements, "disagreements": disagreements,
                          "against": "the result tables of the two plans"},
            "replay_shared": {
                "events": facts["events"], "groups": groups,
                "forced_groups": [len(g["queries"]) for g in plans["replay-forced"]["sharing"]],
                "plan_ids": {k: v["plan_id"] for k, v in plans.items()},
                "estimated_cost": [g["estimated_cost"] for g in plans["replay-hamlet"]["sharing"]],
                "interval_us": [start_us, end_us], "setup_s": {"bronze": round(bronze_s, 3),
                                                               "statistics": round(stats_s, 3)},
            },
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
