"""Calibrate ``optimizer.cost.SEQUENCE_STEP_COST``: the ``sequence`` executor against its queries alone.

GLORIA's cost model counts propagations; the planner turns a group's GLORIA
ratio (shared / non-shared) into engine steps as ``alone x ratio x
SEQUENCE_STEP_COST``. This measures, on the GLORIA experiment's mixed
workloads and stream, for every group the ``gloria`` planner forms: the
engine seconds of the group (``engine.evaluate(..., timings=)``) over the
seconds of its queries each alone (COGRA), divided by GLORIA's ratio: the
factor the constant should be. Side by side in one process on the same events.

    python -m benchmarks.calibrate_sequence [--queries 28,42,84,120] [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from trendlake.datagen.workloads import StreamFacts, generate_workload
from trendlake.jobs.statistics import file_statistics
from trendlake.schemas import load_stream_schema

from benchmarks.experiments.common import Context, make_events, measured_ranges, prepare
from benchmarks.suite import machine_facts
from trendlake import engine, optimizer


def measure(counts: list[int], repeat: int) -> dict[str, Any]:
    ctx = Context("calibrate_sequence", size="small", repeat=repeat, seed=0, log=lambda s: None)
    schema = load_stream_schema(ctx.stream)
    key = (StreamFacts.from_schema(schema).equivalence() or [None])[0]
    events = make_events(ctx, 300 * 20, 20 * 60, groups=16, group_attr=key, burst=4.0)  # as the gloria experiment
    ranges = measured_ranges(events)
    table = engine.table_from_events(events)
    rows = []
    for n in counts:
        text = generate_workload("gloria-mixed", n, ctx.seed, schema, ranges=ranges, kleene_ratio="1:6",
                                 window_powers="1", kleene_length=3, nesting=2)
        workload = prepare(text, schema).workload
        stats = file_statistics(table, workload, None)
        shared = engine.load_plan(optimizer.build_plan(workload, planner="gloria", statistics=stats))
        alone = engine.load_plan(optimizer.build_plan(workload, planner="none", statistics=stats))
        group_s: dict[str, float] = {}
        query_s: dict[str, float] = {}
        for _ in range(repeat):  # the least of the repeats, each side
            a: dict[str, dict[str, float]] = {}
            b: dict[str, dict[str, float]] = {}
            engine.evaluate(shared, table, timings=a)
            engine.evaluate(alone, table, timings=b)
            for gid, s in a.get("groups", {}).items():
                group_s[gid] = min(group_s.get(gid, float("inf")), s)
            for q, s in b.get("queries", {}).items():
                query_s[q] = min(query_s.get(q, float("inf")), s)
        for g in shared.raw["sharing"]:
            alone_s = sum(query_s[q] for q in g["queries"])
            est = g["estimated_cost"]
            # the GLORIA ratio the group was planned with (its estimate divided by the constant)
            ratio = est["shared"] / est["non_shared"] / optimizer.cost.SEQUENCE_STEP_COST
            rows.append({"queries_in_workload": n, "group": g["id"], "queries": len(g["queries"]),
                         "shared_s": round(group_s[g["id"]], 6), "alone_s": round(alone_s, 6),
                         "gloria_ratio": round(ratio, 4),
                         "factor": round(group_s[g["id"]] / alone_s / ratio, 3)})
    factors = [r["factor"] for r in rows]
    return {"rows": rows, "median_factor": statistics.median(factors) if factors else None,
            "quartiles": statistics.quantiles(factors, n=4) if len(factors) >= 2 else None,
            "constant_in_use": optimizer.cost.SEQUENCE_STEP_COST, "machine": machine_facts()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.calibrate_sequence", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--queries", default="28,42,84,120", help="workload sizes (comma separated)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/calibrate_sequence.json"))
    args = p.parse_args(argv)
    result = measure([int(x) for x in args.queries.split(",")], args.repeat)
    result["command"] = "python -m benchmarks.calibrate_sequence " + " ".join(argv or [])
    for r in result["rows"]:
        print(f"{r['queries_in_workload']:4d} queries, group {r['group']} of {r['queries']}: shared {r['shared_s']:.4f}s, "
              f"alone {r['alone_s']:.4f}s, GLORIA ratio {r['gloria_ratio']:.3f}: factor {r['factor']:.2f}")
    print(f"median factor {result['median_factor']}, quartiles {result['quartiles']}")
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
