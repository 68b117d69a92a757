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
size (``table.nbytes``). Results go to ``benchmarks/results/eval_bench.json``.

    python -m benchmarks.eval_bench [--events 1000000] [--repeat 3] [--memory 10000000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
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


def environment() -> dict[str, Any]:
    """Versions, machine and commit, recorded with a benchmark's figures."""
    import pyarrow as pa

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent, check=False).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, check=False).stdout.strip())
    return {"python": platform.python_version(), "numpy": np.__version__, "pyarrow": pa.__version__,
            "cpu_count": os.cpu_count(), "platform": platform.platform(), "commit": commit, "dirty": dirty}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.eval_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the timed file (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per measurement (median kept)")
    parser.add_argument("--random-x", action="store_true", help="x seeded random 0..9 instead of i %% 10")
    parser.add_argument("--memory", type=int, default=0, metavar="N",
                        help="also measure eval's peak RSS on N events in a subprocess (e.g. 10000000)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for eval_bench.json")
    parser.add_argument("--workdir", type=Path, help="folder for the generated files (default: a temporary one)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="eval_bench_") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        events = work / f"events_{args.events}.csv"
        write_events(events, args.events, random_x=args.random_x)
        workloads = {}
        for key, text in WORKLOADS.items():
            workloads[key] = work / f"{key}.etq"
            workloads[key].write_text(text)

        report: dict[str, Any] = {
            "benchmark": "eval_bench",
            "command": "python -m benchmarks.eval_bench " + " ".join(argv if argv is not None else sys.argv[1:]),
            "events": args.events, "random_x": args.random_x, "repeat": args.repeat,
            "file_bytes": events.stat().st_size, "environment": environment(), "runs": {},
        }
        # interleaved: each round times the baseline, then every workload, so that a slower
        # moment of the machine weighs on both sides of a ratio; one untimed round first
        fns = {"baseline": lambda: baseline(events)}
        fns.update({key: (lambda w=workload: run_eval(w, events)) for key, workload in workloads.items()})
        times: dict[str, list[float]] = {key: [] for key in fns}
        outs = {key: fn() for key, fn in fns.items()}
        for _ in range(args.repeat):
            for key, fn in fns.items():
                started = time.perf_counter()
                outs[key] = fn()
                times[key].append(time.perf_counter() - started)
        base_s = statistics.median(times["baseline"])
        report["baseline"] = {"seconds": base_s, "times": times["baseline"], "type_counts": outs["baseline"]}
        print(f"baseline (pyarrow read + value_counts): {base_s:.3f}s", file=sys.stderr)
        for key in workloads:
            eval_s = statistics.median(times[key])
            ratio = eval_s / base_s
            paired = statistics.median(e / b for e, b in zip(times[key], times["baseline"], strict=True))
            report["runs"][key] = {"workload": WORKLOADS[key], "seconds": eval_s, "times": times[key],
                                   "result_rows": len(outs[key]), "ratio_to_baseline": ratio,
                                   "median_ratio_per_round": paired, "goal": 3.0, "goal_met": ratio <= 3.0}
            print(f"eval {key}: {eval_s:.3f}s = {ratio:.2f}x baseline (per round: median {paired:.2f}x; "
                  f"{len(outs[key])} rows)", file=sys.stderr)

        if args.memory:
            import pyarrow.csv as pcsv

            big = work / f"events_{args.memory}.csv"
            write_events(big, args.memory, random_x=args.random_x)
            nbytes = pcsv.read_csv(big).nbytes
            measured = peak_rss_of_eval(workloads["count"], big)
            ratio = measured["peak_rss_bytes"] / nbytes
            report["memory"] = {"events": args.memory, "arrow_table_bytes": nbytes, **measured,
                                "ratio_to_arrow_table": ratio, "goal": 3.0, "goal_met": ratio <= 3.0}
            print(f"eval on {args.memory} events: peak RSS {measured['peak_rss_bytes'] / 2**20:.0f} MiB = "
                  f"{ratio:.2f}x the Arrow table ({nbytes / 2**20:.0f} MiB), {measured['seconds']:.1f}s",
                  file=sys.stderr)
            big.unlink()

    args.out.mkdir(parents=True, exist_ok=True)
    name = "eval_bench.json" if not args.random_x else "eval_bench_random_x.json"
    (args.out / name).write_text(json.dumps(report, indent=2) + "\n")
    met = [f"{key} {'met' if run['goal_met'] else 'NOT met'}" for key, run in report["runs"].items()]
    if "memory" in report:
        met.append(f"memory {'met' if report['memory']['goal_met'] else 'NOT met'}")
    print(f"wrote {args.out / name}; goals (<= 3x): {', '.join(met)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
