"""Statistics and planning from an event file vs a pyarrow read of it, side by side in one interpreter.

The events: ``datagen.streams`` ``stocks`` (``--events``, 1,000,000 by default; 200 per
second; ``Trade`` 40% of them, every type in bursts of 4.5 on average), written by the
project's writer as CSV (ISO-8601 ``ts``) and Parquet. The workload: ``--queries``
type-grained queries of the issue's shape, ``SEQ(Ti, Trade+)``, ``SEQ(Ti, Trade+, Tj)`` and
``SEQ(Trade+, Tj)`` in turn, each with its own ``Trade.price < c``, ``GROUP-BY sector``,
10-minute windows sliding 5 minutes (``workload_text``). Measured per format in
``--repeat`` interleaved rounds after one untimed round (medians kept, every time recorded):

- ``read``: ``pyarrow.csv.read_csv`` / ``pyarrow.parquet.read_table`` of the file;
- ``typed_read``: the file read as ``trendlake plan --events`` reads it
  (``jobs.evaluate.read_event_file`` with the stream schema: every column typed and checked);
- ``statistics``: the statistics of that table (``jobs.statistics.file_statistics``);
- ``compile``: the workload parsed and checked (``optimizer.compile_workload``);
- ``search``: the ``hamlet`` plan of the compiled workload from those statistics
  (``optimizer.build_plan``, the statistics checked against their schema included);
- ``plan``: all of ``trendlake plan --planner hamlet --events F --stream stocks`` but the
  process start and the output (``jobs.evaluate.compile_plan`` with ``planning_statistics``).

Goals (issue "Statistics and planning at the speed of a scan"): ``statistics / read <= 2``
and planning beyond the statistics ``<= 1 s``, both as ``plan - (typed_read + statistics)``
and as ``compile + search`` (the first is a difference of medians, noisy on a busy machine).
Events by size: 5,000 (smoke), 200,000 (small), 1,000,000 (full); queries 10, 50, 100.

    python -m benchmarks stats [--size full] [--events N] [--queries N] [--formats csv,parquet] [--repeat 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.experiments.common import OK, Context, Figure, make_record

TITLE = "Statistics and planning from an event file vs a pyarrow read of it"
SEED = 7
STEPS = ("read", "typed_read", "statistics", "compile", "search", "plan")
STREAM = "stocks"
KLEENE = "Trade"
OTHERS = ("Bid", "Ask", "Order", "Cancel", "Halt")
MIX = {"Trade": 0.40, "Bid": 0.15, "Ask": 0.15, "Order": 0.15, "Cancel": 0.10, "Halt": 0.05}
BURST = 4.5  # mean burst length (bursts of 1-8 on average)
RATE = 200.0  # events per second


def workload_text(queries: int, seed: int = 3) -> str:
    """``queries`` type-grained queries sharing ``Trade+``, each with its own price bound."""
    rng = random.Random(seed)
    lines = []
    for i in range(queries):
        a, b = rng.sample(OTHERS, 2)
        pattern = (f"SEQ({a}, {KLEENE}+)", f"SEQ({a}, {KLEENE}+, {b})", f"SEQ({KLEENE}+, {b})")[i % 3]
        bound = rng.choice((40, 50, 60, 70, 80, 90))
        lines.append(f"QUERY q{i} RETURN sector, COUNT(*) PATTERN {pattern} WHERE {KLEENE}.price < {bound} "
                     "GROUP-BY sector WITHIN 10 minutes SLIDE 5 minutes;")
    return "\n".join(lines) + "\n"


def write_files(work: Path, events: int, seed: int) -> dict[str, Path]:
    from trendlake.datagen.streams.writer import write_events

    return {fmt: write_events(STREAM, work / f"{STREAM}_{events}.{fmt}", events, seed, format=fmt,
                              burst=BURST, mix=MIX, rate_per_second=RATE)
            for fmt in ("csv", "parquet")}


def pyarrow_read(path: Path) -> Any:
    if path.suffix == ".csv":
        import pyarrow.csv as pcsv

        return pcsv.read_csv(path)
    import pyarrow.parquet as pq

    return pq.read_table(path)


def add_options(p: Any) -> None:
    p.add_argument("--events", type=int, help="events in the file (by size: 5000, 200000, 1000000)")
    p.add_argument("--queries", type=int, help="queries in the workload (by size: 10, 50, 100)")
    p.add_argument("--formats", default="csv,parquet", help="file formats to time (default csv,parquet)")
    p.add_argument("--workdir", type=Path, help="folder for the generated files (default: a temporary one)")


def run(ctx: Context) -> dict[str, Any]:
    from trendlake.jobs.evaluate import (
        compile_plan,
        load_schema,
        planning_statistics,
        read_event_file,
    )
    from trendlake.jobs.statistics import file_statistics

    from trendlake import optimizer

    events = ctx.option("events", ctx.pick(5_000, 200_000, 1_000_000))
    queries = ctx.option("queries", ctx.pick(10, 50, 100))
    formats = [f.strip() for f in ctx.option("formats").split(",") if f.strip()]
    unknown = set(formats) - {"csv", "parquet"}
    if unknown:
        raise ValueError(f"--formats: unknown format {', '.join(sorted(unknown))} (csv, parquet)")
    report: dict[str, Any] = {}
    points = []
    with tempfile.TemporaryDirectory(prefix="stats_bench_") as tmp:
        work = ctx.option("workdir") or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        files = write_files(work, events, ctx.seed)
        wl_path = work / f"type_grained_{queries}.etq"
        wl_path.write_text(workload_text(queries))
        first_lines = wl_path.read_text().splitlines()[:3] + ["..."]
        schema = load_schema(STREAM)
        workload = optimizer.compile_workload(wl_path.read_text(), stream_schema=schema, path=str(wl_path))
        for fmt in formats:
            path = files[fmt]
            ns = argparse.Namespace(assume_uniform=False, stats=None, events=path, stream=STREAM)
            table = read_event_file(path, schema)
            stats = file_statistics(table, workload, STREAM)
            fns = {
                "read": lambda p=path: pyarrow_read(p),
                "typed_read": lambda p=path: read_event_file(p, schema),
                "statistics": lambda t=table: file_statistics(t, workload, STREAM),
                "compile": lambda: optimizer.compile_workload(wl_path.read_text(), stream_schema=schema,
                                                              path=str(wl_path)),
                "search": lambda s=stats: optimizer.build_plan(workload, planner="hamlet", statistics=s),
                "plan": lambda n=ns: compile_plan(wl_path, STREAM, "hamlet", planning_statistics(n))[0],
            }
            outs = {key: fn() for key, fn in fns.items()}  # one untimed round
            times: dict[str, list[float]] = {key: [] for key in fns}
            for _ in range(ctx.repeat):
                for key, fn in fns.items():
                    started = time.perf_counter()
                    outs[key] = fn()
                    times[key].append(time.perf_counter() - started)
            med = {key: statistics.median(ts) for key, ts in times.items()}
            plan = outs["plan"]
            same = plan["statistics"] == stats  # plan --events computes the statistics the step above did
            beyond = med["plan"] - med["typed_read"] - med["statistics"]
            direct = med["compile"] + med["search"]
            ratio = med["statistics"] / med["read"]
            end_to_end = (med["typed_read"] + med["statistics"]) / med["read"]
            report[fmt] = {
                "file_bytes": path.stat().st_size, "seconds": med, "times": times,
                "statistics_to_read": ratio,
                "typed_read_plus_statistics_to_read": end_to_end,
                "plan_beyond_statistics_seconds": beyond,
                "compile_plus_search_seconds": direct,
                "plan_statistics_same": same,
                "sharing_groups": len(plan["sharing"]), "estimated_cost": plan["estimated_cost"],
                "goals": {"statistics_to_read <= 2": ratio <= 2.0,
                          "plan_beyond_statistics <= 1 s": max(beyond, direct) <= 1.0},
            }
            points += [{"figure": "steps", "x": fmt, "strategy": key, "status": OK, "events": events,
                        "queries": queries, "times_s": times[key], "median_s": med[key]} for key in fns]
            ctx.log(f"  {fmt} ({path.stat().st_size / 2**20:.1f} MiB, {events} events, {queries} queries): "
                    f"read {med['read']:.3f}s | typed read {med['typed_read']:.3f}s | statistics {med['statistics']:.3f}s"
                    f" = {ratio:.2f}x read (typed read + statistics {end_to_end:.2f}x) | compile {med['compile']:.3f}s"
                    f" + search {med['search']:.3f}s | plan {med['plan']:.3f}s = typed read + statistics +"
                    f" {beyond:.3f}s; {len(plan['sharing'])} groups")
    fig = Figure("steps", f"Each step on {events:,} stocks events, {queries} queries", "file format", formats,
                 list(STEPS), y_label="seconds (median of interleaved rounds)")
    for key in STEPS:
        fig.series[key] = [round(report[f]["seconds"][key], 6) for f in formats]
    disagreements = [{"figure": "steps", "x": f, "strategies": ["statistics", "plan"],
                      "difference": "the plan's statistics differ from the file's"}
                     for f in formats if not report[f]["plan_statistics_same"]]
    labels = {"read": "pyarrow read of the file", "typed_read": "the typed read of plan --events",
              "statistics": "the statistics of the typed table", "compile": "optimizer.compile_workload",
              "search": "the hamlet planner from the statistics", "plan": "trendlake plan --planner hamlet --events F"}
    return make_record(
        ctx, title=TITLE,
        paper="issue goals: statistics at most 2x the read, planning at most 1 s beyond the statistics",
        compares="the statistics and planning steps of trendlake plan --events vs a pyarrow read of the same file",
        strategies={k: {"label": v, "kind": "step", "status": OK} for k, v in labels.items()},
        figures=[fig.with_ratios((("statistics", "read"), ("typed_read", "read")))], points=points,
        checks=len(formats), disagreements=disagreements,
        events=events, queries=queries, workload=first_lines,
        data={"stream": STREAM, "mix": MIX, "burst": BURST, "rate_per_second": RATE}, formats=report,
    )
