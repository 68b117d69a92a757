"""``trendlake eval`` vs a pyarrow read of the same CSV, side by side in one interpreter.

The event file (``--events``, 1,000,000 by default) cycles types through
``AABBBBCN``, has ``ts = i // 20`` seconds (20 events per time stamp), ``x``
(``i % 10``, or seeded random 0..9 with ``--random-x``) and ``g`` seeded random
in 0..49 (so events of one group share time stamps).
Measured in ``--repeat`` interleaved rounds (each round times the baseline, then each
workload; medians kept, every time recorded, after one untimed round):

- ``baseline``: ``pyarrow.csv.read_csv`` of the file plus ``value_counts`` of ``type``;
- ``eval``: what ``trendlake eval`` runs (``jobs.evaluate``: read the file, type it
  by the rules, evaluate the plan columnar), for ``SEQ(A, B+, C)`` grouped by
  ``g`` in 10-minute windows sliding 5 minutes returning ``g, COUNT(*)``, and a
  second workload returning ``g, COUNT(*), SUM(B.x), AVG(B.x)``.

``--memory N`` also runs ``trendlake eval`` (the real command) on an N-event
file in a subprocess and records its peak RSS next to the file's Arrow table
size (``table.nbytes``). Events by size: 4,000 (smoke), 200,000 (small),
1,000,000 (full); the record is ``eval`` (``eval_random_x`` with ``--random-x``).

    python -m benchmarks eval [--size full] [--events N] [--repeat 3] [--memory 10000000]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.experiments.common import OK, Context, Figure, make_record

TITLE = "trendlake eval vs a pyarrow read of the same CSV"
SEED = 7
GOAL = 3.0
TYPES = "AABBBBCN"

WORKLOADS = {
    "count": """QUERY seq_count
RETURN g, COUNT(*)
PATTERN SEQ(A, B+, C)
GROUP-BY g
WITHIN 10 minutes SLIDE 5 minutes;
""",
    "sum_avg": """QUERY seq_sum_avg
