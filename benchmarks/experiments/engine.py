"""Engine: two-step reference, GRETA and COGRA side by side on the same data.

    python -m benchmarks engine [--size smoke|small|full] [--sizes 10,100,...,1000000]
        [--selectivity 1.0,0.5,0.1] [--sparse 3,3,2] [--limit 60] [--min-events N] [--no-throughput]

One seeded stream per size: three event types A, B, C in bursts (geometric
burst lengths, mean ``--burst``), exactly ``size`` events per 10-second
tumbling window (distinct µs time stamps), and an integer attribute
``v`` uniform in [0, 10^9). The query is::

    QUERY bench
    RETURN COUNT(*), SUM(B.v)
    PATTERN SEQ(A+, B+, C)
    WHERE A.v < t AND B.v < t AND C.v < t
    WITHIN 10 seconds;

Series:

* ``selectivity s`` (each ``--selectivity``): ``t = s * 10^9``, so a fraction s
  of the events passes the local predicates. The number of trends grows like
  2^(matching events), so the two-step reference stops early.
* ``sparse`` (``--sparse ka,kb,kc``): the predicate passes only ``ka`` A,
  ``kb`` B and ``kc`` C events per window, planted in pattern order (A's in the
  window's first tenth, B's in its middle tenth, C's in its last tenth; all
  other events have ``v >= t``). The trend count per window is
  fixed ((2^ka - 1)(2^kb - 1)kc) while every strategy still has to read all
  ``size`` events: the two-step reference's enumeration stays feasible at 10^6
  events per window but scans the window once per trend prefix.

Strategies, all in this process on the same data, best of ``--repeat``:

* ``twostep``, ``greta``, ``cogra``: ``engine.evaluate_partials`` (the engine's one
  entry) with that strategy over the stream as an Arrow table (dictionary-coded
  ``type``, µs ``ts``, ``v``): local predicates vectorized, then the two-step
  reference or GRETA on ``Event`` objects built by the entry (timed), or COGRA's
  kernel on the columns.

Building the Arrow table is not timed. A
strategy is skipped ("skipped: too slow") when its projected time exceeds
``--limit`` seconds; the two-step projection is calibrated on its own
measured runs in units of (trend prefixes x window events), with the prefix
counts computed by COGRA. Every point checks that the strategies that ran
return the same finalized rows. A separate throughput section measures COGRA's
type-grained kernel alone (events/s) on several shapes, with and without the
skipping of windows whose counts all overflowed.

Sizes: ``full`` is the recorded run (10 to 10^6 events per window, 60 s limit),
``small`` stops at 10^5, ``smoke`` at 10^3 with a 2 s limit; every option
overrides its size's value.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from trendlake.engine import evaluate_partials
from trendlake.engine.plan import load_plan
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import OVERFLOW, finalize, is_equal
from trendlake.engine.strategies import cogra

from benchmarks.experiments.common import OK, Context, Figure, make_record
from trendlake import optimizer

SECOND = 1_000_000
WINDOW_S = 10
V_RANGE = 10**9
BASE_US = 1_767_225_600 * SECOND  # 2026-01-01T00:00:00Z, a multiple of the window
TYPES = ("A", "B", "C")
STRATEGIES = ("twostep", "greta", "cogra")
ENGINES = ("greta", "cogra")

QUERY = """QUERY bench
RETURN COUNT(*), SUM(B.v)
PATTERN SEQ(A+, B+, C)
WHERE A.v < {t} AND B.v < {t} AND C.v < {t}
WITHIN {w} seconds;"""

# throughput shapes of the type-grained kernel: (label, RETURN, PATTERN)
SHAPES = (
    ("SEQ(A+, B+, C+) COUNT(*)", "COUNT(*)", "SEQ(A+, B+, C+)"),
    ("SEQ(A, B+, C) COUNT(*)", "COUNT(*)", "SEQ(A, B+, C)"),
    ("SEQ(A+, B+, C) COUNT(*), SUM(B.v)", "COUNT(*), SUM(B.v)", "SEQ(A+, B+, C)"),
)


# ---------------------------------------------------------------------------
# data


class Stream:
    """One seeded stream: numpy columns, and the Arrow table built on demand."""

    def __init__(self, codes: np.ndarray, ts: np.ndarray, v: np.ndarray, windows: int) -> None:
        self.codes = codes
        self.ts = ts
        self.v = v
        self.windows = windows
        self._table: Any = None

    def __len__(self) -> int:
        return len(self.ts)

    def head(self, n: int) -> Stream:
        return Stream(self.codes[:n], self.ts[:n], self.v[:n], self.windows)

    def table(self) -> Any:
        """The events as the engine's input: ``type`` (dictionary-coded), ``ts`` (µs), ``v``."""
        if self._table is None:
            import pyarrow as pa

            self._table = pa.table({
                "type": pa.DictionaryArray.from_arrays(
                    pa.array(self.codes.astype(np.int32)), pa.array(list(TYPES))
                ),
                "ts": pa.array(self.ts, pa.int64()),
                "seq": pa.array(np.arange(len(self.ts), dtype=np.int64)),
                "v": pa.array(self.v),
            })
        return self._table


