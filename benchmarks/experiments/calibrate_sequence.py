"""Calibrate ``optimizer.cost.SEQUENCE_STEP_COST`` and ``SEQUENCE_COMPILED_STEP_COST``: the
``sequence`` executors against their queries alone.

GLORIA's cost model counts propagations; the planner turns a group's GLORIA
ratio (shared / non-shared) into engine steps as ``alone x ratio x step_cost``,
the step cost of the executor that runs the group (its ``parameters.step_cost``:
the compiled pass for count-only groups, else the Python executor). Sharon's
planner does the same with its benefit ratio (kind ``subsequence``, which runs
on the same executors). This measures, on the GLORIA experiment's stream, for
every group ``gloria`` forms on the mixed workload and ``sharon`` forms on the
mixed, the SEQ, the e-commerce and the traffic workloads (``SHAPES``): the engine seconds of the group
(``engine.evaluate(..., timings=)``) over the seconds of its queries each alone
(COGRA), divided by the planner's ratio: the factor the constant should be; the
executor is the one the group's record names (``shared_stats``), and a group whose
estimate used another executor's constant stops the run. Side by side in one process on the same events
(the GLORIA experiment's ``--size small`` stream at every size; workloads by
size: 28 queries (smoke), 28,42 (small), 28,42,84,120 (full)).

    python -m benchmarks calibrate_sequence [--size full] [--queries 28,42,84,120] [--repeat 3]
"""

from __future__ import annotations

import statistics
from typing import Any

from trendlake.datagen.workloads import StreamFacts, generate_workload
from trendlake.jobs.statistics import file_statistics
from trendlake.schemas import load_stream_schema

from benchmarks.experiments.common import (
    OK,
    Context,
    Figure,
    int_list,
    make_events,
    make_record,
    measured_ranges,
    prepare,
    rows_agree,
)
from trendlake import engine, optimizer

TITLE = "The sequence kind's cost against its queries alone (SEQUENCE_STEP_COST)"


# the workloads and the planners whose groups run on the sequence executors: GLORIA's groups
# (kind ``sequence``) on its mixed workload, Sharon's (kind ``subsequence``) on it and on
# GLORIA's SEQ workload of fixed-length sequences
SHAPES = [("gloria-mixed", "gloria"), ("gloria-mixed", "sharon"), ("gloria-seq", "sharon"),
          ("sharon-ecommerce", "sharon"), ("sharon-traffic", "sharon")]
SHAPE_OPTIONS: dict[str, dict[str, Any]] = {
    "gloria-mixed": {"kleene_ratio": "1:6", "window_powers": "1", "kleene_length": 3, "nesting": 2},
    "gloria-seq": {},
    "sharon-ecommerce": {},
    "sharon-traffic": {},
}
# the constants a group may have been estimated with, by the pass its record says ran it (a
# group of Sharon's off the prefix pass runs on the same passes as GLORIA's, snapshots of its
# queries' prefixes, estimated with SUBSEQUENCE_STEP_COST whichever of them runs it)
EXECUTORS = {"compiled": ("SEQUENCE_COMPILED_STEP_COST", "SUBSEQUENCE_STEP_COST"),
             "python": ("SEQUENCE_STEP_COST", "SUBSEQUENCE_STEP_COST"),
             "prefix": ("PREFIX_STEP_COST",)}
CONSTANTS = ("SEQUENCE_COMPILED_STEP_COST", "SEQUENCE_STEP_COST", "PREFIX_STEP_COST", "SUBSEQUENCE_STEP_COST")


def add_options(p: Any) -> None:
    p.add_argument("--queries", type=int_list, help="workload sizes, comma separated (full: 28,42,84,120)")


def run(ctx: Context) -> dict[str, Any]:
    counts = ctx.option("queries", ctx.pick([28], [28, 42], [28, 42, 84, 120]))
    result = measure(ctx, counts, ctx.repeat)
    for r in result["rows"]:
        ctx.log(f"  {r['workload']} {r['queries_in_workload']:4d} queries, {r['planner']} group {r['group']} of "
                f"{r['queries']}: shared {r['shared_s']:.4f}s ({r['executor']}), alone {r['alone_s']:.4f}s, "
                f"planned ratio {r['planned_ratio']:.3f}: "
                f"factor {r['factor']:.2f}")
    ctx.log(f"  median factor {result['median_factor']}, quartiles {result['quartiles']}")
    for constant, got in result["by_constant"].items():
        ctx.log(f"  {constant}: {got['groups']} groups, median factor {got['median_factor']}")
    rows = result["rows"]
    x = [f"{r['planner']}:{r['queries_in_workload']}:{r['group']}" for r in rows]
    fig = Figure("groups", "Each group gloria and sharon form: shared vs its queries alone", "planner:queries:group", x,
                 ["shared", "alone"], y_label="seconds (least of repeats)")
    fig.series["shared"] = [r["shared_s"] for r in rows]
    fig.series["alone"] = [r["alone_s"] for r in rows]
    fig.extra["factor"] = [r["factor"] for r in rows]
    agreement = result.pop("agreement")  # the shared plan's rows against the plan sharing nothing, every repeat
    return make_record(
        ctx, title=TITLE, paper="GLORIA (SIGMOD 2022) cost model; optimizer.cost",
        compares="each sequence group's engine seconds vs its queries each alone (COGRA), per unit of "
                 "the planner's estimated ratio (GLORIA's, Sharon's)",
        strategies={"shared": {"label": "the group (engine.evaluate timings)", "kind": "shared", "status": OK},
                    "alone": {"label": "its queries each alone (COGRA)", "kind": "engine", "status": OK}},
        figures=[fig.with_ratios([("shared", "alone")])],
        points=[{"figure": "groups", "x": xi, "strategy": k, "status": OK, "best_s": r[f"{k}_s"]}
                for xi, r in zip(x, rows, strict=True) for k in ("shared", "alone")],
        checks=agreement["checked"], disagreements=agreement["disagreements"], **result,
    )


