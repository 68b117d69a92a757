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
and as ``compile + search`` (the first is a difference of medians, noisy on a busy machine). Results go to
``benchmarks/results/stats_bench.json`` with the command.

    python -m benchmarks.stats_bench [--events 1000000] [--queries 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.eval_bench import environment

RESULTS = Path(__file__).resolve().parent / "results"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stats_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the file (default 1,000,000)")
    parser.add_argument("--queries", type=int, default=100, help="queries in the workload (default 100)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (median kept)")
    parser.add_argument("--seed", type=int, default=7, help="datagen seed")
    parser.add_argument("--formats", default="csv,parquet", help="file formats to time (default csv,parquet)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for stats_bench.json")
    parser.add_argument("--workdir", type=Path, help="folder for the generated files (default: a temporary one)")
    args = parser.parse_args(argv)

    from trendlake.jobs.evaluate import (
        compile_plan,
        load_schema,
        planning_statistics,
        read_event_file,
    )
    from trendlake.jobs.statistics import file_statistics

    from trendlake import optimizer

    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    report: dict[str, Any] = {
        "benchmark": "stats_bench",
        "command": "python -m benchmarks.stats_bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "events": args.events, "queries": args.queries, "repeat": args.repeat, "seed": args.seed,
        "data": {"stream": STREAM, "mix": MIX, "burst": BURST, "rate_per_second": RATE},
        "environment": environment(), "formats": {},
    }
    with tempfile.TemporaryDirectory(prefix="stats_bench_") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        files = write_files(work, args.events, args.seed)
        wl_path = work / f"type_grained_{args.queries}.etq"
        wl_path.write_text(workload_text(args.queries))
        report["workload"] = wl_path.read_text().splitlines()[:3] + ["..."]
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
            for _ in range(args.repeat):
                for key, fn in fns.items():
                    started = time.perf_counter()
                    outs[key] = fn()
                    times[key].append(time.perf_counter() - started)
            med = {key: statistics.median(ts) for key, ts in times.items()}
            plan = outs["plan"]
            assert plan["statistics"] == stats, "the plan's statistics differ from the file's"
            beyond = med["plan"] - med["typed_read"] - med["statistics"]
            direct = med["compile"] + med["search"]
            ratio = med["statistics"] / med["read"]
            end_to_end = (med["typed_read"] + med["statistics"]) / med["read"]
            report["formats"][fmt] = {
                "file_bytes": path.stat().st_size, "seconds": med, "times": times,
                "statistics_to_read": ratio,
                "typed_read_plus_statistics_to_read": end_to_end,
                "plan_beyond_statistics_seconds": beyond,
                "compile_plus_search_seconds": direct,
                "sharing_groups": len(plan["sharing"]), "estimated_cost": plan["estimated_cost"],
                "goals": {"statistics_to_read <= 2": ratio <= 2.0,
                          "plan_beyond_statistics <= 1 s": max(beyond, direct) <= 1.0},
            }
            print(f"{fmt} ({path.stat().st_size / 2**20:.1f} MiB, {args.events} events, {args.queries} queries): "
                  f"read {med['read']:.3f}s | typed read {med['typed_read']:.3f}s | statistics {med['statistics']:.3f}s"
                  f" = {ratio:.2f}x read (typed read + statistics {end_to_end:.2f}x) | compile {med['compile']:.3f}s"
                  f" + search {med['search']:.3f}s | plan {med['plan']:.3f}s = typed read + statistics +"
                  f" {beyond:.3f}s; {len(plan['sharing'])} groups",
                  file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "stats_bench.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
