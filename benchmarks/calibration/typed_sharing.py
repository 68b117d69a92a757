"""Type-grained sharing side by side: one query alone, the workload alone, the workload shared.

The shape of the issue "type-grained groups that pay": ``N`` (default 50)
type-grained queries ``SEQ(Ti, K+)``, ``SEQ(Ti, K+, Tj)``, ``SEQ(K+, Tj)``,
each with its own ``K.x < c`` (``trendlake workload hamlet-typed``), ``GROUP-BY``
the stream's group-by, 10-minute windows sliding by 5, over ``--events``
(default 200,000) events of the ``stocks`` stream model (``datagen.streams``)
with the Kleene type ``Trade`` about 40% of the events in bursts (mean length
``--burst``).

Measured in one process on the same data, best of ``--repeat``:

- ``engine``: ``engine.evaluate`` of the first query alone, of the N queries
  alone (planner ``none``), of every sharable set shared (``share-all``), and
  of the plans the ``hamlet`` and ``auto`` planners make from the events'
  statistics;
- ``eval``: ``trendlake eval`` end to end on a Parquet file of the events,
  planner ``none`` vs ``hamlet`` (statistics computed each run) vs a stored
  ``hamlet`` plan (``--plan``), and the first query alone;
- ``python_shared`` (``--python-executor``): the shared plan on the Python
  executor (the compiled pass switched off), for reference;
- ``calibration``: the kernels' costs per operation fitted over several shapes
  (``calibrate``), which ``optimizer.cost``'s ``SHARED_ROW_COST``,
  ``CLASS_UPDATE_COST`` and ``OWN_STEP_COST`` are taken from.

The variants run in turn, ``--repeat`` rounds, best of each.

Every shared plan's rows are checked equal to the unshared plan's. The ratios
(N queries / one query) are in the record (``typed_sharing``, or
``typed_sharing_same_threshold`` with ``--same-threshold``). Sizes: 5 queries
on 5,000 events (smoke), 50 on 50,000 (small), 50 on 200,000 (full).

It measures one sharing kind's internals (the compiled shared pass of
``engine.shared.kleene``), so it lives in ``benchmarks/calibration``, outside
the experiments that reach a kind only through the registry.

    python -m benchmarks typed_sharing [--size full] [--queries 50] [--events 200000] [--repeat 3]
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.experiments.common import OK, Context, Figure, make_record
from trendlake import engine, optimizer

TITLE = "Type-grained sharing: one query alone, the workload alone, the workload shared; the kernels' costs"
SEED = 7
STREAM = "stocks"
KLEENE = "Trade"
ATTRIBUTE = "price"


def events_table(n: int, seed: int, burst: float, share: float) -> pa.Table:
    """``n`` events of the stocks model, the Kleene type ``share`` of them."""
    from trendlake.datagen.streams import generate
    from trendlake.schemas import load_stream_schema

    types = load_stream_schema(STREAM)["event_types"]
    rest = (1.0 - share) / (len(types) - 1)
    mix = {t: (share if t == KLEENE else rest) for t in types}
    return pa.concat_tables(list(generate(STREAM, n, seed=seed, burst=burst, mix=mix)))


def workload_text(n: int, seed: int, table: pa.Table, same_threshold: bool = False) -> str:
    from trendlake.datagen.workloads import generate_workload
    from trendlake.schemas import load_stream_schema

    prices = np.asarray(table.column(ATTRIBUTE).to_numpy(zero_copy_only=False), dtype=float)
    prices = prices[~np.isnan(prices)]
    ranges = {ATTRIBUTE: (float(np.quantile(prices, 0.05)), float(np.quantile(prices, 0.95)))}
    return generate_workload("hamlet-typed", n, seed, load_stream_schema(STREAM), ranges=ranges,
                             kleene_type=KLEENE, attribute=ATTRIBUTE, same_threshold=same_threshold)


def best(fn: Callable[[], Any], repeat: int) -> tuple[Any, float, list[float]]:
    times = []
    result = None
    for _ in range(max(1, repeat)):
        gc.collect()
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return result, min(times), times


def round_robin(fns: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """Each call's last result and wall times, the calls taken in turn ``repeat`` times (so a
    change of the machine's load falls on all of them alike)."""
    results: dict[str, Any] = {}
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(max(1, repeat)):
        for name, fn in fns.items():
            gc.collect()
            started = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - started)
    return results, times