def measure(ctx: Context, counts: list[int], repeat: int) -> dict[str, Any]:
    ctx = Context(ctx.name, size="small", repeat=repeat, seed=ctx.seed, log=ctx.log)  # the gloria stream
    schema = load_stream_schema(ctx.stream)
    key = (StreamFacts.from_schema(schema).equivalence() or [None])[0]
    events = make_events(ctx, 300 * 20, 20 * 60, groups=16, group_attr=key, burst=4.0)  # as the gloria experiment
    ranges = measured_ranges(events)
    table = engine.table_from_events(events)
    rows = []
    checks, disagreements = 0, []
    for n in counts:
        for shape, planner in SHAPES:
            text = generate_workload(shape, n, ctx.seed, schema, **SHAPE_OPTIONS[shape], ranges=ranges)
            workload = prepare(text, schema).workload
            stats = file_statistics(table, workload, None)
            shared = engine.load_plan(optimizer.build_plan(workload, planner=planner, statistics=stats))
            if not shared.raw["sharing"]:
                continue
            alone = engine.load_plan(optimizer.build_plan(workload, planner="none", statistics=stats))
            group_s: dict[str, float] = {}
            query_s: dict[str, float] = {}
            for _ in range(repeat):  # the least of the repeats, each side
                a: dict[str, dict[str, float]] = {}
                b: dict[str, dict[str, float]] = {}
                records: dict[str, Any] = {}
                got = engine.evaluate(shared, table, timings=a, shared_stats=records)
                want = engine.evaluate(alone, table, timings=b)
                checks += 1
                diff = rows_agree(sorted(want, key=repr), sorted(got, key=repr))
                if diff is not None:
                    disagreements.append({"x": f"{shape}:{n}:{planner}", "strategies": ["alone", "shared"],
                                          "difference": diff})
                for gid, sec in a.get("groups", {}).items():
                    group_s[gid] = min(group_s.get(gid, float("inf")), sec)
                for q, sec in b.get("queries", {}).items():
                    query_s[q] = min(query_s.get(q, float("inf")), sec)
            for g in shared.raw["sharing"]:
                alone_s = sum(query_s[q] for q in g["queries"])
                est = g["estimated_cost"]
                # the planner's ratio (GLORIA's propagations, Sharon's benefit) the group was
                # planned with: its estimate divided by its step cost
                step_cost = g["parameters"]["step_cost"]
                ratio = est["shared"] / est["non_shared"] / step_cost
                executor = records[g["id"]].executor
                if not executor:  # none of its queries matched an event: nothing ran to measure
                    ctx.log(f"  {shape:<16} {n:>3} queries, {planner} group {g['id']}: no events, not measured")
                    continue
                constant = next((c for c in EXECUTORS[executor] if getattr(optimizer.cost, c) == step_cost), None)
                if constant is None:
                    raise AssertionError(f"group {g['id']} ran on the {executor} pass but was estimated with step "
                                         f"cost {step_cost}, none of {', '.join(EXECUTORS[executor])}")
                rows.append({"workload": shape, "planner": planner, "kind": g["kind"],
                             "queries_in_workload": n, "group": g["id"], "queries": len(g["queries"]),
                             "executor": executor, "constant": constant,
                             "shared_s": round(group_s[g["id"]], 6), "alone_s": round(alone_s, 6),
                             "planned_ratio": round(ratio, 4),
                             "factor": round(group_s[g["id"]] / alone_s / ratio, 3)})
    factors = [r["factor"] for r in rows]
    by_constant = {}
    for constant in CONSTANTS:
        mine = [r["factor"] for r in rows if r["constant"] == constant]
        by_constant[constant] = {"groups": len(mine), "median_factor": statistics.median(mine) if mine else None}
    return {"rows": rows, "median_factor": statistics.median(factors) if factors else None,
            "quartiles": statistics.quantiles(factors, n=4) if len(factors) >= 2 else None,
            "by_constant": by_constant,
            "constants_in_use": {c: getattr(optimizer.cost, c) for c in CONSTANTS},
            "agreement": {"checked": checks, "all_agree": not disagreements, "disagreements": disagreements}}

