"""``trendlake ingest`` two ways side by side: the typing rules computed once per row vs
written inline (``--compare rules``, the default), or a CSV file read line by line in
splits vs as one multi-line stream (``--compare csv-read``).

One interpreter, one SparkSession (``local[2]``), the same landing file: ``--events``
generated rides events (``datagen``'s rides stream, 20 columns of text, ISO-8601
times with microseconds; 200,000 by default) and six rows the rules refuse
(``BAD_ROWS``), as one CSV file. Each round ingests the
file into a fresh lake twice, once per way:

- ``rules`` (``jobs.ingest.LAYERED``): ``layered``, what ships: the trimmed text, numbers,
  ISO-8601 groups and casts that several rules read are named columns computed once per
  row (``jobs.ingest.Lets``); ``inline``: the same rules with every intermediate value
  written out wherever it is read, which Spark evaluates at each place;
- ``csv-read`` (``jobs.ingest.SPLIT_CSV``): ``split``, what ships for a file with no record
  spanning lines: read line by line, one task per split of the file; ``whole``: read as
  one multi-line stream, one task for the file.

``--warmup`` untimed rounds first (one by default: the session's first ingest pays
the JVM's warm-up), then ``--repeat`` timed rounds, alternating the order; medians
kept, every time recorded.
Both ways must commit the same bronze and quarantine rows (checked every round).
Results go to ``benchmarks/results/ingest_bench.json`` (``ingest_bench_csv_read.json``).

    python -m benchmarks.ingest_bench [--events 200000] [--repeat 3] [--compare csv-read]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.eval_bench import environment

RESULTS = Path(__file__).resolve().parent / "results"
# per comparison: its two ways (what ships first), the switch in jobs.ingest, the record's file
COMPARISONS = {
    "rules": (("layered", "inline"), "LAYERED", "ingest_bench.json"),
    "csv-read": (("split", "whole"), "SPLIT_CSV", "ingest_bench_csv_read.json"),
}


# rows each rule refuses, appended to the generated file: both ways must quarantine them alike
BAD_ROWS = (
    {"type": "Teleport", "ts": "2026-01-01T10:00:00Z"},
    {"type": "Travel", "ts": "yesterday"},
    {"type": "Travel", "ts": "2400-01-01T00:00:00Z"},
    {"type": "Travel", "ts": "1767225600000"},  # epoch milliseconds in a stream of seconds
    {"type": "Travel", "ts": "2026-01-01T10:00:00Z", "driver": "seven"},
    {"type": "", "ts": "2026-01-01T10:00:00Z"},
)


def write_landing(folder: Path, events: int, seed: int = 1) -> Path:
    """One CSV landing file of ``events`` rides events (a day at that density) and ``BAD_ROWS``."""
    import csv

    from trendlake.jobs.cli import main as cli

    path = folder / "rides.csv"
    code = cli(["generate", "rides", "-n", str(events), "--start", "2026-01-01T00:00:00Z",
                "--rate", str(events / 86_400), "--seed", str(seed), "-o", str(path)])
    if code:
        raise SystemExit(f"trendlake generate exited {code}")
    with path.open(newline="") as fh:
        header = next(csv.reader(fh))
    with path.open("a", newline="") as fh:
        csv.DictWriter(fh, fieldnames=header, lineterminator="\n").writerows(BAD_ROWS)  # the generator's endings
    return path


def ingest_once(spark: Any, lake: Path, landing: Path, stream: dict[str, Any], mode: str,
                compare: str = "rules") -> dict[str, Any]:
    """One ingest of ``landing`` into a fresh ``lake`` the ``mode`` way of ``compare``; its time and rows."""
    from trendlake.jobs import ingest as job

    modes, switch, _ = COMPARISONS[compare]
    shutil.rmtree(lake, ignore_errors=True)
    setattr(job, switch, mode == modes[0])
    try:
        started = time.perf_counter()
        report = job.ingest(lake, stream, landing, spark=spark)
        seconds = time.perf_counter() - started
    finally:
        setattr(job, switch, True)
    return {"seconds": seconds, "rows_read": report.rows_read, "rows_good": report.rows_good,
            "rows_bad": report.rows_bad}


def committed(lake: Path) -> tuple[str, str]:
    """Digests of bronze's rows and quarantine's rows (but their ``ingested_at``), to compare the two ways."""
    import hashlib

    from trendlake.jobs.lake import Lake

    def digest(table: Any, order: list[str], drop: tuple[str, ...] = ()) -> str:
        if table is None:
            return "absent"
        rows = table.drop_columns([c for c in drop if c in table.column_names]).sort_by([(c, "ascending") for c in order])
        return f"{rows.num_rows} rows, " + hashlib.sha256(str(rows.to_pydict()).encode()).hexdigest()[:16]

    stored = Lake(lake)
    return (digest(stored.read_arrow("bronze/rides"), ["seq"]),
            digest(stored.read_arrow("quarantine/rides"), ["source_file", "source_line"], drop=("ingested_at",)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ingest_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000, help="events in the landing file (default 200,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (median kept)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--compare", choices=sorted(COMPARISONS), default="rules",
                        help="rules: layered vs inline typing rules (default); csv-read: split vs whole CSV read")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the record (ingest_bench*.json)")
    parser.add_argument("--workdir", type=Path, help="folder for the landing file and lakes (default: a temporary one)")
    args = parser.parse_args(argv)

    from trendlake.jobs.ingest import scan_file
    from trendlake.jobs.spark import get_spark
    from trendlake.schemas import load_stream_schema

    work = args.workdir or Path(tempfile.mkdtemp(prefix="trendlake-ingest-bench-"))
    landing = work / "landing"
    write_landing(landing, args.events)
    stream = load_stream_schema("rides")
    spark = get_spark("local[2]", app_name="trendlake-ingest-bench")
    modes, _, record = COMPARISONS[args.compare]
    splittable = scan_file(landing / "rides.csv").splittable  # else both ways read the file whole
    times: dict[str, list[float]] = {m: [] for m in modes}
    rows = bad = None
    for r in range(args.warmup + args.repeat):
        order = modes if r % 2 == 0 else modes[::-1]
        timed = r >= args.warmup
        seen = {}
        for mode in order:
            got = ingest_once(spark, work / f"lake-{mode}", landing, stream, mode, args.compare)
            seen[mode] = committed(work / f"lake-{mode}")
            rows, bad = got["rows_read"], got["rows_bad"]
            if timed:
                times[mode].append(got["seconds"])
            print(f"round {r}{'' if timed else ' (untimed)'} {mode}: {got['seconds']:.1f}s "
                  f"({got['rows_read'] / got['seconds']:,.0f} rows/s)", flush=True)
        if seen[modes[0]] != seen[modes[1]]:
            print(f"the two ways committed different rows: {seen}", file=sys.stderr)
            return 1
    medians = {m: statistics.median(t) for m, t in times.items()}
    ratio = medians[modes[1]] / medians[modes[0]]
    for mode in modes:
        print(f"{mode}: median {medians[mode]:.1f}s = {rows / medians[mode]:,.0f} rows/s")
    print(f"{modes[1]} / {modes[0]}: {ratio:.2f}x")
    report = {
        "benchmark": "ingest_bench",
        "compare": args.compare,
        "file_read_in_splits": splittable,
        "events": args.events,
        "rows_read": rows,
        "rows_bad": bad,
        "warmup": args.warmup,
        "repeat": args.repeat,
        "seconds": times,
        "median_seconds": medians,
        "rows_per_second": {m: rows / medians[m] for m in modes},
        f"{modes[1]}_over_{modes[0]}": ratio,
        "environment": {**environment(), "spark_master": "local[2]"},
        "command": "python -m benchmarks.ingest_bench " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / record).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out / record}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