def bursty_types(rng: np.random.Generator, n: int, burst: float) -> np.ndarray:
    """Event types in bursts of one type (geometric lengths with mean ``burst``)."""
    out = np.empty(0, dtype=np.int8)
    while len(out) < n:
        m = max(16, int(2 * (n - len(out)) / burst) + 16)
        lengths = rng.geometric(1.0 / burst, size=m) if burst > 1 else np.ones(m, dtype=np.int64)
        types = rng.integers(0, 3, size=m).astype(np.int8)
        out = np.concatenate([out, np.repeat(types, lengths)])
    return out[:n]


def make_stream(
    size: int,
    windows: int,
    burst: float,
    seed: int,
    plant: tuple[int, int, int] | None = None,
    threshold: int = 0,
) -> Stream:
    """``windows`` tumbling windows of exactly ``size`` events each (distinct µs time stamps).

    With ``plant = (ka, kb, kc)``, every other event gets ``v >= threshold`` and per
    window ka A, kb B and kc C events in this order get ``v < threshold`` (from 100 events
    per window on: the A's in its first tenth, the B's in the middle tenth, the C's in the
    last tenth, so the two-step reference's scans have the same length at every size).
    """
    rng = np.random.default_rng(seed)
    span = WINDOW_S * SECOND
    ts = np.empty(size * windows, dtype=np.int64)
    for w in range(windows):
        offsets = np.sort(rng.choice(span, size=size, replace=False))
        ts[w * size : (w + 1) * size] = BASE_US + w * span + offsets
    codes = bursty_types(rng, size * windows, burst)
    v = rng.integers(0, V_RANGE, size=size * windows, dtype=np.int64)
    if plant is not None:
        v = rng.integers(threshold, V_RANGE, size=size * windows, dtype=np.int64)
        want = [0] * plant[0] + [1] * plant[1] + [2] * plant[2]
        k = len(want)
        for w in range(windows):
            if size < k:
                break
            if size >= 100:  # A's in the first tenth, B's mid-window, C's in the last tenth
                parts = []
                for lo, count in ((0.0, plant[0]), (0.45, plant[1]), (0.9, plant[2])):
                    a = int(lo * size)
                    parts.append(np.sort(rng.choice(size // 10, size=count, replace=False)) + a)
                pos = np.concatenate(parts) + w * size
            else:
                pos = np.sort(rng.choice(size, size=k, replace=False)) + w * size
            codes[pos] = want
            v[pos] = rng.integers(0, max(1, threshold), size=k)
    return Stream(codes, ts, v, windows)


def compile_query(text: str) -> tuple[CompiledQuery, dict[str, Any]]:
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    spec = plan["queries"][0]
    return load_plan(plan).queries[spec["name"]], spec


def twostep_units(prefix_spec: dict[str, Any], stream: Stream) -> tuple[float, bool]:
    """The two-step reference's work, in (trend prefixes x window events) + events: it scans
    the rest of its window once per trend prefix. Prefixes are counted by COGRA; the second
    value tells whether some window has more than 10^38 of them."""
    prefixes = run_entry(prefix_spec, stream, "cogra")
    windows, counts = np.unique(stream.ts // (WINDOW_S * SECOND), return_counts=True)
    per_window = dict(zip(windows.tolist(), counts.tolist(), strict=True))
    overflow = any(r.trends != r.trends for r in prefixes.values())
    units = float(len(stream))
    for k, r in prefixes.items():
        if r.trends == r.trends:
            units += float(r.trends) * per_window.get(k, 0)
    return units, overflow


def prefix_query(spec: dict[str, Any]) -> dict[str, Any]:
    """The plan entry of the query counting trend *prefixes*: every positive variable ends
    a match."""
    spec = copy.deepcopy(spec)
    spec["template"]["end"] = [v["name"] for v in spec["variables"] if not v["negated"]]
    spec["aggregates"] = [{"name": "COUNT(*)", "fn": "count_star"}]
    return spec


def plan_of(spec: dict[str, Any]) -> Any:
    """A loaded one-query plan of a plan query entry."""
    plan = {"format_version": 1, "workload_hash": "sha256:bench", "queries": [spec], "sharing": []}
    return load_plan(plan)


def run_entry(spec: dict[str, Any], stream: Stream, strategy: str, plan: Any = None) -> dict:
    """Window index -> state of the (ungrouped) query, through ``engine.evaluate_partials``."""
    plan = plan_of(spec) if plan is None else plan
    partials = evaluate_partials(plan, stream.table(), strategy=strategy)
    return {k: r for (_, k), r in partials[spec["name"]].items()}


# ---------------------------------------------------------------------------
# running and checking


def runner(
    name: str, query: CompiledQuery, spec: dict[str, Any], stream: Stream
) -> Callable[[], dict]:
    if name not in STRATEGIES:
        raise ValueError(name)
    plan = plan_of(spec)  # loaded outside the timing
    return lambda: run_entry(spec, stream, name, plan)


def timed(fn: Callable[[], dict], repeats: int, budget: float) -> tuple[float, list[float], dict]:
    """Best of ``repeats`` runs (fewer when the runs exhaust ``budget`` seconds)."""
    times: list[float] = []
    result: dict = {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        if sum(times) > budget:
            break
    return min(times), times, result


def rows(query: CompiledQuery, results: dict) -> dict[int, dict[str, Any]]:
    return {k: finalize(query, r) for k, r in results.items() if r.trends}


def jsonable(value: Any) -> Any:
    if value is OVERFLOW:
        return "OVERFLOW"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def differences(want: dict, got: dict, limit: int = 5) -> list[dict[str, Any]]:
    out = []
    for k in sorted(set(want) | set(got)):
        w, g = want.get(k), got.get(k)
        if (
            w is None
            or g is None
            or w.keys() != g.keys()
            or not all(is_equal(g[a], w[a]) for a in w)
        ):
            out.append(
                {
                    "window": k,
                    "want": {a: jsonable(x) for a, x in (w or {}).items()},
                    "got": {a: jsonable(x) for a, x in (g or {}).items()},
                }
            )
            if len(out) >= limit:
                break
    return out


def summarize_rows(r: dict[int, dict[str, Any]]) -> dict[str, Any]:
    counts = [x["COUNT(*)"] for x in r.values()]
    exact = [c for c in counts if c is not OVERFLOW]
    return {
        "windows_with_trends": len(r),
        "windows_overflowed": len(counts) - len(exact),
        "trends_total_exact_windows": sum(exact),
    }


# ---------------------------------------------------------------------------
# the size sweep


def sweep(args: argparse.Namespace, log: Callable[[str], None]) -> list[dict[str, Any]]:
    series_defs: list[tuple[str, float | None, tuple[int, int, int] | None]] = [
        (f"selectivity {s:g}", s, None) for s in args.selectivity
    ]
    if args.sparse:
        series_defs.append(("sparse " + ",".join(map(str, args.sparse)), None, tuple(args.sparse)))
    out = []
    for label, sel, plant in series_defs:
        log(f"== {label}")
        points = []
        unit_cost: float | None = None  # two-step seconds per work unit, calibrated below
        per_event: dict[str, float] = {}
        for size in args.sizes:
            windows = max(1, min(args.max_windows, math.ceil(args.min_events / size)))
            if plant is not None:
                threshold = 1000  # only the planted events pass
            else:
                threshold = int(round(sel * V_RANGE))
            stream = make_stream(size, windows, args.burst, args.seed + size, plant, threshold)
            text = QUERY.format(t=threshold, w=WINDOW_S)
            query, spec = compile_query(text)
            n = len(stream)
            matching = int(np.count_nonzero(stream.v < threshold))
            # projected two-step cost: its work units (prefixes x window events) x its unit cost,
            # calibrated on its own runs (first on a head of the stream of <= 20000 events)
            prefix_spec = prefix_query(spec)
            units, overflow = twostep_units(prefix_spec, stream)
            calibration: dict[str, Any] | None = None
            if unit_cost is None and not overflow:
                head = stream.head(min(n, args.calibration_events))
                head_units, head_overflow = twostep_units(prefix_spec, head)
                if not head_overflow and head_units * 1e-5 < args.limit:
                    best, _, _ = timed(runner("twostep", query, spec, head), 1, 0)
                    unit_cost = best / head_units
                    calibration = {"events": len(head), "units": head_units, "seconds": best}
            point: dict[str, Any] = {
                "size": size,
                "windows": windows,
                "events": n,
                "threshold": threshold,
                "matching_events": matching,
                "selectivity": matching / n,
                "twostep_work_units": "OVERFLOW" if overflow else units,
                "strategies": {},
            }
            if calibration:
                point["twostep_calibration"] = calibration
            results: dict[str, dict] = {}
            for name in STRATEGIES:
                if name == "twostep":
                    projected = math.inf if overflow or unit_cost is None else unit_cost * units
                else:
                    projected = per_event.get(name, 0.0) * n
                entry: dict[str, Any] = {
                    "projected_s": jsonable(
                        round(projected, 4) if math.isfinite(projected) else projected
                    )
                }
                if projected > args.limit:
                    entry["status"] = "skipped: too slow"
                    entry["reason"] = (
                        "more than 10^38 trend prefixes per window"
                        if overflow and name == "twostep"
                        else "no calibration (the first events alone have too many trends)"
                        if projected == math.inf
                        else f"projected {projected:.3g} s > limit {args.limit:g} s"
                    )
                    point["strategies"][name] = entry
                    log(f"  size {size:>8} {name:>15}: skipped ({entry['reason']})")
                    continue
                stream.table()  # build the Arrow table outside the timing
                best, times, result = timed(
                    runner(name, query, spec, stream), args.repeat, args.repeat_budget
                )
                entry.update(
                    status="ok",
                    best_s=best,
                    runs_s=times,
                    seconds_per_window=best / windows,
                    events_per_s=n / best if best > 0 else None,
                )
                point["strategies"][name] = entry
                results[name] = rows(query, result)
                if name == "twostep":
                    unit_cost = best / units
                else:
                    per_event[name] = max(per_event.get(name, 0.0), best / n)
                log(f"  size {size:>8} {name:>15}: {best:10.4f} s  {n / best:12,.0f} ev/s")
            base = (
                "twostep"
                if "twostep" in results
                else "greta"
                if "greta" in results
                else next(iter(results))
            )
            point["checked_against"] = base
            point["agree"] = True
            point["mismatches"] = {}
            for name, r in results.items():
                diff = differences(results[base], r)
                if diff:
                    point["agree"] = False
                    point["mismatches"][name] = diff
            point.update(summarize_rows(results[base]))
            ran = {k: v["best_s"] for k, v in point["strategies"].items() if v["status"] == "ok"}
            engines = {k: t for k, t in ran.items() if k in ENGINES}
            if engines:
                best_name = min(engines, key=engines.get)
                point["best_engine"] = best_name
                if "twostep" in ran:
                    point["speedup_best_engine_vs_twostep"] = ran["twostep"] / engines[best_name]
                    point["speedup_vs_twostep"] = {
                        k: ran["twostep"] / t for k, t in engines.items()
                    }
                if "greta" in ran:
                    point["speedup_vs_greta"] = {
                        k: ran["greta"] / t for k, t in engines.items() if k != "greta"
                    }
            if not point["agree"]:
                log(f"  size {size:>8} DISAGREEMENT: {point['mismatches']}")
            points.append(point)
            stream._events = None
        twostep_done = [p["size"] for p in points if p["strategies"]["twostep"]["status"] == "ok"]
        out.append(
            {
                "series": label,
                "selectivity": sel,
                "planted": list(plant) if plant else None,
                "points": points,
                "twostep_largest_size": max(twostep_done) if twostep_done else None,
            }
        )
    return out


# ---------------------------------------------------------------------------
# kernel throughput

# the ways COGRA's kernel is timed in the throughput runs: what ships, and with the skipping of
# windows whose counts all saturated switched off (engine/strategies/cogra/kernel.py's SKIP_SATURATED)
@contextlib.contextmanager
def _skip_saturated(on: bool) -> Iterator[None]:
    cogra.kernel.SKIP_SATURATED = on
    try:
        yield
    finally:
        cogra.kernel.SKIP_SATURATED = True


KERNEL_VARIANTS: dict[str, Callable[[], contextlib.AbstractContextManager[None]]] = {
    "columnar": lambda: _skip_saturated(True),
    "columnar_no_overflow_skip": lambda: _skip_saturated(False),
}



def throughput(args: argparse.Namespace, log: Callable[[str], None]) -> list[dict[str, Any]]:
    n = args.throughput_events
    out = []
    log(f"== COGRA type-grained throughput, {n:,} events")
    for burst in args.throughput_bursts:
        for per_window in args.throughput_windows:
            windows = max(1, n // per_window)
            stream = make_stream(per_window, windows, burst, args.seed + 7)
            for label, ret, pattern in SHAPES:
                for slide in (None, WINDOW_S // 5):
                    text = (
                        f"QUERY tp RETURN {ret} PATTERN {pattern} WITHIN {WINDOW_S} seconds"
                        + (f" SLIDE {slide:g} seconds" if slide else "")
                        + ";"
                    )
                    if slide and slide != int(slide):
                        continue
                    query, spec = compile_query(text)
                    entry: dict[str, Any] = {
                        "shape": label,
                        "window": f"{WINDOW_S} s"
                        + (f" slide {slide:g} s" if slide else " tumbling"),
                        "events_per_window": per_window,
                        "burst_mean": burst,
                        "events": len(stream),
                    }
                    for key, variant in KERNEL_VARIANTS.items():
                        with variant():
                            best, _, result = timed(
                                runner("cogra", query, spec, stream),
                                args.repeat,
                                args.repeat_budget,
                            )
                        entry[key] = {"best_s": best, "events_per_s": len(stream) / best}
                    overflowed = sum(1 for r in result.values() if r.trends != r.trends)
                    entry["windows_with_trends"] = len(result)
                    entry["windows_overflowed"] = overflowed
                    log(
                        f"  burst {burst:>4} {per_window:>8}/window {entry['window']:>20} {label:<36} "
                        + ", ".join(f"{k} {entry[k]['events_per_s']:,.0f} ev/s" for k in KERNEL_VARIANTS)
                        + f"; overflowed {overflowed}/{len(result)}"
                    )
                    out.append(entry)
            stream._events = None
    return out


# ---------------------------------------------------------------------------
# the experiment

TITLE = "Engine: two-step vs GRETA vs COGRA, 10 to 10^6 events per window; COGRA's kernel throughput"
SEED = 1
# per size: the settings the options override
PRESETS: dict[str, dict[str, Any]] = {
    "smoke": dict(sizes=[10, 100, 1000], selectivity=[1.0, 0.1], sparse=[2, 1, 1], min_events=2000, max_windows=50,
                  limit=2.0, throughput_events=20_000, throughput_windows=[100, 10_000], throughput_bursts=[8.0]),
    "small": dict(sizes=[10, 100, 1000, 10_000, 100_000], selectivity=[1.0, 0.5, 0.1], sparse=[3, 3, 2],
                  min_events=100_000, max_windows=10**9, limit=20.0, throughput_events=200_000,
                  throughput_windows=[100, 10_000], throughput_bursts=[8.0, 1.0]),
    "full": dict(sizes=[10, 100, 1000, 10_000, 100_000, 1_000_000], selectivity=[1.0, 0.5, 0.1], sparse=[3, 3, 2],
                 min_events=200_000, max_windows=10**9, limit=60.0, throughput_events=1_000_000,
                 throughput_windows=[100, 10_000, 1_000_000], throughput_bursts=[8.0, 1.0]),
}


def _ints(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x]


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x]


def _sparse(text: str) -> list[int]:
    counts = [int(x) for x in text.split(",") if x]
    if counts and len(counts) != 3:
        raise argparse.ArgumentTypeError("--sparse takes three counts: A,B,C ('' for none)")
    return counts


def add_options(p: Any) -> None:
    p.add_argument("--sizes", type=_ints, help="events per window, comma separated (full: 10,...,1000000)")
    p.add_argument("--selectivity", type=_floats, help="fractions of events passing the local predicates (1.0,0.5,0.1)")
    p.add_argument("--sparse", type=_sparse, help="planted A,B,C matches per window of the sparse series ('' = none)")
    p.add_argument("--limit", type=float, help="skip a strategy whose projected time exceeds this (s; full: 60)")
    p.add_argument("--min-events", type=int, help="windows per size: enough for this many events (full: 200000)")
    p.add_argument("--burst", type=float, default=8.0, help="mean burst length (default 8)")
    p.add_argument("--repeat-budget", type=float, default=20.0, help="stop repeating a point after this many seconds")
    p.add_argument("--calibration-events", type=int, default=20_000, help="events of the two-step calibration run")
    p.add_argument("--throughput-events", type=int, help="events of the throughput runs (full: 1000000)")
    p.add_argument("--throughput-windows", type=_ints, help="events per window of the throughput runs")
    p.add_argument("--throughput-bursts", type=_floats, help="mean burst lengths of the throughput runs")
    p.add_argument("--no-throughput", action="store_true", help="skip the kernel throughput runs")


def settings(ctx: Context) -> argparse.Namespace:
    """The run's settings: the size's preset, each overridden by its option when given."""
    preset = PRESETS[ctx.size]
    out = {k: ctx.option(k, v) for k, v in preset.items()}
    for k in ("burst", "repeat_budget", "calibration_events", "no_throughput"):
        out[k] = ctx.option(k)
    return argparse.Namespace(**out, repeat=ctx.repeat, seed=ctx.seed)


def run(ctx: Context) -> dict[str, Any]:
    args = settings(ctx)
    series = sweep(args, ctx.log)
    through = [] if args.no_throughput else throughput(args, ctx.log)
    figures, points, checks, disagreements = [], [], 0, []
    for s in series:
        fig = Figure(s["series"].replace(" ", "-"), s["series"], "events per window", [p["size"] for p in s["points"]],
                     list(STRATEGIES), y_label="seconds per window (best of repeats)")
        for j, point in enumerate(s["points"]):
            for name, entry in point["strategies"].items():
                if entry["status"] == "ok":
                    fig.series[name][j] = round(entry["seconds_per_window"], 9)
                points.append({"figure": fig.id, "x": point["size"], "strategy": name, "events": point["events"],
                               "windows": point["windows"], **entry})
            ran = [n for n, e in point["strategies"].items() if e["status"] == "ok"]
            checks += max(0, len(ran) - 1)
            for name, diff in point["mismatches"].items():
                disagreements.append({"figure": fig.id, "x": point["size"],
                                      "strategies": [point["checked_against"], name], "difference": diff})
        figures.append(fig)
    if through:
        labels = [f"{t['shape']}, {t['window']}, {t['events_per_window']}/window, burst {t['burst_mean']:g}"
                  for t in through]
        fig = Figure("throughput", f"COGRA's type-grained kernel, {args.throughput_events:,} events", "run",
                     [f"#{i + 1}" for i in range(len(labels))], [], y_label="events per second")
        fig.extra["run"] = labels
        fig.notes += [f"#{i + 1}: {label}" for i, label in enumerate(labels)]
        for key in KERNEL_VARIANTS:
            fig.series[key] = [round(t[key]["events_per_s"]) for t in through]
        figures.append(fig)
    strategies = {n: {"label": label, "kind": "engine", "status": OK,
                      "note": f"trendlake.engine.evaluate_partials(strategy={n!r}) on an Arrow table"}
                  for n, label in zip(STRATEGIES, ("two-step", "GRETA", "COGRA"), strict=True)}
    strategies |= {k: {"label": f"COGRA's kernel ({k})", "kind": "kernel", "status": OK}
                   for k in KERNEL_VARIANTS if through}
    report = {"series": series, "throughput": through}
    return make_record(
        ctx, title=TITLE, paper="DESIGN §7: the engine against the two-step reference",
        compares="two-step vs GRETA vs COGRA on SEQ(A+, B+, C) COUNT(*), SUM(B.v), one query, same events",
        strategies=strategies,
        figures=[fig.with_ratios((("twostep", "greta"), ("twostep", "cogra"), ("greta", "cogra"))) for fig in figures],
        points=points, checks=checks, disagreements=disagreements,
        query=QUERY.format(t="t", w=WINDOW_S),
        data={
            "types": list(TYPES), "window_s": WINDOW_S,
            "events_per_window": "exactly `size`, distinct µs time stamps, uniform in the window",
            "burst_mean": args.burst, "attribute": "v: integer uniform in [0, 10^9)",
            "sparse": "per window ka A, kb B, kc C events with v < t planted in pattern order "
                      "(A's in the first, B's in the middle, C's in the last tenth of the window); all others v >= t",
        },
        settings=vars(args),
        timing="best of `repeat` wall-clock runs (time.perf_counter) in one process; inputs built beforehand",
        summary=summary(report), **report,
    )


def summary(report: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"series": {}}
    for s in report["series"]:
        pts = s["points"]
        largest = pts[-1] if pts else None
        entry: dict[str, Any] = {"twostep_largest_size": s["twostep_largest_size"]}
        if largest:
            entry["largest_size"] = largest["size"]
            entry["largest_size_seconds"] = {
                k: v.get("best_s", v["status"]) for k, v in largest["strategies"].items()
            }
            entry["largest_size_events_per_s"] = {
                k: v["events_per_s"]
                for k, v in largest["strategies"].items()
                if v["status"] == "ok"
            }
            if "speedup_best_engine_vs_twostep" in largest:
                entry["largest_size_speedup_best_engine_vs_twostep"] = largest[
                    "speedup_best_engine_vs_twostep"
                ]
                entry["largest_size_best_engine"] = largest["best_engine"]
        out["series"][s["series"]] = entry
    if report.get("throughput"):
        out["cogra_throughput_events_per_s"] = {
            f"{t['shape']} | {t['window']} | {t['events_per_window']}/window | burst {t['burst_mean']:g}": round(
                t["columnar"]["events_per_s"]
            )
            for t in report["throughput"]
        }
    return out