def canonical(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def cli(argv: list[str]) -> list[dict[str, Any]]:
    from trendlake.jobs.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"trendlake {' '.join(argv)} exited with {code}: {err.getvalue().strip()}")
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def recorded_calls(owner: Any, attr: str, plan: Any, table: pa.Table) -> list[tuple[Any, ...]]:
    """The arguments of every ``run`` call ``engine.evaluate(plan, table)`` makes on the
    compiled module ``owner.<attr>`` (replaced by a recorder for that run)."""
    real = getattr(owner, attr)
    calls: list[tuple[Any, ...]] = []

    class Recording:
        def run(self, *a: Any) -> Any:
            calls.append(a)
            return real.run(*a)

    setattr(owner, attr, Recording())
    try:
        engine.evaluate(plan, table)
    finally:
        setattr(owner, attr, real)
    return calls


def replay_time(calls: list[tuple[Any, ...]], fn: Callable[..., Any], repeat: int) -> float:
    """The best of ``repeat`` runs of ``fn`` over every recorded call, in seconds."""
    best_s = float("inf")
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        for a in calls:
            fn(*a)
        best_s = min(best_s, time.perf_counter() - started)
    return best_s


def cogra_steps(calls: list[tuple[Any, ...]]) -> int:
    """The steps COGRA's kernel made in ``calls``: a run of one variable's events in one
    partition applied to each open window."""
    steps = 0
    for ts, idx, masks, starts, _nv, _rank, _sl, _st, _pr, _ow, _en, within, slide in calls:
        rows = np.arange(len(ts)) if idx is None else np.asarray(idx)
        code = np.full(len(rows), -1)
        for v, m in enumerate(masks):
            code[np.asarray(m)[rows]] = v
        part = np.searchsorted(np.asarray(starts), rows, side="right") if starts is not None else np.zeros(len(rows))
        runs = 1 + int(np.count_nonzero((code[1:] != code[:-1]) | (part[1:] != part[:-1]))) if len(rows) else 0
        steps += runs * (-(-within // slide))  # each step goes to every open window
    return steps


def measure_shape(table: pa.Table, text: str, repeat: int) -> dict[str, Any]:
    """One shape's kernel times and counts: COGRA's compiled kernel over the queries alone
    (its time, the rows the queries visit and its steps) and the compiled shared pass over
    every sharable set shared (its time, the rows it visits, its class updates and own
    steps), each the best of ``repeat`` replays of the calls one evaluation makes."""
    from trendlake.engine.shared.kleene import compiled
    from trendlake.engine.strategies.cogra import kernel

    from benchmarks.experiments.common import forced_sharing

    raw = optimizer.build_plan(optimizer.compile_workload(text))
    alone = engine.load_plan(raw, optimizer.workload_hash(text))
    shared = engine.load_plan(forced_sharing(raw, "static"), optimizer.workload_hash(text))
    cogra_calls = recorded_calls(kernel, "_steps", alone, table)
    shared_calls = recorded_calls(compiled, "_typed", shared, table)
    counters = [compiled._typed.run(*a)[4] for a in shared_calls]

    def rows(calls: list[tuple[Any, ...]]) -> int:
        return sum(len(a[0]) if a[1] is None else len(a[1]) for a in calls)

    return {
        "cogra_s": replay_time(cogra_calls, kernel._steps.run, repeat), "alone_rows": rows(cogra_calls),
        "cogra_steps": cogra_steps(cogra_calls),
        "shared_s": replay_time(shared_calls, compiled._typed.run, repeat), "shared_rows": rows(shared_calls),
        "updates": sum(c[6] for c in counters), "own_steps": sum(c[7] for c in counters),
    }


def synthetic_table(rates: dict[str, float], minutes: int, seed: int) -> pa.Table:
    """Events of the given types at the given rates per minute, in random order."""
    rng = np.random.default_rng(seed)
    types = np.array(list(rates))
    p = np.array(list(rates.values()), dtype=float)
    n = int(sum(rates.values()) * minutes)
    ts = np.sort(rng.integers(0, minutes * 60_000_000, n))
    kinds = rng.choice(types, n, p=p / p.sum())
    return engine.table_from_rows([{"type": str(t), "ts": int(x) / 1e6, "seq": i, "x": 1}
                                   for i, (t, x) in enumerate(zip(kinds.tolist(), ts.tolist(), strict=True))])


PAIR = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(T1, T2+) WITHIN 1 minute;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(T3, T2+) WITHIN 1 minute;"""


def calibration_shapes(table: pa.Table, queries: int, seed: int, burst: float, small: bool) -> list[tuple[str, pa.Table, str]]:
    """The shapes the constants are fitted on: two queries over three densities of their own
    types against K, the workload's first 5, 10, 25 and all queries on the benchmark's events
    (a threshold each), and the workload with one threshold on a stream 70% K."""
    minutes = 60 if small else 600
    shapes = [(f"pair, own types dense ({label})", synthetic_table(rates, minutes * scale, seed), PAIR)
              for label, rates, scale in (("T1, T3 100/min, T2 10", {"T1": 100, "T2": 10, "T3": 100}, 1),
                                          ("T1, T3 4/min, T2 60", {"T1": 4, "T2": 60, "T3": 4}, 3),
                                          ("30/min each", {"T1": 30, "T2": 30, "T3": 30}, 2))]
    for n in sorted({min(x, queries) for x in (5, 10, 25, queries)}):
        shapes.append((f"{n} queries, a threshold each", table, workload_text(n, seed, table)))
    same = events_table(table.num_rows, seed, burst, 0.7)
    shapes.append((f"{queries} queries, one threshold, 70% K", same, workload_text(queries, seed, same, True)))
    return shapes


def nonnegative_fit(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The non-negative ``x`` least in relative error ``|a x / y - 1|`` (every shape counts
    alike, small or large): the best least-squares fit over each subset of the columns
    whose coefficients come out non-negative (few columns: every subset is tried)."""
    w = a / y[:, None]
    ones = np.ones(len(y))
    best, best_err = np.zeros(a.shape[1]), float("inf")
    for mask in range(1, 1 << a.shape[1]):
        cols = [i for i in range(a.shape[1]) if mask >> i & 1]
        x = np.linalg.lstsq(w[:, cols], ones, rcond=None)[0]
        if np.any(x < 0):
            continue
        err = float(np.sum((w[:, cols] @ x - ones) ** 2))
        if err < best_err:
            best, best_err = np.zeros(a.shape[1]), err
            best[cols] = x
    return best


def calibrate(shapes: list[tuple[str, pa.Table, str]], repeat: int) -> dict[str, Any]:
    """``optimizer.cost``'s constants of the compiled shared pass, measured on ``shapes``.

    COGRA's compiled kernel spends about the same time per row a query visits alone across
    shapes (its time per step varies several-fold), so that is the unit: its median over the
    shapes. The shared pass's time is fitted (non-negative, least relative squares over the
    shapes) as a cost per row it visits, per class update and per own step; in that unit these are
    ``SHARED_ROW_COST``, ``CLASS_UPDATE_COST`` and ``OWN_STEP_COST``."""
    measured = []
    for label, table, text in shapes:
        m = measure_shape(table, text, repeat)
        m["shape"] = label
        measured.append(m)
    row_ns = float(np.median([1e9 * m["cogra_s"] / m["alone_rows"] for m in measured]))
    a = np.array([[m["shared_rows"], m["updates"], m["own_steps"]] for m in measured], dtype=float)
    y = np.array([m["shared_s"] for m in measured])
    fit = nonnegative_fit(a, y) * 1e9
    predicted = a @ fit / 1e9
    for m, p in zip(measured, predicted.tolist(), strict=True):
        m["fit_error"] = round(p / m["shared_s"] - 1.0, 3)
        m["cogra_row_ns"] = round(1e9 * m["cogra_s"] / m["alone_rows"], 2)
        m["cogra_step_ns"] = round(1e9 * m["cogra_s"] / max(m["cogra_steps"], 1), 2)
        m["cogra_s"], m["shared_s"] = round(m["cogra_s"], 5), round(m["shared_s"], 5)
    return {
        "cogra_row_ns": round(row_ns, 2),
        "shared_row_ns": round(float(fit[0]), 2), "update_ns": round(float(fit[1]), 2),
        "own_step_ns": round(float(fit[2]), 2),
        "shared_row_cost": round(float(fit[0]) / row_ns, 3), "class_update_cost": round(float(fit[1]) / row_ns, 3),
        "own_step_cost": round(float(fit[2]) / row_ns, 3),
        "shapes": measured,
    }


def add_options(p: Any) -> None:
    p.add_argument("--queries", type=int, help="queries (by size: 5, 50, 50)")
    p.add_argument("--events", type=int, help="events (by size: 5000, 50000, 200000)")
    p.add_argument("--burst", type=float, default=4.5, help="mean burst length (default 4.5)")
    p.add_argument("--share", type=float, default=0.4, help="fraction of Trade events (default 0.4)")
    p.add_argument("--same-threshold", action="store_true", help="one threshold on Trade for every query")
    p.add_argument("--no-eval", action="store_true", help="skip the `trendlake eval` runs")
    p.add_argument("--python-executor", action="store_true",
                   help="also time the share-all plan on the Python executor (slow: tens of seconds)")


def run(ctx: Context) -> dict[str, Any]:
    queries = ctx.option("queries", ctx.pick(5, 50, 50))
    n_events = ctx.option("events", ctx.pick(5_000, 50_000, 200_000))
    burst, share, same_threshold = ctx.option("burst"), ctx.option("share"), ctx.option("same_threshold")
    repeat, log = ctx.repeat, ctx.log
    ctx.record_name = "typed_sharing_same_threshold" if same_threshold else "typed_sharing"
    from trendlake.engine.shared.kleene import compiled
    from trendlake.jobs.statistics import file_statistics

    from benchmarks.experiments.common import forced_sharing

    table = events_table(n_events, ctx.seed, burst, share)
    text = workload_text(queries, ctx.seed, table, same_threshold)
    workload = optimizer.compile_workload(text)
    first_text = text.split(";")[0] + ";"
    first_workload = optimizer.compile_workload(first_text)
    started = time.perf_counter()
    stats = file_statistics(table, workload, None)
    stats_s = time.perf_counter() - started

    def load(raw: dict[str, Any], source: str) -> Any:
        return engine.load_plan(raw, optimizer.workload_hash(source))

    alone_raw = optimizer.build_plan(workload)
    one = load(optimizer.build_plan(first_workload), first_text)
    alone = load(alone_raw, text)
    share_all = load(forced_sharing(alone_raw, "static"), text)
    started = time.perf_counter()
    hamlet_raw = optimizer.build_plan(workload, planner="hamlet", statistics=stats)
    plan_s = time.perf_counter() - started
    hamlet = load(hamlet_raw, text)
    auto_raw = optimizer.build_plan(workload, planner="auto", statistics=stats)
    plans = {"one_query": one, "alone": alone, "share_all": share_all, "hamlet": hamlet, "auto": load(auto_raw, text)}

    ty = np.asarray(table.column("type").to_pylist())
    facts = {
        "events": table.num_rows, "queries": queries, "kleene_share": round(float(np.mean(ty == KLEENE)), 4),
        "span_minutes": round(float(np.ptp(table.column("ts").cast(pa.int64()).to_numpy())) / 6e7, 1),
        "share_all_groups": [len(g["queries"]) for g in share_all.raw["sharing"]],
        "hamlet_groups": [len(g["queries"]) for g in hamlet_raw["sharing"]],
        "auto_groups": [len(g["queries"]) for g in auto_raw["sharing"]],
        "hamlet_estimate": hamlet_raw.get("estimated_cost"),
        "statistics_s": round(stats_s, 3), "hamlet_planning_s": round(plan_s, 3),
    }
    log(f"{facts['events']} events ({facts['kleene_share']:.0%} {KLEENE}, {facts['span_minutes']} minutes), "
          f"{queries} queries; share-all groups {facts['share_all_groups']}, hamlet groups {facts['hamlet_groups']}")

    engine_s: dict[str, float] = {}
    runs: dict[str, list[float]] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    for plan in plans.values():  # warm: generated step code, imports
        engine.evaluate(plan, table)
    rows, times = round_robin({name: (lambda plan=plan: engine.evaluate(plan, table)) for name, plan in plans.items()},
                              repeat)
    for name in plans:
        engine_s[name], runs[name] = min(times[name]), times[name]
        log(f"  engine {name:<10} {engine_s[name]:8.3f} s  ({len(rows[name])} rows)")
    if ctx.option("python_executor"):
        compiled.COMPILED = False
        try:
            rows["python_shared"], engine_s["python_shared"], runs["python_shared"] = best(
                lambda: engine.evaluate(share_all, table), 1)
        finally:
            compiled.COMPILED = True
        log(f"  engine {'python_shared':<10} {engine_s['python_shared']:8.3f} s  (share-all on the Python executor)")
    cal = calibrate(calibration_shapes(table, queries, ctx.seed, burst, ctx.size != "full"), repeat)
    log("  calibration: " + ", ".join(f"{k} {v}" for k, v in cal.items() if k != "shapes"))
    for m in cal["shapes"]:
        log(f"    {m['shape']}: COGRA {m['cogra_row_ns']} ns/row ({m['cogra_step_ns']} ns/step), "
            f"shared {m['shared_s']} s, fit {m['fit_error']:+.0%}")
    want = canonical(rows["alone"])
    same = {name: canonical(rows[name]) == want for name in ("share_all", "hamlet", "auto")}
    if "python_shared" in rows:
        same["python_shared"] = canonical(rows["python_shared"]) == want
    if not all(same.values()):
        log(f"DIFFERENT ROWS: {same}")

    eval_s: dict[str, float] = {}
    if not ctx.option("no_eval"):
        folder = Path(tempfile.mkdtemp(prefix="trendlake-typed-bench-"))
        events, wl, wl1, plan_path = (folder / "events.parquet", folder / "workload.etq", folder / "first.etq",
                                      folder / "plan.json")
        i = table.column_names.index("ts")
        ftable = table
        if not pa.types.is_timestamp(table.schema.field(i).type):
            ftable = table.set_column(i, "ts", table.column("ts").cast(pa.int64()).cast(pa.timestamp("us", tz="UTC")))
        pq.write_table(ftable, events)
        wl.write_text(text)
        wl1.write_text(first_text)
        cli(["plan", str(wl), "--planner", "hamlet", "--events", str(events), "--out", str(plan_path)])
        commands = {
            "one_query": ["eval", str(wl1), "--events", str(events), "--format", "json"],
            "none": ["eval", str(wl), "--events", str(events), "--format", "json"],
            "hamlet": ["eval", str(wl), "--events", str(events), "--planner", "hamlet", "--format", "json"],
            "hamlet_plan": ["eval", str(wl), "--events", str(events), "--plan", str(plan_path), "--format", "json"],
        }
        eval_rows, times = round_robin({name: (lambda cmd=cmd: cli(cmd)) for name, cmd in commands.items()}, repeat)
        for name in commands:
            eval_s[name], runs[f"eval_{name}"] = min(times[name]), times[name]
            log(f"  eval   {name:<10} {eval_s[name]:8.3f} s  ({len(eval_rows[name])} rows)")
        want_eval = canonical(eval_rows["none"])
        same["eval_hamlet"] = canonical(eval_rows["hamlet"]) == want_eval
        same["eval_hamlet_plan"] = canonical(eval_rows["hamlet_plan"]) == want_eval

    one_s = engine_s["one_query"]
    ratios = {f"engine_{k}_over_one": round(engine_s[k] / one_s, 2)
              for k in ("alone", "share_all", "hamlet", "auto", "python_shared") if k in engine_s}
    ratios["engine_alone_over_share_all"] = round(engine_s["alone"] / engine_s["share_all"], 2)
    ratios["engine_alone_over_hamlet"] = round(engine_s["alone"] / engine_s["hamlet"], 2)
    if eval_s:
        for k in ("none", "hamlet", "hamlet_plan"):
            ratios[f"eval_{k}_over_one"] = round(eval_s[k] / eval_s["one_query"], 2)
        ratios["eval_none_over_hamlet"] = round(eval_s["none"] / eval_s["hamlet"], 2)
    log("ratios: " + ", ".join(f"{k} {v}" for k, v in ratios.items()))
    log(f"same rows: {same}")
    engine_fig = Figure("engine", f"engine.evaluate, {facts['events']:,} events", "queries", [queries],
                        list(engine_s), y_label="seconds (least of the rounds)")
    for k, v in engine_s.items():
        engine_fig.series[k] = [round(v, 6)]
    figures = [engine_fig]
    if eval_s:
        eval_fig = Figure("eval", "trendlake eval end to end on a Parquet file", "queries", [queries],
                          [f"eval_{k}" for k in eval_s], y_label="seconds (least of the rounds)")
        for k, v in eval_s.items():
            eval_fig.series[f"eval_{k}"] = [round(v, 6)]
        figures.append(eval_fig)
    labels = {"one_query": "the first query alone", "alone": "every query alone (planner none)",
              "share_all": "every sharable set shared", "hamlet": "the hamlet planner's plan from the statistics",
              "auto": "the auto planner's plan from the statistics",
              "python_shared": "share-all on the Python executor", "eval_one_query": "trendlake eval, the first query",
              "eval_none": "trendlake eval, planner none", "eval_hamlet": "trendlake eval --planner hamlet",
              "eval_hamlet_plan": "trendlake eval --plan (a stored hamlet plan)"}
    pairs = [(k, "one_query") for k in engine_s if k != "one_query"] + [("alone", "share_all"), ("alone", "hamlet")]
    pairs += [(f"eval_{k}", "eval_one_query") for k in eval_s if k != "one_query"] + [("eval_none", "eval_hamlet")]
    return make_record(
        ctx, title=TITLE, paper="Hamlet (SIGMOD 2021) type-grained sharing; optimizer.cost",
        compares="one query alone, the workload alone and the workload shared, engine and trendlake eval",
        strategies={k: {"label": labels.get(k, k), "kind": fig.id, "status": OK} for fig in figures
                    for k in fig.series},
        figures=[fig.with_ratios(pairs) for fig in figures],
        points=[{"figure": fig.id, "x": queries, "strategy": k, "status": OK, "times_s": runs.get(k),
                 "best_s": v[0]} for fig in figures for k, v in fig.series.items()],
        checks=len(same), disagreements=[{"strategies": ["alone", k], "difference": "different rows"}
                                         for k, ok in same.items() if not ok],
        facts=facts,
        engine_s={k: round(v, 4) for k, v in engine_s.items()},
        eval_s={k: round(v, 4) for k, v in eval_s.items()},
        runs_s={k: [round(x, 4) for x in v] for k, v in runs.items()},
        named_ratios=ratios,
        same_rows=same,
        calibration=cal,
    )
