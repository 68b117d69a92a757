"""Sharon (ICDE 2018, §VIII): shared vs non-shared online sequence aggregation; optimizer search.

Executor figures (Fig. 12): the Sharon traffic workload (fixed-length
sequences sharing sub-sequences) while varying the number of queries, the
pattern length and the events per window. Sharon's shared executor is
compared with A-Seq, the online non-shared approach — here every query runs
alone on GRETA and on COGRA, our online non-shared strategies — and, where the
partial trends stay under budget, with the two-step reference (SPASS/Flink,
Fig. 11).

Sharon's own executor and optimizers (Sharon, exhaustive, greedy GWMIN) are
not built: the shared side is played by the ``auto`` planner's plan (the plan
of least estimated cost among the registered planners, from the statistics
of the events), and the optimizer figure (Fig. 13, the e-commerce workload as
queries grow) times every registered planner (``common.planner_strategies``).
"""

from __future__ import annotations

from typing import Any

from trendlake.datagen.workloads import StreamFacts, generate_workload
from trendlake.schemas import load_stream_schema

from benchmarks.experiments.common import (
    Context,
    Figure,
    Recorder,
    make_events,
    planner_strategies,
    preferred_stream,
    prepare,
)

TITLE = "Sharon's workloads: a shared plan vs each query alone vs two-step; optimizer time (Sharon §VIII)"
PAPER = "Poppe et al., Sharon: Shared Online Event Sequence Aggregation, ICDE 2018, §VIII"
REPORTED = [
    "Fig. 12: Sharon 5-18x faster than A-Seq as queries grow 20 → 120; 5-7x as events per window grow 200k → 1.2M; 4-6x as pattern length grows; up to 2 orders of magnitude less memory",
    "Fig. 11: online approaches (A-Seq, Sharon) 5 orders of magnitude faster than SPASS (two-step) at 7k events per window",
    "Fig. 13: Sharon optimizer 3 orders of magnitude faster than exhaustive search at 20 queries (exhaustive fails beyond 20); greedy (GWMIN) 3 orders faster than Sharon at 70 queries",
    "Fig. 14: an optimal plan makes the executor 2x faster (3x less memory) than a greedy plan at 180 queries",
]
EXECUTORS = ["auto", "greta", "cogra", "twostep"]
OPTIMIZERS = planner_strategies()
WINDOW_MIN, SLIDE_MIN, WINDOWS = 10, 1, 2


def run(ctx: Context) -> dict[str, Any]:
    # the paper's traffic workload runs on Linear Road position reports (streets as types)
    ctx.stream = preferred_stream("linear_road")
    schema = load_stream_schema(ctx.stream)
    optimizer_stream = preferred_stream("ecommerce")
    optimizer_schema = load_stream_schema(optimizer_stream)
    facts = StreamFacts.from_schema(schema)
    key = (facts.equivalence() or [None])[0]
    rec = Recorder(ctx, EXECUTORS + OPTIMIZERS)
    max_paths = ctx.pick(5e4, 5e5, 2e6)
    groups = ctx.pick(2, 8, 8)
    span = WINDOW_MIN * 60 * WINDOWS

    def events(per_window: int, offset: int = 0):
        return make_events(ctx, per_window * WINDOWS, span, seed=ctx.seed + offset, groups=groups, group_attr=key)

    def workload(n: int, length: int, seed: int = 0) -> str:
        return generate_workload("sharon-traffic", n, ctx.seed + seed, schema, length=length,
                                 window_minutes=WINDOW_MIN, slide_minutes=SLIDE_MIN)

    length_default = ctx.pick(3, 4, 5)
    per_window_default = ctx.pick(100, 400, 1000)

    fig = rec.figure(Figure("queries", "Number of queries (Fig. 12 b/f)", "queries", ctx.pick([2, 4], [5, 10, 20, 40], [10, 20, 40, 80, 120]), EXECUTORS))
    ev = events(per_window_default)
    for i, n in enumerate(fig.x):
        rec.run_point(fig, i, prepare(workload(n, length_default), schema), ev, max_paths=max_paths,
                      facts={"pattern_length": length_default, "events_per_window": per_window_default})
    fig.notes.append(f"sharon-traffic on {ctx.stream}, length {length_default}, {per_window_default} events per window, {groups} groups of {key}")

    n_default = ctx.pick(3, 10, 20)
    fig = rec.figure(Figure("length", "Pattern length (Fig. 12 c)", "pattern length", ctx.pick([2, 4], [2, 4, 6, 8, 10], [2, 4, 6, 8, 10, 12]), EXECUTORS))
    for i, length in enumerate(fig.x):
        rec.run_point(fig, i, prepare(workload(n_default, length, seed=1), schema), ev, max_paths=max_paths,
                      facts={"queries": n_default, "events_per_window": per_window_default})
    fig.notes.append(f"sharon-traffic, {n_default} queries, {per_window_default} events per window")

    fig = rec.figure(Figure("events", "Events per window (Fig. 12 a/e)", "events per window", ctx.pick([50, 100], [100, 200, 400, 800, 1600], [200, 400, 800, 1600, 3200, 6400]), EXECUTORS))
    prepared = prepare(workload(n_default, length_default, seed=2), schema)
    for i, x in enumerate(fig.x):
        rec.run_point(fig, i, prepared, events(x, offset=i + 1), max_paths=max_paths,
                      facts={"queries": n_default, "pattern_length": length_default})
    fig.notes.append(f"sharon-traffic, {n_default} queries of length {length_default}")

    fig = rec.figure(Figure("optimizer", "Optimizer time vs queries (Fig. 13, e-commerce)", "queries", ctx.pick([4, 8], [10, 20, 40, 70], [10, 20, 40, 70, 120, 180]), OPTIMIZERS))
    for i, n in enumerate(fig.x):
        rec.run_planners(fig, i, generate_workload("sharon-ecommerce", n, ctx.seed, optimizer_schema), optimizer_schema)
    fig.notes.append(f"sharon-ecommerce workload on stream {optimizer_stream}; every registered planner, "
                     "from the uniform assumption (no events)")

    return rec.result(
        title=TITLE,
        paper=PAPER,
        paper_reported=REPORTED,
        compares="a shared plan (auto) vs A-Seq (each query alone, online: GRETA, COGRA) vs two-step; "
                 "the registered planners' optimizer time",
        ratios=[("greta", "auto"), ("cogra", "auto"), ("twostep", "greta"), ("greta", "cogra")],
        extra={"twostep_budget_partial_trends": max_paths, "optimizer_stream": optimizer_stream,
               "note": "Sharon's executor and optimizers and A-Seq are not implemented: the shared side is "
                       "the auto planner's plan, A-Seq's role (online, not shared) is played by GRETA and "
                       "COGRA running each query alone"},
    )