RETURN g, COUNT(*), SUM(B.x), AVG(B.x)
PATTERN SEQ(A, B+, C)
GROUP-BY g
WITHIN 10 minutes SLIDE 5 minutes;
""",
}


def write_events(path: Path, n: int, *, random_x: bool = False, seed: int = 7, chunk: int = 1_000_000) -> None:
    """The benchmark's CSV file of ``n`` events, written columnar in chunks."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    names = np.array(list(TYPES))
    with pcsv.CSVWriter(path, pa.schema([("type", pa.string()), ("ts", pa.int64()), ("x", pa.int64()), ("g", pa.int64())]),
                        write_options=pcsv.WriteOptions(quoting_style="none")) as writer:
        for start in range(0, n, chunk):
            i = np.arange(start, min(n, start + chunk), dtype=np.int64)
            x = rng.integers(0, 10, len(i)) if random_x else i % 10
            writer.write_table(pa.table({
                "type": pa.array(names[i % len(TYPES)]),
                "ts": pa.array(i // 20),
                "x": pa.array(x),
                "g": pa.array(rng.integers(0, 50, len(i))),
            }))


def baseline(path: Path) -> dict[str, int]:
    import pyarrow.csv as pcsv

    table = pcsv.read_csv(path)
    counts = table.column("type").value_counts()
    return {str(v["values"]): int(v["counts"]) for v in counts.to_pylist()}


def run_eval(workload: Path, path: Path) -> list[dict[str, Any]]:
    """``trendlake eval``'s own steps (``jobs.evaluate``), without printing."""
    from trendlake.jobs.evaluate import compile_plan, evaluate_table, read_event_file

    from trendlake import engine

    plan, whash = compile_plan(workload, None)
    loaded = engine.load_plan(plan, workload_hash=whash)
    table = read_event_file(path, None, engine.columns_needed(loaded))
    return evaluate_table(loaded, table)


def peak_rss_of_eval(workload: Path, path: Path) -> dict[str, Any]:
    """Run ``trendlake eval`` in a subprocess; its peak RSS: ``VmHWM`` of the child's own
    memory (Linux), else ``ru_maxrss``, which on Linux also holds the forked copy of this
    process from before the child's exec (a parent holding a large table inflates it)."""
    code = (
        "import resource, sys, time\n"
        "from trendlake.jobs.cli import main\n"
        "t = time.perf_counter()\n"
        "rc = main(['eval', sys.argv[1], '--events', sys.argv[2]])\n"
        "sys.stdout.flush()\n"
        "kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            kib = int(line.split()[1])\n"
        "except OSError:\n"
        "    pass\n"
        "print(f'@@ {rc} {time.perf_counter() - t} {kib}', file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(workload), str(path)],
                          capture_output=True, text=True, check=False)
    marker = [line for line in proc.stderr.splitlines() if line.startswith("@@ ")]
    if proc.returncode != 0 or not marker:
        raise RuntimeError(f"eval subprocess failed ({proc.returncode}): {proc.stderr[-2000:]}")
    rc, seconds, kib = marker[-1].split()[1:]
    return {"exit": int(rc), "seconds": float(seconds), "peak_rss_bytes": int(kib) * 1024,
            "result_rows": len(proc.stdout.splitlines())}


def add_options(p: Any) -> None:
    p.add_argument("--events", type=int, help="events in the timed file (by size: 4000, 200000, 1000000)")
    p.add_argument("--random-x", action="store_true", help="x seeded random 0..9 instead of i %% 10")
    p.add_argument("--memory", type=int, default=0, metavar="N",
                   help="also measure eval's peak RSS on N events in a subprocess (e.g. 10000000)")
    p.add_argument("--workdir", type=Path, help="folder for the generated files (default: a temporary one)")


def run(ctx: Context) -> dict[str, Any]:
    n = ctx.option("events", ctx.pick(4_000, 200_000, 1_000_000))
    random_x, memory = ctx.option("random_x"), ctx.option("memory")
    ctx.record_name = "eval_random_x" if random_x else "eval"
    with tempfile.TemporaryDirectory(prefix="eval_bench_") as tmp:
        work = ctx.option("workdir") or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        events = work / f"events_{n}.csv"
        write_events(events, n, random_x=random_x, seed=ctx.seed)
        workloads = {}
        for key, text in WORKLOADS.items():
            workloads[key] = work / f"{key}.etq"
            workloads[key].write_text(text)
        # interleaved: each round times the baseline, then every workload, so that a slower
        # moment of the machine weighs on both sides of a ratio; one untimed round first
        fns = {"baseline": lambda: baseline(events)}
        fns.update({key: (lambda w=workload: run_eval(w, events)) for key, workload in workloads.items()})
        times: dict[str, list[float]] = {key: [] for key in fns}
        outs = {key: fn() for key, fn in fns.items()}
        for _ in range(ctx.repeat):
            for key, fn in fns.items():
                started = time.perf_counter()
                outs[key] = fn()
                times[key].append(time.perf_counter() - started)
        base_s = statistics.median(times["baseline"])
        ctx.log(f"  baseline (pyarrow read + value_counts): {base_s:.3f}s")
        runs: dict[str, Any] = {}
        for key in workloads:
            eval_s = statistics.median(times[key])
            ratio = eval_s / base_s
            paired = statistics.median(e / b for e, b in zip(times[key], times["baseline"], strict=True))
            runs[key] = {"workload": WORKLOADS[key], "seconds": eval_s, "times": times[key],
                         "result_rows": len(outs[key]), "ratio_to_baseline": ratio,
                         "median_ratio_per_round": paired, "goal": GOAL, "goal_met": ratio <= GOAL}
            ctx.log(f"  eval {key}: {eval_s:.3f}s = {ratio:.2f}x baseline (per round: median {paired:.2f}x; "
                    f"{len(outs[key])} rows)")
        mem = None
        if memory:
            import pyarrow.csv as pcsv

            big = work / f"events_{memory}.csv"
            write_events(big, memory, random_x=random_x, seed=ctx.seed)
            nbytes = pcsv.read_csv(big).nbytes
            measured = peak_rss_of_eval(workloads["count"], big)
            ratio = measured["peak_rss_bytes"] / nbytes
            mem = {"events": memory, "arrow_table_bytes": nbytes, **measured,
                   "ratio_to_arrow_table": ratio, "goal": GOAL, "goal_met": ratio <= GOAL}
            ctx.log(f"  eval on {memory} events: peak RSS {measured['peak_rss_bytes'] / 2**20:.0f} MiB = "
                    f"{ratio:.2f}x the Arrow table ({nbytes / 2**20:.0f} MiB), {measured['seconds']:.1f}s")
            big.unlink()
        file_bytes = events.stat().st_size
    fig = Figure("eval", f"trendlake eval vs pyarrow.csv.read_csv, {n:,} events", "events", [n],
                 list(fns), y_label="seconds (median of interleaved rounds)")
    for key in fns:
        fig.series[key] = [round(statistics.median(times[key]), 6)]
    points = [{"figure": "eval", "x": n, "strategy": key, "status": OK, "times_s": times[key],
               "median_s": statistics.median(times[key]),
               **({"result_rows": runs[key]["result_rows"]} if key in runs else {"type_counts": outs[key]})}
              for key in fns]
    labels = {"baseline": "pyarrow.csv.read_csv + value_counts of type"}
    labels |= {key: f"trendlake eval's steps (jobs.evaluate), workload {key}" for key in workloads}
    return make_record(
        ctx, title=TITLE, paper="issue goals: eval at most 3x a pyarrow read, peak memory at most 3x the Arrow table",
        compares="what trendlake eval runs vs a pyarrow read of the same CSV, interleaved rounds, one process",
        strategies={k: {"label": v, "kind": "baseline" if k == "baseline" else "eval", "status": OK}
                    for k, v in labels.items()},
        figures=[fig.with_ratios((key, "baseline") for key in workloads)], points=points,
        checks=0, disagreements=[],  # the workloads and the baseline compute different things
        events=n, random_x=random_x, file_bytes=file_bytes,
        baseline={"seconds": base_s, "times": times["baseline"], "type_counts": outs["baseline"]},
        runs=runs, **({"memory": mem} if mem else {}),
    )
