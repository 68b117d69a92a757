"""CET detection under a memory budget (dissertation part I, ch. 8): M-CET vs T-CET vs H-CET,
and the partitioning optimizers against exhaustive search.

Data: the dissertation's financial transaction stream (FT, §8.1) as its generator
describes it -- check deposits, ``rate`` events per second, each compatible with
``compat`` events of the previous second -- built as layers: the events of second
``t`` (``rate * seconds`` events in all, each second between half and one and a
half times ``rate``, at random) deposit into banks of ``compat`` checks each, and each check of second ``t + 1``
draws its source bank at random among them. The query is Section 1.1's check
kiting, ``PATTERN Check C+ WHERE C.destination = NEXT(C).source``, one window
holding every event: its complete trends grow as ``compat^seconds``.

* **detect_cpu / detect_memory** (after Figures 8.1(b) and 8.2(b): events per
  window grow with the window's seconds): per point, M-CET, T-CET and H-CET --
  ``engine.trends.plan(..., algorithm="auto", memory=budget)``: H-CET on
  branch-and-bound's partitioning within the budget, else M-CET -- each end to
  end (graph, complete trends, plan, every trend constructed and consumed, none
  kept), side by side, ``repeat`` times (median). Then one more run of each under
  ``tracemalloc``: its peak against the budget (the ``memory-budget`` series) and
  against the cost model's estimate. T-CET is skipped where its estimate exceeds
  the size's cap (it would not fit this machine: the dissertation's "T-CET would run
  out of memory"). Agreement: every algorithm gives the same trends (their number
  and an order-free digest of the vertex sequences) as many as the graph counts.
* **window_overlap** (after Figure 8.1(c): CPU per window as the window overlap
  grows): the kite query over a window of ``overlap_seconds`` sliding by a half,
  a quarter, an eighth of it over a stream twice as long, every window that meets
  the stream constructed (every complete trend, none kept) each alone (``plan``
  then the plan's algorithm) and all together sharing graphlets
  (``SharedWindows``: one span graph, panes reused across windows), side by side
  in one process, ``repeat`` times interleaved (median of the total over the
  number of windows). Both under the same budget, ``OVERLAP_BUDGET`` times
  ``--budget``: sharing holds the span graph beside the window's (a window that
  does not fit with it is planned alone, and sharing stops for its cluster).
  Agreement: per window, the same trends (number and order-free digest) both ways.
* **partition_quality / optimizer_time** (after Figures 8.3-8.5): on small random
  graphs (at most ``partitioning.MAX_EXHAUSTIVE_CUTS`` valid cuts) and budgets
  placed between the least memory any plan needs (0) and H-CET's without a cut
  (1), the estimated CPU of the plans of branch-and-bound and greedy over the
  exhaustive optimum's (1 = optimal; mean over the graphs where all three found a
  plan) and the optimizers' run times (exhaustive search costs every plan whatever
  the budget: it runs once per graph, its plan at each budget is the cheapest of
  the plans it costed that fits). Agreement: every plan returned fits the budget,
  and none is cheaper than exhaustive search's.

    python -m benchmarks cet [--size small|full] [--seconds 4,6,8] [--rate 6] [--compat 3] [--budget 4M]
        [--overlap-seconds 8]
"""

from __future__ import annotations

import random
import statistics
import time
import tracemalloc
from typing import Any

from trendlake.engine.events import make_events
from trendlake.engine.trends import SharedWindows
from trendlake.engine.trends import plan as plan_window
from trendlake.engine.trends import run as construct
from trendlake.engine.trends.cost import cost
from trendlake.engine.trends.partitioning import MAX_EXHAUSTIVE_CUTS, OPTIMIZERS, valid_cuts

from benchmarks.experiments.common import OK, Context, Figure, int_list, make_record
from trendlake import engine, optimizer

