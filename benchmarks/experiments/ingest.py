"""``trendlake ingest`` as it ships vs an older implementation from git, side by side.

Two comparisons (``--compare``), each between what ships and the way it replaced,
taken from ``jobs/ingest.py`` at git revision ``--rev`` (``benchmarks.gitrev``;
by default ``OLD_REV``, the last revision that kept the older ways behind the
switches ``LAYERED`` and ``SPLIT_CSV``), with that switch off:

- ``rules`` (the default): ``layered``, what ships: the trimmed text, numbers,
  ISO-8601 groups and casts that several rules read are named columns computed
  once per row (``schemas.typing.spark.Lets``); ``inline``: the same rules with every
  intermediate value written out wherever it is read, which Spark evaluates at
  each place (``LAYERED = False`` at ``--rev``);
- ``csv-read``: ``split``, what ships for a file with no record spanning lines:
  read line by line, one task per split of the file; ``whole``: read as one
  multi-line stream, one task for the file (``SPLIT_CSV = False`` at ``--rev``).

The older file runs against this tree's other modules (``gitrev.module_at``), given
the two lake verbs it called before ``Lake.write`` took a typed mode and the two modules
it imported before the typing rules became the package ``schemas/typing/`` (``_Older``),
so the ratio holds the two ways of that comparison and whatever else changed in ingest
(``jobs/ingest.py``, the package ``jobs/ingest/`` since) since ``--rev``; when the older file no longer runs against
them, the experiment stops with the error and a nearer ``--rev`` is needed.

One interpreter, one SparkSession (``local[2]``), the same landing file:
``--events`` generated rides events (``datagen``'s rides stream, 20 columns of
text, ISO-8601 times with microseconds; by size 300, 20,000, 100,000) and six rows
the rules refuse (``BAD_ROWS``), as one CSV file. Each round ingests the file
into a fresh lake once per way, alternating the order, after ``--warmup``
untimed rounds (by size 0, 1, 1: the session's first ingest pays the JVM's
warm-up); medians kept, every time recorded. Both ways must commit the same
bronze and quarantine rows (checked every round). The record is ``ingest``
(``ingest_csv_read`` for ``--compare csv-read``).

    python -m benchmarks ingest [--size full] [--events N] [--compare csv-read] [--rev REV]
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.experiments.common import OK, Context, Figure, make_record
from benchmarks.gitrev import module_at

TITLE = "trendlake ingest as it ships vs an older implementation from git"
SEED = 1
# the last revision of jobs/ingest.py holding the older ways behind the switches LAYERED and SPLIT_CSV
OLD_REV = "6185668b46e9ba98b1b2d923364385529b645ea0"
# per comparison: its two ways (what ships first), the switch turned off in the older file, the record
COMPARISONS = {
    "rules": (("layered", "inline"), "LAYERED", "ingest"),
    "csv-read": (("split", "whole"), "SPLIT_CSV", "ingest_csv_read"),
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
        raise RuntimeError(f"trendlake generate exited {code}")
    with path.open(newline="") as fh:
        header = next(csv.reader(fh))
    with path.open("a", newline="") as fh:
        csv.DictWriter(fh, fieldnames=header, lineterminator="\n").writerows(BAD_ROWS)  # the generator's endings
    return path


def older_ingest(rev: str, compare: str) -> Any:
    """``jobs/ingest.py`` at ``rev`` as a module, with the switch of ``compare`` off."""
    _, switch, _ = COMPARISONS[compare]
    with _modules_as_at_rev():
        module = module_at(rev, "jobs/ingest.py", f"trendlake_ingest_at_{rev[:12]}")
    if not hasattr(module, switch):
        raise ValueError(f"jobs/ingest.py at {rev} has no switch {switch}: pick a --rev that has it "
                         f"(the default {OLD_REV[:12]} does)")
    setattr(module, switch, False)
    return _Older(module)


@contextmanager
def _modules_as_at_rev() -> Iterator[None]:
    """The modules an older ``jobs/ingest.py`` imports under the names it imports them by:
    ``jobs.sqlexpr`` (now ``schemas.typing.sqlexpr``) and ``schemas.types`` (now the rules,
    the Arrow half and the raw-file checks of ``schemas.typing``, and the helpers it took
    by their private names)."""
    import sys
    import types

    from trendlake.schemas.typing import arrow, rawfiles, rules, sqlexpr

    compat = types.ModuleType("trendlake.schemas.types")
    for module in (rules, rawfiles, arrow):
        compat.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    compat._np_bool, compat._combined = arrow.np_bool, arrow.combined
    aliases = {"trendlake.jobs.sqlexpr": sqlexpr, "trendlake.schemas.types": compat}
    before = {name: sys.modules.get(name) for name in aliases}
    sys.modules.update(aliases)
    try:
        yield
    finally:
        for name, module in before.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


class _Older:
    """An older ``jobs/ingest.py`` run against this tree, given the lake verbs it called before
    ``Lake.write`` took a typed mode (``write_arrow``, ``replace_rows``): the same writes; and
    the modules it imports by their names then (``_modules_as_at_rev``)."""

    def __init__(self, module: Any) -> None:
        self.module = module

    def ingest(self, *args: Any, **kwargs: Any) -> Any:
        from trendlake.jobs import lake

        shipped = lake.Lake

        class LakeAsAtRev(shipped):  # type: ignore[misc, valid-type]
            def write_arrow(self, table: str, data: Any, **kw: Any) -> Any:
                return self.write(table, data, lake.APPEND, **kw)

            def replace_rows(self, table: str, data: Any, predicate: str, **kw: Any) -> Any:
                return self.write(table, data, lake.ReplaceWhere(predicate), **kw)

        lake.Lake = LakeAsAtRev
        try:
            with _modules_as_at_rev():
                return self.module.ingest(*args, **kwargs)
        finally:
            lake.Lake = shipped


def ingest_once(spark: Any, job: Any, lake: Path, landing: Path, stream: dict[str, Any]) -> dict[str, Any]:
    """One ingest of ``landing`` into a fresh ``lake`` by the ingest module ``job``; its time and rows."""
    shutil.rmtree(lake, ignore_errors=True)
    started = time.perf_counter()
    report = job.ingest(lake, stream, landing, spark=spark)
    seconds = time.perf_counter() - started
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


def add_options(p: Any) -> None:
    p.add_argument("--events", type=int, help="events in the landing file (by size: 300, 20000, 100000)")
    p.add_argument("--compare", choices=sorted(COMPARISONS), default="rules",
                   help="rules: layered vs inline typing rules (default); csv-read: split vs whole CSV read")
    p.add_argument("--rev", default=OLD_REV, help="git revision of the older jobs/ingest.py (default: the last "
                   "one with the switches)")
    p.add_argument("--warmup", type=int, help="untimed rounds first (by size: 0, 1, 1)")
    p.add_argument("--workdir", type=Path, help="folder for the landing file and lakes (default: a temporary one)")


def run(ctx: Context) -> dict[str, Any]:
    from trendlake.jobs import ingest as shipped
    from trendlake.jobs.ingest.landing import scan_file
    from trendlake.jobs.spark import get_spark
    from trendlake.schemas import load_stream_schema

    compare, rev = ctx.option("compare"), ctx.option("rev")
    events = ctx.option("events", ctx.pick(300, 20_000, 100_000))
    warmup = ctx.option("warmup", ctx.pick(0, 1, 1))
    modes, switch, ctx.record_name = COMPARISONS[compare]
    jobs = {modes[0]: shipped, modes[1]: older_ingest(rev, compare)}
    work = ctx.option("workdir") or Path(tempfile.mkdtemp(prefix="trendlake-ingest-bench-"))
    landing = work / "landing"
    write_landing(landing, events, ctx.seed)
    stream = load_stream_schema("rides")
    spark = get_spark("local[2]", app_name="trendlake-ingest-bench")
    splittable = scan_file(landing / "rides.csv").splittable  # else both ways read the file whole
    times: dict[str, list[float]] = {m: [] for m in modes}
    rows = bad = None
    disagreements = []
    for r in range(warmup + ctx.repeat):
        order = modes if r % 2 == 0 else modes[::-1]
        timed = r >= warmup
        seen = {}
        for mode in order:
            got = ingest_once(spark, jobs[mode], work / f"lake-{mode}", landing, stream)
            seen[mode] = committed(work / f"lake-{mode}")
            rows, bad = got["rows_read"], got["rows_bad"]
            if timed:
                times[mode].append(got["seconds"])
            ctx.log(f"  round {r}{'' if timed else ' (untimed)'} {mode}: {got['seconds']:.1f}s "
                    f"({got['rows_read'] / got['seconds']:,.0f} rows/s)")
        if seen[modes[0]] != seen[modes[1]]:
            disagreements.append({"figure": "ingest", "x": events, "strategies": list(modes), "round": r,
                                  "difference": f"committed {seen}"})
    medians = {m: statistics.median(t) for m, t in times.items()}
    ratio = medians[modes[1]] / medians[modes[0]]
    ctx.log(f"  {modes[1]} / {modes[0]}: {ratio:.2f}x")
    if not ctx.option("workdir"):
        shutil.rmtree(work, ignore_errors=True)
    fig = Figure("ingest", f"ingest of {rows:,} rows, {compare}", "rows", [rows], list(modes),
                 y_label="seconds (median of rounds)")
    for m in modes:
        fig.series[m] = [round(medians[m], 4)]
    labels = {modes[0]: "jobs.ingest as it ships",
              modes[1]: f"jobs/ingest.py at {rev[:12]} with {switch} = False"}
    return make_record(
        ctx, title=TITLE, paper="no paper figure",
        compares=f"{modes[0]} (what ships) vs {modes[1]} (the older way, from git) on the same landing file",
        strategies={m: {"label": labels[m], "kind": "ingest", "status": OK} for m in modes},
        figures=[fig.with_ratios([modes[::-1]])],
        points=[{"figure": "ingest", "x": rows, "strategy": m, "status": OK, "times_s": times[m],
                 "median_s": medians[m], "rows_per_s": rows / medians[m]} for m in modes],
        checks=warmup + ctx.repeat, disagreements=disagreements,
        compare=compare, older_rev=rev, file_read_in_splits=splittable, events=events,
        rows_read=rows, rows_bad=bad, warmup=warmup, seconds=times, median_seconds=medians,
        rows_per_second={m: rows / medians[m] for m in modes}, spark_master="local[2]",
        **{f"{modes[1]}_over_{modes[0]}": ratio},
    )
