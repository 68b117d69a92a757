"""Hamlet (SIGMOD 2021, §6): dynamic vs static sharing vs GRETA on bursty streams.

Figures 9–11: the first Hamlet workload (different patterns around one shared
Kleene sub-pattern, everything else equal) while varying the events per
minute and the number of queries. Figures 12–13: the second, diverse workload
(patterns of 1–3 types, windows 5–20 minutes, different aggregates, group-bys
and predicates), dynamic vs static sharing decisions, varying the events per
minute. Non-shared baselines: GRETA and COGRA running each query alone.
The stream is bursty: the built-in generator emits bursts of one type and
one key (datagen.streams, when present, keeps its own shape).
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
    timed,
)
from trendlake import engine

TITLE = "Hamlet: dynamic vs static sharing vs GRETA (Hamlet §6)"
PAPER = "Poppe et al., To Share, or not to Share Online Event Trend Aggregation Over Bursty Event Streams (Hamlet), SIGMOD 2021, §6"
REPORTED = [
    "Fig. 9: Hamlet 1-2 orders of magnitude higher throughput than GRETA (10K-20K events/min, 5-25 queries); 3-5 orders vs Sharon; 7-76x vs MCEP",
    "Fig. 11: Hamlet 3-5 orders of magnitude faster than GRETA on real data as events per minute and queries grow (GRETA up to 2 h 17 min at 400 events/min)",
    "Fig. 12-13: dynamic sharing 21-34% faster, 27-52% more throughput and 25% less memory than static sharing decisions (2K-4K events/min; 20-100 queries)",
]
STRATEGY_NAMES = ["hamlet-dynamic", "hamlet-static", "auto", "greta", "cogra", "shared-all-static",
                  "shared-all-dynamic"]
CLI_NAMES = ["eval-none", "eval-hamlet", "eval-hamlet-plan"]
SPAN_MIN = 20


def run(ctx: Context) -> dict[str, Any]:
    schema = load_stream_schema(ctx.stream)
    facts = StreamFacts.from_schema(schema)
    k = facts.kleene_type()
    key = (facts.equivalence() or [None])[0]
    rec = Recorder(ctx, STRATEGY_NAMES + CLI_NAMES)
    groups = ctx.pick(4, 16, 32)
    weights = {t: 1.0 for t in facts.types} | {k: 3.0}

    def events(per_minute: int, offset: int = 0):
        return make_events(ctx, per_minute * SPAN_MIN, SPAN_MIN * 60, seed=ctx.seed + offset, groups=groups,
                           group_attr=key, burst=8.0, weights=weights)

    ranges = measured_ranges(events(200, offset=99))
    n_default = ctx.pick(3, 10, 25)
    rate_default = ctx.pick(60, 400, 1000)

    def shared(n: int, seed: int = 0) -> str:
        return generate_workload("hamlet-shared", n, ctx.seed + seed, schema, ranges=ranges)

    fig = rec.figure(Figure("rate", "Events per minute, shared Kleene workload (Fig. 9 a/c, 11)", "events per minute",
                            ctx.pick([40, 80], [100, 200, 400, 800, 1600], [250, 500, 1000, 2000, 4000]), STRATEGY_NAMES))
    prepared = prepare(shared(n_default), schema)
    for i, x in enumerate(fig.x):
        rec.run_point(fig, i, prepared, events(x, offset=i), facts={"queries": n_default})
    fig.notes.append(f"hamlet-shared, {n_default} queries sharing {k}+; bursty stream, {groups} groups of {key}, {SPAN_MIN} minutes")

    fig = rec.figure(Figure("queries", "Number of queries, shared Kleene workload (Fig. 9 b/d, 11)", "queries",
                            ctx.pick([2, 4], [5, 10, 20, 40], [5, 10, 25, 50, 100]), STRATEGY_NAMES))
    ev = events(rate_default, offset=50)
    for i, n in enumerate(fig.x):
        rec.run_point(fig, i, prepare(shared(n, seed=1), schema), ev, facts={"events_per_minute": rate_default})
    fig.notes.append(f"hamlet-shared, {rate_default} events per minute")

    n_diverse = ctx.pick(3, 10, 20)
    fig = rec.figure(Figure("diverse", "Events per minute, diverse workload (Fig. 12-13: dynamic vs static)", "events per minute",
                            ctx.pick([40, 80], [100, 200, 400, 800], [250, 500, 1000, 2000]), STRATEGY_NAMES))
    prepared = prepare(generate_workload("hamlet-diverse", n_diverse, ctx.seed + 2, schema, ranges=ranges), schema)
    for i, x in enumerate(fig.x):
        rec.run_point(fig, i, prepared, events(x, offset=20 + i), facts={"queries": n_diverse})
    fig.notes.append(f"hamlet-diverse, {n_diverse} queries (windows 5-20 min, patterns of 1-3 types)")

    # the shared executor itself, every sharable set shared whatever the cost model says,
    # against each query alone (COGRA); the first query alone is timed as a fact per point
    executor = ["cogra", "shared-all-static", "shared-all-dynamic"]
    fig = rec.figure(Figure("executor", "Shared executor vs each query alone (every sharable set shared)", "queries",
                            ctx.pick([2, 4], [5, 10, 25, 50], [10, 25, 50, 100]), executor))
    for i, n in enumerate(fig.x):
        prepared_n = prepare(shared(n, seed=1), schema)
        first = prepare(prepared_n.text.split(";")[0] + ";", schema)
        table = engine.table_from_events(ev)
        _, one = timed(lambda first=first, table=table: engine.evaluate(first.plan, table), ctx.repeat)
        rec.run_point(fig, i, prepared_n, ev, facts={"events_per_minute": rate_default,
                                                    "one_query_s": min(one)})
    fig.notes.append("shared-all-*: every sharable set of the workload in one kleene group (planner aside); "
                     "one_query_s: the workload's first query alone")

    # event-grained queries (rising trends of the shared type, K.a < NEXT(K).a): each query alone
    # builds its own GRETA graph of K; shared, the graph is built once (engine/shared/graph.py)
    graph = ["greta", "cogra", "hamlet-dynamic", "hamlet-static", "auto", "shared-all-static"]
    fig = rec.figure(Figure("event", "Event-grained queries: one shared graph vs each query alone", "queries",
                            ctx.pick([2, 4], [5, 10, 25, 50], [10, 25, 50, 100]), graph))
    # dense enough that each query's graph of K is large: about 1,000 events a minute over 4
    # partitions (small), 10-minute windows
    ev_graph = make_events(ctx, ctx.pick(60, 1000, 2000) * SPAN_MIN, SPAN_MIN * 60, seed=ctx.seed + 70,
                           groups=ctx.pick(4, 4, 8), group_attr=key, burst=8.0, weights=weights)
    table = engine.table_from_events(ev_graph)
    for i, n in enumerate(fig.x):
        text = generate_workload("hamlet-shared", n, ctx.seed + 3, schema, ranges=ranges, adjacent=True)
        prepared_n = prepare(text, schema)
        first = prepare(text.split(";")[0] + ";", schema)
        _, one = timed(lambda first=first: engine.evaluate(first.plan, table), ctx.repeat)
        rec.run_point(fig, i, prepared_n, ev_graph, facts={"events": len(ev_graph), "one_query_s": min(one)})
    fig.notes.append("hamlet-shared with adjacent=true: every query also WHERE K.a < NEXT(K).a on the shared "
                     "attribute; one_query_s: the workload's first query alone")

    # the same comparison through `trendlake eval` end to end, on a Parquet file of the same events
    cli = CLI_NAMES
    fig = rec.figure(Figure("eval", "trendlake eval end to end: event-grained queries, planner none vs hamlet",
                            "queries", ctx.pick([4], [10, 50], [50, 100]), cli))
    for i, n in enumerate(fig.x):
        text = generate_workload("hamlet-shared", n, ctx.seed + 3, schema, ranges=ranges, adjacent=True)
        rec.run_point(fig, i, prepare(text, schema), ev_graph, facts={"events": len(ev_graph)})
    fig.notes.append("the command in this process on a Parquet file; eval-hamlet computes the file's statistics "
                     "each run, eval-hamlet-plan reads a plan made before timing")

    return rec.result(
        title=TITLE,
        paper=PAPER,
        paper_reported=REPORTED,
        compares="Hamlet dynamic sharing vs static sharing vs GRETA / COGRA (each query alone), same bursty events",
        ratios=[("greta", "hamlet-dynamic"), ("hamlet-static", "hamlet-dynamic"), ("cogra", "hamlet-dynamic"), ("greta", "cogra"),
                ("cogra", "shared-all-static"), ("cogra", "shared-all-dynamic"),
                ("greta", "shared-all-static"), ("greta", "hamlet-static"),
                ("eval-none", "eval-hamlet"), ("eval-none", "eval-hamlet-plan")],
    )
