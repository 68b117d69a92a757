"""GLORIA (SIGMOD 2022, §8): plan quality and optimizer cost.

Execution (Fig. 14, 15): the mixed workload (SEQ:Kleene 6:1) as queries grow,
run under the GLORIA plan, the Greedy plan, Hamlet, and GRETA / COGRA (each
query alone, the paper's non-shared baseline); Fig. 15, GLORIA vs Hamlet on a
simple workload (Hamlet's: one shared ``K+``) and a complex one (a shared nested
Kleene sub-pattern inside sequences). Optimizer (Fig. 10, 11, 13):
time of ``build_plan`` for GLORIA, GLORIA without pruning (NoPrune) and Greedy
on the SEQ workload (varying queries), the Kleene workload (varying the
length of the shared Kleene sub-pattern) and the mixed workload (varying the
share of Kleene queries), next to the ``none`` planner.
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
    measured_ranges,
    prepare,
    type_statistics,
)

TITLE = "GLORIA: plan vs Greedy vs GRETA; optimizer vs NoPrune (GLORIA §8)"
PAPER = "Ma et al., GLORIA: Graph-based Sharing Optimizer for Event Trend Aggregation, SIGMOD 2022, §8"
REPORTED = [
    "Fig. 14: GLORIA plans 10x the throughput of Greedy plans and 3x of GRETA; 77-91% lower latency than Greedy and 68-93% lower than GRETA (12 → 120 queries, mixed 6:1)",
    "Fig. 10: GLORIA optimizer 5-7x faster than NoPrune (SEQ workload, 40-200 queries), 1.2 orders of magnitude slower than Greedy",
    "Fig. 11: GLORIA vs NoPrune grows from 2x to 13x as the Kleene sub-pattern grows from 2 to 10 (100 queries)",
    "Fig. 13: GLORIA 6x to 1.2 orders of magnitude faster than NoPrune as Kleene queries grow 10% → 60%",
    "Fig. 15: GLORIA 3x faster than Hamlet on the complex workload; Hamlet wins on the simple one",
]
EXECUTORS = ["gloria", "gloria-greedy", "hamlet-dynamic", "auto", "greta", "cogra"]
OPTIMIZERS = ["optimizer:gloria", "optimizer:gloria-noprune", "optimizer:gloria-greedy", "optimizer:none"]
SPAN_MIN = 20


def run(ctx: Context) -> dict[str, Any]:
    schema = load_stream_schema(ctx.stream)
    facts = StreamFacts.from_schema(schema)
    key = (facts.equivalence() or [None])[0]
    rec = Recorder(ctx, EXECUTORS + OPTIMIZERS)
    groups = ctx.pick(4, 16, 16)
    rate = ctx.pick(60, 300, 600)
    events = make_events(ctx, rate * SPAN_MIN, SPAN_MIN * 60, groups=groups, group_attr=key, burst=4.0)
    ranges = measured_ranges(events)
    stats = type_statistics(events, 60_000_000)  # the optimizer figures plan from the stream's rates
    common = {"window_powers": "1", "kleene_length": 3, "nesting": 2}

    fig = rec.figure(Figure("execution", "Execution, mixed workload 6:1 (Fig. 14)", "queries",
                            ctx.pick([3, 7], [7, 14, 28, 42], [12, 24, 48, 84, 120]), EXECUTORS))
    for i, n in enumerate(fig.x):
        text = generate_workload("gloria-mixed", n, ctx.seed, schema, ranges=ranges, kleene_ratio="1:6", **common)
        rec.run_point(fig, i, prepare(text, schema), events, facts={"events_per_minute": rate})
    fig.notes.append(f"gloria-mixed (SEQ:Kleene 6:1, Kleene length 3, nesting 2, 5-minute windows); {rate} events per minute, {groups} groups of {key}")

    n_fig15 = ctx.pick(6, 40, 100)
    fig = rec.figure(Figure("hamlet-vs-gloria", f"GLORIA vs Hamlet, {n_fig15} queries (Fig. 15)", "workload",
                            ["simple", "complex"], ["gloria", "hamlet-dynamic", "auto", "cogra"]))
    shapes = {  # simple: Hamlet's own, one shared K+ under different prefixes and suffixes;
        # complex: a shared nested Kleene sub-pattern inside longer sequences
        "simple": generate_workload("hamlet-shared", n_fig15, ctx.seed, schema),
        "complex": generate_workload("gloria-kleene", n_fig15, ctx.seed, schema, kleene_length=3, nesting=2),
    }
    for i, shape in enumerate(fig.x):
        rec.run_point(fig, i, prepare(shapes[shape], schema), events, facts={"events_per_minute": rate})
    fig.notes.append("simple: hamlet-shared (SEQ(A, K+[, C]) sharing K+); complex: gloria-kleene "
                     "(nested Kleene of length 3, nesting 2, inside sequences)")

    fig = rec.figure(Figure("optimizer-seq", "Optimizer time, SEQ workload (Fig. 10)", "queries",
                            ctx.pick([5, 10], [40, 80, 120, 160, 200], [40, 80, 120, 160, 200]), OPTIMIZERS))
    for i, n in enumerate(fig.x):
        rec.run_planners(fig, i, generate_workload("gloria-seq", n, ctx.seed, schema), schema, stats=stats)

    n_kleene = ctx.pick(10, 100, 100)
    fig = rec.figure(Figure("optimizer-kleene", f"Optimizer time, Kleene workload, {n_kleene} queries (Fig. 11)",
                            "Kleene sub-pattern length", ctx.pick([2, 4], [2, 4, 6, 8, 10], [2, 3, 4, 5, 6, 7, 8, 9, 10]), OPTIMIZERS))
    for i, length in enumerate(fig.x):
        text = generate_workload("gloria-kleene", n_kleene, ctx.seed, schema, kleene_length=length, nesting=min(2, length))
        rec.run_planners(fig, i, text, schema, facts={"nesting": min(2, length)}, stats=stats)

    n_mixed = ctx.pick(10, 100, 100)
    fig = rec.figure(Figure("optimizer-mixed", f"Optimizer time, mixed workload, {n_mixed} queries (Fig. 13)",
                            "share of Kleene queries", ctx.pick([0.1, 0.4], [0.1, 0.2, 0.4, 0.6], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), OPTIMIZERS))
    for i, share in enumerate(fig.x):
        text = generate_workload("gloria-mixed", n_mixed, ctx.seed, schema, kleene_ratio=str(share))
        rec.run_planners(fig, i, text, schema, stats=stats)

    return rec.result(
        title=TITLE,
        paper=PAPER,
        paper_reported=REPORTED,
        compares="GLORIA plan vs Greedy plan vs Hamlet vs GRETA / COGRA (each query alone); GLORIA optimizer vs NoPrune vs Greedy",
        ratios=[("greta", "gloria"), ("gloria-greedy", "gloria"), ("hamlet-dynamic", "gloria"), ("greta", "cogra"),
                ("auto", "cogra"),
                ("optimizer:gloria-noprune", "optimizer:gloria"), ("optimizer:gloria", "optimizer:gloria-greedy")],
    )
