"""Weave Share (§7): sharing window panes among queries with different windows.

Queries share one pattern but have different windows: slides drawn from a
Zipf law over a discrete range (skew 0.6 by default), ranges = slide ×
overlap factor, the factor uniform in [1, ω_max] (the ``weaveshare`` workload
kind, ``aggregates=count``: COUNT(*) and COUNT of the Kleene type, a state of
counts the ``panes`` kind shares; its SUM queries it does not). Compared are
``weaveshare`` (Weave Share's execution trees, each a ``panes`` group),
``shared-panes`` (the paper's "Shared": every query of one body in one group
over the panes of all its windows), the ``auto`` planner's plan (the plan of
least estimated cost among the registered planners) and No Share: each query
computing its own windows on COGRA's compiled kernel, the fastest engine
alone on these queries (GRETA alone, event-grained, is far slower and left
out). The paper measures plan cost in aggregate operations per second; we
measure time, and record the workload's pane facts.

Sharing panes pays where a partition's panes hold several events (a window
carries its state through each pane with an event, each a small matrix
product): the events are spread over the rides' districts only (the
equivalence attribute folded onto one value), and the ``density`` figure
spreads the same events over more and more partitions, down to about one
event per pane and partition, where No Share is cheaper and the planners
should not share.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd
from typing import Any

from trendlake.datagen.workloads import StreamFacts, generate_workload
from trendlake.schemas import load_stream_schema

from benchmarks.experiments.common import Context, Figure, Recorder, make_events, prepare

TITLE = "Weave Share's workloads: a shared plan vs No Share (Weave Share §7)"
PAPER = "Guirguis et al., Weave Share (weaveability of aggregate continuous queries), §7"
REPORTED = [
    "Fig. 4-5: for 1000 ACQs Weave Share plans 3-4 orders of magnitude cheaper than Insert-then-Weave and Shared; No Share and Random the most expensive",
    "Fig. 6: at 10K tuples/s and 1000 ACQs Weave Share 62% cheaper than Shared",
    "Fig. 8: gain over Shared 80% at 50 tuples/s (250 ACQs), 24% at 2K, 6% at 3K; more than 100x cheaper than the best of Random, Insert-then-Weave, No Share and Local Search at 10K tuples/s",
    "Fig. 9: 19-74% cheaper than Shared as ω_max grows 50 → 2000 (100K tuples/s, 2000 ACQs)",
]
STRATEGY_NAMES = ["weaveshare", "shared-panes", "auto", "cogra"]
UNIT_S, SLIDES, SPAN_MIN = 10, 6, 20


def pane_facts(prepared) -> dict[str, Any]:
    """Panes, mean overlap factor and windows per event of a workload's queries."""
    windows = [(q.within, q.slide) for q in prepared.plan.queries.values()]
    pane = 0
    for r, s in windows:
        pane = gcd(gcd(pane, r), s)
    overlaps = [r / s for r, s in windows]
    return {
        "pane_s": pane / 1e6,
        "mean_overlap": round(sum(overlaps) / len(overlaps), 3),
        "max_overlap_seen": round(max(overlaps), 3),
        "distinct_slides": len({s for _, s in windows}),
        "windows_per_event": round(sum(Fraction(r, s) for r, s in windows).__float__(), 2),
    }