TITLE = "CET detection: M-CET vs T-CET vs H-CET under a memory budget; partitioning optimizers (dissertation ch. 8)"
PAPER = "O. Poppe, Event Stream Analytics (dissertation), part I: complete event trend detection, ch. 8"
REPORTED = [
    "Fig. 8.1(a)-(b): CPU grows exponentially with events per window; CET (H-CET) 42x faster than SASE "
    "(M-CET-like) at 50k events/s",
    "Fig. 8.2: H-CET stays within the memory limit; it coincides with T-CET below 50k events/s or 50-minute "
    "windows, where T-CET would run out of memory; SASE (M-CET-like) needs 5 orders of magnitude less memory",
    "Fig. 8.3-8.4: B&B up to 2 orders of magnitude faster than exhaustive search and returns an optimal plan; "
    "greedy up to 3x faster than B&B",
    "Fig. 8.5: greedy's plan 2.8x slower than the optimal one at 20k events/s",
    "Fig. 8.1(c): as the window overlap grows, CET's CPU time per window decreases exponentially (graph "
    "construction, partitioning and detection in graphlets shared); 13x faster than SASE at 50 minutes overlap",
]
QUERY = "QUERY kites RETURN COUNT(*) PATTERN Check C+ WHERE C.destination = NEXT(C).source WITHIN 1 day;"
DETECT = ["m-cet", "t-cet", "h-cet"]
OPTIMIZER_NAMES = ["branch-and-bound", "greedy", "exhaustive"]
LABELS = {
    "m-cet": ("M-CET", "detection"),
    "t-cet": ("T-CET", "detection"),
    "h-cet": ("H-CET, auto within the budget", "detection"),
    "memory-budget": ("memory budget", "limit"),
    "branch-and-bound": ("branch-and-bound", "optimizer"),
    "greedy": ("greedy", "optimizer"),
    "exhaustive": ("exhaustive", "optimizer"),
    "alone": ("each window alone (auto)", "overlap"),
    "shared": ("windows sharing graphlets (§7.3)", "overlap"),
}
FRACTIONS = [0.0, 0.25, 0.5, 0.75, 1.0]
OVERLAP_BUDGET = 8  # the overlap figure's budget, times --budget: room for the span graph and the cache


def add_options(p: Any) -> None:
    from trendlake.jobs.cli.trends import byte_size

    p.add_argument("--seconds", type=int_list, help="window lengths in seconds, comma separated (the x axis)")
    p.add_argument("--rate", type=int, help="events per second (mean of a layer)")
    p.add_argument("--compat", type=int, help="events each event is compatible with (of the previous second)")
    p.add_argument("--budget", type=byte_size, help="the memory budget of H-CET (bytes, or 512K, 4M, ...)")
    p.add_argument("--graphs", type=int, help="random small graphs of the partitioning figures (each at every budget)")
    p.add_argument("--overlap-seconds", type=int, help="the window of the overlap figure, in seconds (slides: 1/2, "
                                                       "1/4, 1/8 of it)")