def run(ctx: Context) -> dict[str, Any]:
    schema = load_stream_schema(ctx.stream)
    facts = StreamFacts.from_schema(schema)
    key = (facts.equivalence() or [None])[0]
    rec = Recorder(ctx, STRATEGY_NAMES)
    groups = 1  # the equivalence attribute folded onto one value: the partitions are the districts
    rate = ctx.pick(300, 6000, 12000)
    events = make_events(ctx, rate * SPAN_MIN, SPAN_MIN * 60, groups=groups, group_attr=key)

    def workload(n: int, omega: float, skew: float) -> str:
        return generate_workload("weaveshare", n, ctx.seed, schema, max_overlap=omega, skew=skew, slides=SLIDES,
                                 slide_unit_seconds=UNIT_S, aggregates="count")

    def point(fig: Figure, i: int, text: str, events_: Any = None) -> None:
        prepared = prepare(text, schema)
        facts_ = pane_facts(prepared)
        for name, value in facts_.items():
            fig.extra.setdefault(name, []).append(value)
        rec.run_point(fig, i, prepared, events if events_ is None else events_, facts=facts_)

    omega_default, skew_default = 10.0, 0.6
    fig = rec.figure(Figure("queries", "Number of queries (Fig. 4-6)", "queries", ctx.pick([2, 4], [5, 10, 20, 40], [10, 25, 50, 100, 200]), STRATEGY_NAMES))
    for i, n in enumerate(fig.x):
        point(fig, i, workload(n, omega_default, skew_default))
    fig.notes.append(f"weaveshare workload (aggregates=count): slides 1..{SLIDES} x {UNIT_S}s (Zipf, skew {skew_default}), "
                     f"ω_max {omega_default}; {rate} events per minute over {SPAN_MIN} minutes, {key} folded onto {groups} value(s)")

    n_default = ctx.pick(3, 10, 25)
    fig = rec.figure(Figure("overlap", "Maximum overlap factor (Fig. 9)", "ω_max", ctx.pick([2.0, 5.0], [2.0, 5.0, 10.0, 20.0], [2.0, 5.0, 10.0, 20.0, 40.0]), STRATEGY_NAMES))
    for i, omega in enumerate(fig.x):
        point(fig, i, workload(n_default, omega, skew_default))
    fig.notes.append(f"{n_default} queries, skew {skew_default}")

    fig = rec.figure(Figure("skew", "Slide skew (Fig. 10)", "Zipf skew", ctx.pick([0.0, 1.0], [0.0, 0.6, 1.2, 2.0], [0.0, 0.3, 0.6, 1.0, 1.5, 2.0]), STRATEGY_NAMES))
    for i, skew in enumerate(fig.x):
        point(fig, i, workload(n_default, omega_default, skew))
    fig.notes.append(f"{n_default} queries, ω_max {omega_default}")

    folds = ctx.pick([1, 16], [1, 4, 16, 64], [1, 4, 16, 64])
    fig = rec.figure(Figure("density", "The same events over more partitions", f"{key} values (partitions: x districts)",
                            folds, STRATEGY_NAMES))
    for i, fold in enumerate(fig.x):
        spread = make_events(ctx, rate * SPAN_MIN, SPAN_MIN * 60, groups=fold, group_attr=key)
        point(fig, i, workload(n_default, omega_default, skew_default), spread)
        fig.extra.setdefault("partitions", []).append(len({(e.attrs.get(key), e.attrs.get("district")) for e in spread}))
    fig.notes.append(f"{n_default} queries, ω_max {omega_default}, skew {skew_default}; {rate} events per minute, "
                     f"{key} folded onto x values: fewer events per pane and partition as x grows")

    per_second = len(events) / (SPAN_MIN * 60)
    sizes = ctx.pick([4, 8], [10, 25, 50, 100], [10, 50, 100, 250, 500])
    costs = [plan_costs(workload(n, omega_default, skew_default), schema, per_second) for n in sizes]
    for n, c in zip(sizes, costs, strict=True):
        ctx.log(f"  plan cost, {n} queries: " + ", ".join(f"{k} {v:,.0f} ops/s" for k, v in c.items()))
    woven = incremental_runs(workload(sizes[-1], omega_default, skew_default), schema, per_second, ctx.repeat)
    ctx.log(f"  incremental: {woven['added']} queries woven in one at a time: cost {woven['deviation_max']:.1%} "
            f"above from scratch at most, {woven['replanned']} re-planned; "
            f"{woven['incremental_s']:.4f} s against {woven['scratch_s']:.4f} s from scratch")
    return rec.result(
        title=TITLE,
        paper=PAPER,
        paper_reported=REPORTED,
        compares="a shared plan (auto, weaveshare, shared-panes) vs No Share (each query alone on COGRA) on Weave Share's workloads; "
                 "Weave Share's plan cost (aggregate operations per second) of weaveshare, shared-panes and none; "
                 "incremental vs from-scratch plans",
        ratios=[("cogra", "auto"), ("cogra", "weaveshare"), ("cogra", "shared-panes")],
        extra={"plan_cost": {"queries": sizes, "ops_per_second": costs, "events_per_second": per_second},
               "incremental": woven},
    )


def _candidates(text: str, schema: dict[str, Any]) -> list[list[Any]]:
    """The workload's queries as Weave Share's queries, per group of one body (``group_entries``)."""
    from trendlake.optimizer import weaveshare

    from trendlake import optimizer

    entries = optimizer.build_plan(optimizer.compile_workload(text, schema))["queries"]
    return [list(weaveshare.from_entries(g)) for g in weaveshare.group_entries(entries)]


def plan_costs(text: str, schema: dict[str, Any], per_second: float) -> dict[str, float]:
    """Weave Share's cost (Eq. 1, aggregate operations per second) of each planner's trees."""
    from trendlake.optimizer import weaveshare
    from trendlake.optimizer.errors import OptimizerError

    rate = per_second / 1e6  # events per microsecond: the windows are in microseconds
    out = {}
    for planner in ("weaveshare", "shared-panes", "none"):
        total = 0.0
        for queries in _candidates(text, schema):
            try:
                total += weaveshare.optimize(queries, rate, planner).cost
            except OptimizerError:
                total += weaveshare.optimize(queries, rate, "none").cost  # too many edges: unshared
        out[planner] = round(total * 1e6, 1)
    return out


def incremental_runs(text: str, schema: dict[str, Any], per_second: float, repeat: int) -> dict[str, Any]:
    """The largest workload's biggest group planned from scratch on its first half, then its
    other queries woven in one at a time (``weaveshare.incremental`` with the from-scratch
    costs of the first half as its curve): the largest deviation from the from-scratch cost,
    how often it re-planned, and the planning time of both ways."""
    import time

    from trendlake.optimizer import weaveshare

    rate = per_second / 1e6
    queries = max(_candidates(text, schema), key=len)
    half = max(1, len(queries) // 2)
    curve = [(n, weaveshare.optimize(queries[:n], rate).cost) for n in range(1, half + 1)]
    trees: list[Any] = list(weaveshare.plan_trees(queries[:half], rate))
    deviations, replanned, inc_s, scratch_s = [], 0, 0.0, 0.0
    for n in range(half + 1, len(queries) + 1):
        started = time.perf_counter()
        for _ in range(repeat):
            got = weaveshare.incremental(trees, queries[:n], rate, tolerance=0.2, curve=curve)
        inc_s += (time.perf_counter() - started) / repeat
        started = time.perf_counter()
        for _ in range(repeat):
            scratch = weaveshare.optimize(queries[:n], rate)
        scratch_s += (time.perf_counter() - started) / repeat
        curve.append((n, scratch.cost))
        deviations.append((got.plan.cost - scratch.cost) / scratch.cost if scratch.cost else 0.0)
        replanned += got.replanned
        trees = list(got.trees)
    return {"group_queries": len(queries), "start": half, "added": len(queries) - half, "tolerance": 0.2,
            "deviation_max": round(max(deviations, default=0.0), 4), "replanned": replanned,
            "incremental_s": round(inc_s, 5), "scratch_s": round(scratch_s, 5)}