def stream(seconds: int, rate: int, compat: int, seed: int) -> list[Any]:
    """The FT stream (see the module docstring): one layer of checks per second."""
    rng = random.Random(seed)
    sizes = [rate] * seconds  # rate * seconds events, moved between seconds at random
    for _ in range(rate * seconds // 3):
        i, j = rng.randrange(seconds), rng.randrange(seconds)
        if sizes[i] > max(1, rate - rate // 2) and sizes[j] < rate + rate // 2:
            sizes[i] -= 1
            sizes[j] += 1
    rows: list[dict[str, Any]] = []
    banks = 1
    for t, size in enumerate(sizes):
        for j in range(size):
            source = f"s{t}b{rng.randrange(banks)}"
            rows.append({"type": "Check", "ts": 1 + t, "seq": len(rows), "source": source,
                         "destination": f"s{t + 1}b{j // compat}"})
        banks = (size + compat - 1) // compat
    return make_events(rows)


def compiled() -> Any:
    return engine.load_plan(optimizer.build_plan(optimizer.compile_workload(QUERY))).queries["kites"]


def consume(planning: Any, algorithm_plan: Any) -> tuple[int, int]:
    """Construct every trend (none kept): their number and an order-free digest."""
    n = digest = 0
    for path in construct(planning.paths, algorithm_plan):
        n += 1
        digest = (digest + hash(path)) & 0xFFFFFFFFFFFFFFFF
    return n, digest


def detect(q: Any, events: list[Any], name: str, budget: int) -> tuple[Any, tuple[int, int]]:
    """One end-to-end run of ``name``: plan (graph included) and construct every trend."""
    algorithm = "auto" if name == "h-cet" else name
    planning = plan_window(q, events, (), 0, algorithm=algorithm, memory=budget if name == "h-cet" else None, limit=0)
    if planning.plan is None or planning.refusal is not None:
        raise RuntimeError(f"{name}: {planning.refusal}")
    return planning, consume(planning, planning.plan)


def run(ctx: Context) -> dict[str, Any]:
    seconds = ctx.option("seconds", ctx.pick([4, 8, 10], [4, 6, 8, 10, 12, 13], [4, 6, 8, 10, 12, 14, 16]))
    rate = ctx.option("rate", 6)
    compat = ctx.option("compat", 3)
    budget = ctx.option("budget", ctx.pick(2**17, 2**20, 2**22))
    cap = ctx.pick(2**25, 2**28, 2**30)  # T-CET's estimated memory beyond which it is not run
    q = compiled()
    points: list[dict[str, Any]] = []
    checks, disagreements = 0, []
    limit_runs: list[dict[str, Any]] = []
    layers = [stream(s, rate, compat, ctx.seed + s) for s in seconds]
    xs = [len(evs) for evs in layers]
    cpu = Figure("detect_cpu", "CET detection, end to end (Fig. 8.1(b))", "events per window", xs, DETECT)
    mem = Figure("detect_memory", "Peak memory (tracemalloc) against the budget (Fig. 8.2(b))", "events per window",
                 xs, DETECT + ["memory-budget"], y_label="bytes (peak, tracemalloc)")
    for i, (s, events) in enumerate(zip(seconds, layers, strict=True)):
        base = plan_window(q, events, (), 0, limit=0)  # the graph's facts and the model's estimates
        size = base.size
        estimates = {"m-cet": cost(base.paths, "m-cet", (), size), "t-cet": cost(base.paths, "t-cet", (), size)}
        facts = {"seconds": s, "vertices": size[0], "edges": size[1], "complete_trends": base.count,
                 "trends": base.count_all, "budget": budget}
        runnable = [n for n in DETECT if not (n == "t-cet" and estimates["t-cet"].memory > cap)]
        times: dict[str, list[float]] = {n: [] for n in runnable}
        outcome: dict[str, tuple[int, int]] = {}
        chosen: dict[str, Any] = {}
        for _ in range(ctx.repeat):  # interleaved repeats
            for name in runnable:
                started = time.perf_counter()
                planning, outcome[name] = detect(q, events, name, budget)
                times[name].append(time.perf_counter() - started)
                chosen[name] = planning.plan
        peaks: dict[str, int] = {}
        for name in runnable:
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                detect(q, events, name, budget)
                peaks[name] = tracemalloc.get_traced_memory()[1] - before
            finally:
                tracemalloc.stop()
        mem.series["memory-budget"][i] = budget
        for name in DETECT:
            point: dict[str, Any] = {"figure": "detect_cpu", "x": xs[i], "strategy": name, **facts}
            if name not in runnable:
                point.update(status="skipped", reason=f"T-CET's estimated memory {estimates['t-cet'].memory} bytes > "
                                                      f"the size's cap {cap}")
                points.append(point)
                continue
            c = chosen[name]
            median = statistics.median(times[name])
            point.update(status=OK, times_s=[round(t, 6) for t in times[name]], median_s=round(median, 6),
                         rows=outcome[name][0], plan={"algorithm": c.algorithm, "cuts": list(c.cuts),
                                                      "graphlets": c.graphlets},
                         estimated_memory=c.memory, estimated_cpu=c.cpu, peak_bytes=peaks[name])
            cpu.series[name][i] = round(median, 6)
            mem.series[name][i] = peaks[name]
            points.append(point)
            if name == "h-cet":
                held = peaks[name] <= budget
                limit_runs.append({"x": xs[i], "seconds": s, "algorithm": c.algorithm, "cuts": len(c.cuts),
                                   "peak_bytes": peaks[name], "estimated_bytes": c.memory, "budget": budget,
                                   "held": held})
        first = outcome[runnable[0]]
        for name in runnable:
            checks += 1
            got = outcome[name]
            if got[0] != base.count or got != first:
                disagreements.append({"figure": "detect_cpu", "x": xs[i], "strategies": [runnable[0], name],
                                      "difference": f"{first} vs {got} (the graph counts {base.count} trends)"})
        shown = ", ".join(f"{n}={cpu.series[n][i]:.4f}s/{mem.series[n][i]}B" for n in runnable)
        ctx.log(f"  {xs[i]} events ({s} s, {base.count} complete trends): {shown}; H-CET "
                f"{chosen['h-cet'].algorithm} with {len(chosen['h-cet'].cuts)} cuts")
    cpu.extra["complete trends"] = [p["complete_trends"] for p in points if p["strategy"] == "m-cet"]
    mem.extra["h-cet plan"] = [f"{r['algorithm']}, {r['cuts']} cuts" for r in limit_runs]
    mem.notes.append("the budget bounds graph, state and kept trends (none kept here); peaks are measured "
                     "from before the graph is built")
    shared, opoints, ochecks, obad = overlap(ctx, rate, compat, OVERLAP_BUDGET * budget)
    points += opoints
    checks += ochecks
    disagreements += obad
    quality, qtime, qpoints, qchecks, qbad = partitioning(ctx, q, rate, compat)
    points += qpoints
    checks += qchecks
    disagreements += qbad
    strategies = {n: {"label": LABELS[n][0], "kind": LABELS[n][1], "status": OK} for n in LABELS}
    violations = [r for r in limit_runs if not r["held"]]
    return make_record(
        ctx, title=TITLE, paper=PAPER, paper_reported=REPORTED,
        compares="M-CET vs T-CET vs H-CET (auto, under the budget) on the FT stream as events per window grow; "
                 "branch-and-bound and greedy partitionings against exhaustive search",
        strategies=strategies,
        figures=[cpu.with_ratios([("m-cet", "h-cet"), ("t-cet", "h-cet"), ("m-cet", "t-cet")]),
                 mem.with_ratios([("t-cet", "h-cet"), ("h-cet", "m-cet")]),
                 shared.with_ratios([("alone", "shared")]),
                 quality.with_ratios([("greedy", "exhaustive"), ("branch-and-bound", "exhaustive")]),
                 qtime.with_ratios([("exhaustive", "branch-and-bound"), ("branch-and-bound", "greedy")])],
        points=points, checks=checks, disagreements=disagreements,
        data={"stream": "FT (financial transactions, §8.1), generated", "rate": rate, "compat": compat,
              "seconds": seconds, "query": QUERY, "t_cet_cap_bytes": cap},
        memory_limit={"budget": budget, "runs": len(limit_runs), "held": len(limit_runs) - len(violations),
                      "violations": violations, "per_run": limit_runs},
    )


def digest_events(planning: Any, paths: Any) -> tuple[int, int]:
    """The number of trends and an order-free digest of their events' sequence numbers (vertex
    numbers differ between a window's own graph and a span graph's)."""
    vertices = planning.graph.vertices
    n = digest = 0
    for path in paths:
        n += 1
        digest = (digest + hash(tuple(vertices[v][0].seq for v in path))) & 0xFFFFFFFFFFFFFFFF
    return n, digest


def overlap(ctx: Context, rate: int, compat: int, budget: int) -> tuple[Figure, list, int, list]:
    """Figure 8.1(c): CPU per window, each alone vs sharing graphlets, as the overlap grows."""
    within = ctx.option("overlap_seconds", ctx.pick(6, 8, 10))
    events = stream(2 * within, rate, compat, ctx.seed + 500)
    lo, hi = events[0].ts, events[-1].ts + 1
    slides = [d for d in (within, within // 2, within // 4, within // 8) if d >= 1]
    xs = [round((within - d) / within, 4) for d in slides]
    fig = Figure("window_overlap", "CPU per window as the window overlap grows (Fig. 8.1(c))",
                 "window overlap (fraction of the window)", xs, ["alone", "shared"],
                 y_label="seconds per window (median of repeats)")
    for key in ("windows", "span panes", "graphlets reused/partly/built", "shared windows", "complete trends per window"):
        fig.extra[key] = []
    points: list[dict[str, Any]] = []
    checks, bad = 0, []
    for i, slide in enumerate(slides):
        text = QUERY.replace("WITHIN 1 day", f"WITHIN {within} seconds SLIDE {slide} seconds")
        q = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text))).queries["kites"]
        ks = [k for k in range((lo - q.within) // q.slide, hi // q.slide + 1)
              if q.window_bounds(k)[0] < hi and q.window_bounds(k)[1] > lo]
        times: dict[str, list[float]] = {"alone": [], "shared": []}
        got: dict[str, list[tuple[int, int]]] = {}
        stats, panes = None, None
        for _ in range(ctx.repeat):  # interleaved repeats
            started = time.perf_counter()
            alone = []
            for k in ks:
                p = plan_window(q, events, (), k, memory=budget, limit=0)
                fits = p.plan is not None and p.refusal is None
                alone.append(digest_events(p, construct(p.paths, p.plan)) if fits else (-1, 0))
            times["alone"].append(time.perf_counter() - started)
            started = time.perf_counter()
            together = SharedWindows(q, events, (), ks, memory=budget, limit=0)
            shared = []
            for _, p in together.plans():
                if isinstance(p, Exception) or p.plan is None or p.refusal is not None:
                    shared.append((-1, 0))
                elif p.runner is None:
                    shared.append(digest_events(p, construct(p.paths, p.plan)))
                else:
                    panes = p.sharing["panes"]
                    shared.append(digest_events(p, p.runner()))
            times["shared"].append(time.perf_counter() - started)
            got, stats = {"alone": alone, "shared": shared}, together.stats
        assert stats is not None
        for name in ("alone", "shared"):
            per_window = statistics.median(times[name]) / len(ks)
            fig.series[name][i] = round(per_window, 6)
            points.append({"figure": "window_overlap", "x": xs[i], "strategy": name, "status": OK, "slide_s": slide,
                           "within_s": within, "windows": len(ks), "median_s_per_window": round(per_window, 6),
                           "times_s": [round(t, 6) for t in times[name]],
                           "rows": sum(n for n, _ in got[name] if n > 0),
                           **({"sharing": {k: v for k, v in stats.to_dict().items() if k != "notes"}}
                              if name == "shared" else {})})
        checks += len(ks)
        for k, a, b in zip(ks, got["alone"], got["shared"], strict=True):
            if a != b:
                bad.append({"figure": "window_overlap", "x": xs[i], "strategies": ["alone", "shared"],
                            "difference": f"window {k}: {a} vs {b} (trends, digest; -1: refused)"})
        fig.extra["windows"].append(len(ks))
        fig.extra["span panes"].append(panes)
        fig.extra["graphlets reused/partly/built"].append(
            f"{stats.graphlets_reused}/{stats.graphlets_partly}/{stats.graphlets_built}")
        fig.extra["shared windows"].append(f"{stats.shared_windows} of {stats.windows}")
        fig.extra["complete trends per window"].append(round(statistics.mean(n for n, _ in got["alone"]), 1))
        ctx.log(f"  overlap {xs[i]} (slide {slide} s, {len(ks)} windows): alone {fig.series['alone'][i]:.4f} s, "
                f"shared {fig.series['shared'][i]:.4f} s per window; graphlets reused/partly/built "
                f"{fig.extra['graphlets reused/partly/built'][-1]}")
    fig.notes.append(f"budget {budget} bytes for both; shared windows that did not fit were planned alone "
                     "(extra: shared windows)")
    fig.notes.append("a window's graphlets are the panes between the windows' starts and ends: more overlap, "
                     "more panes per window, so more reuse but also more cuts, each stitching every trend again")
    return fig, points, checks, bad


def partitioning(ctx: Context, q: Any, rate: int, compat: int) -> tuple[Figure, Figure, list, int, list]:
    """The optimizers' plans against exhaustive search on small random graphs, over budgets."""
    graphs = ctx.option("graphs", ctx.pick(3, 10, 25))
    seconds = ctx.pick(6, 8, 12)
    quality = Figure("partition_quality", "Plan quality: estimated CPU / exhaustive optimum (Fig. 8.5)",
                     "budget (0: least memory of any plan, 1: H-CET without cut)", FRACTIONS, OPTIMIZER_NAMES,
                     y_label="estimated CPU / exhaustive's (mean)", log_y=False)
    qtime = Figure("optimizer_time", "Optimizer run time (Fig. 8.3/8.6(a))",
                   "budget (0: least memory of any plan, 1: H-CET without cut)", FRACTIONS, OPTIMIZER_NAMES,
                   y_label="seconds (median over graphs)")
    ratios: dict[str, list[list[float]]] = {n: [[] for _ in FRACTIONS] for n in OPTIMIZER_NAMES}
    spent: dict[str, list[list[float]]] = {n: [[] for _ in FRACTIONS] for n in OPTIMIZER_NAMES}
    points: list[dict[str, Any]] = []
    checks, bad = 0, []
    worst: dict[str, float] = {}
    g = 0
    seed = ctx.seed + 1000
    while g < graphs:
        seed += 1
        p = plan_window(q, stream(seconds, rate, compat, seed), (), 0, limit=0)
        paths, size = p.paths, p.size
        valid = valid_cuts(paths)
        if not 2 <= len(valid) <= MAX_EXHAUSTIVE_CUTS:
            continue
        g += 1
        every: list[Any] = []
        started = time.perf_counter()
        OPTIMIZERS["exhaustive"](paths, float("inf"), size, evaluated=every)
        exhaustive_s = time.perf_counter() - started  # it costs every plan whatever the budget: timed once
        low = min(c.memory for c in every)
        high = cost(paths, "h-cet", (), size).memory
        for i, f in enumerate(FRACTIONS):
            budget = int(low + f * (high - low))
            fitting = [c for c in every if c.memory <= budget]  # exhaustive's choice: least (cpu, memory)
            found: dict[str, Any] = {"exhaustive": min(fitting, key=lambda c: (c.cpu, c.memory), default=None)}
            spent["exhaustive"][i].append(exhaustive_s)
            for name in ("branch-and-bound", "greedy"):
                started = time.perf_counter()
                found[name] = OPTIMIZERS[name](paths, budget, size)
                spent[name][i].append(time.perf_counter() - started)
            best = found["exhaustive"]
            for name in OPTIMIZER_NAMES:
                c = found[name]
                point = {"figure": "partition_quality", "x": f, "strategy": name, "graph_seed": seed,
                         "vertices": size[0], "valid_cuts": len(valid), "budget": budget, "status": OK,
                         "seconds": round(spent[name][i][-1], 6)}
                if c is not None:
                    point.update(cuts=list(c.cuts), cpu=c.cpu, memory=c.memory)
                    checks += 1
                    if c.memory > budget or (best is not None and c.cpu < best.cpu):
                        bad.append({"figure": "partition_quality", "x": f, "strategies": [name, "exhaustive"],
                                    "difference": f"graph {seed}: {name}'s plan {c.cuts} (cpu {c.cpu}, memory "
                                                  f"{c.memory}) vs budget {budget} and the optimum "
                                                  f"{best.cpu if best else None}"})
                else:
                    point["plan"] = None  # the level search found no fitting balanced plan
                if c is not None and best is not None:
                    ratio = c.cpu / best.cpu
                    point["cpu_ratio"] = round(ratio, 4)
                    ratios[name][i].append(ratio)
                    worst[name] = max(worst.get(name, 1.0), ratio)
                points.append(point)
    for name in OPTIMIZER_NAMES:
        quality.series[name] = [round(statistics.mean(r), 4) if r else None for r in ratios[name]]
        qtime.series[name] = [round(statistics.median(t), 6) if t else None for t in spent[name]]
    quality.extra["plans found (of graphs)"] = [f"bnb {len(ratios['branch-and-bound'][i])}, greedy "
                                                f"{len(ratios['greedy'][i])} / {graphs}" for i in range(len(FRACTIONS))]
    quality.notes.append(f"{graphs} random FT graphs of {seconds} seconds at {rate} events/s, compatibility {compat}; "
                         f"worst ratio per optimizer: {({k: round(v, 4) for k, v in worst.items()})}")
    ctx.log(f"  partitioning: {graphs} graphs; mean CPU / optimum: "
            + ", ".join(f"{n} {quality.series[n]}" for n in OPTIMIZER_NAMES))
    return quality, qtime, points, checks, bad
