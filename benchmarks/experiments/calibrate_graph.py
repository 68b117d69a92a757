"""Calibrate the event-grained graph constants of ``optimizer.cost``: ``GRAPH_UNIT_COST`` (a query
alone) and ``GRAPH_ENTRY_COST`` (a shared graph).

The workload is the eight district traffic-flow queries of ``rides_team.etq``
(``SEQ(T, Travel+)`` / ``SEQ(Travel+, T)`` with ``Travel.speed <
NEXT(Travel).speed``, ``GROUP-BY district``, 10/5-minute windows) and their
*twins*, the same queries without the adjacent predicate (type-grained), over
generated rides days. Side by side in one process on the same events, least of
the repeats:

- **alone**: each flow query and its twin on its own (``engine.evaluate(...,
  timings=)``, plan ``none``). One compiled step of a twin costs
  ``Σ twin seconds / Σ twin steps`` (``optimizer.cost.alone_costs``); a flow
  query's graph units (vertices plus edges tried, per partition and window) cost
  ``GRAPH_UNIT_COST`` steps: the pooled ``Σ (flow seconds - its other types'
  steps) / Σ units``, in steps.
- **shared**: the eight flow queries as one shared graph (``share-all``) against
  the eight alone; the ratio measured, next to the ratio the ``hamlet`` planner
  estimates, and the ``GRAPH_ENTRY_COST`` at which its estimate equals the
  measured ratio (bisection; ``None`` where sharing measured no faster, with the
  smallest constant at which the planner declines).

    python -m benchmarks calibrate_graph [--size full] [--events 30000,60000,100000] [--repeat 3]
"""

from __future__ import annotations

import re
import statistics
from typing import Any

import pyarrow as pa
from trendlake.datagen.streams import generate
from trendlake.jobs.statistics import file_statistics
from trendlake.optimizer.cost import alone_costs, rates_for
from trendlake.optimizer.planners import hamlet
from trendlake.optimizer.statistics import Statistics
from trendlake.schemas import load_stream_schema, workload_path

from benchmarks.experiments.common import OK, Context, Figure, int_list, make_record, rows_agree
from trendlake import engine, optimizer

TITLE = "Event-grained graphs: a query alone in compiled steps, and a shared graph (GRAPH_*_COST)"
SHARED_TYPE = "Travel"
ADJACENT = "WHERE Travel.speed < NEXT(Travel).speed\n"


def add_options(p: Any) -> None:
    p.add_argument("--events", type=int_list, help="events of each generated day, comma separated "
                   "(full: 30000,60000,100000)")


def workload_texts() -> tuple[str, str]:
    """The flow queries of rides_team.etq, and their type-grained twins (``typed_*``)."""
    blocks = [b for b in workload_path("rides_team.etq").read_text().split("\n\n") if "QUERY flow_" in b]
    if len(blocks) < 2 or not all(ADJACENT in b for b in blocks):
        raise ValueError("rides_team.etq's flow queries changed: update benchmarks/experiments/calibrate_graph.py")
    twins = [re.sub(re.escape(ADJACENT), "", b.replace("QUERY flow_", "QUERY typed_")) for b in blocks]
    return "\n\n".join(blocks) + "\n", "\n\n".join(twins) + "\n"


def run(ctx: Context) -> dict[str, Any]:
    sizes = ctx.option("events", ctx.pick([4000], [30000], [30000, 60000, 100000]))
    rows, checks, disagreements = [], 0, []
    for n in sizes:
        row, agree = measure(ctx, n)
        rows.append(row)
        checks += 1
        if agree is not None:
            disagreements.append({"x": n, "strategies": ["alone", "shared"], "difference": agree})
        ctx.log(f"  {n} events: {row['steps_per_unit']:.3f} steps per graph unit; shared graph "
                f"{row['measured_ratio']:.2f}x measured, {row['estimated_ratio']:.2f}x estimated; "
                f"entry cost fit {row['entry_cost_fit']}")
    units = [r["steps_per_unit"] for r in rows]
    fits = [r["entry_cost_fit"] for r in rows if r["entry_cost_fit"] is not None]
    fig = Figure("shared", "Eight flow queries: shared graph vs alone", "events", sizes, ["shared", "alone"],
                 y_label="seconds (least of repeats)")
    fig.series["shared"] = [r["shared_s"] for r in rows]
    fig.series["alone"] = [r["alone_s"] for r in rows]
    return make_record(
        ctx, title=TITLE, paper="Hamlet (SIGMOD 2021) with GRETA graphs; optimizer.cost",
        compares="event-grained queries alone against their type-grained twins (steps per graph unit), "
                 "and the shared graph against its queries alone (entry cost)",
        strategies={"shared": {"label": "one shared graph (share-all)", "kind": "shared", "status": OK},
                    "alone": {"label": "each query alone", "kind": "engine", "status": OK}},
        figures=[fig.with_ratios([("shared", "alone")])],
        points=[{"figure": "shared", "x": r["events"], "strategy": k, "status": OK, "best_s": r[f"{k}_s"]}
                for r in rows for k in ("shared", "alone")],
        checks=checks, disagreements=disagreements, rows=rows,
        graph_unit_cost=round(statistics.median(units), 3),
        graph_entry_cost=round(statistics.median(fits), 3) if fits else None,
        constants_in_use={"graph_unit_cost": optimizer.cost.GRAPH_UNIT_COST,
                          "graph_entry_cost": optimizer.cost.GRAPH_ENTRY_COST},
    )


def measure(ctx: Context, n: int) -> tuple[dict[str, Any], str | None]:
    schema = load_stream_schema("rides")
    flow_text, twin_text = workload_texts()
    workload = optimizer.compile_workload(flow_text + "\n" + twin_text, schema)
    flows = optimizer.compile_workload(flow_text, schema)
    table = pa.concat_tables(generate("rides", n, ctx.seed, start="2026-01-05T00:00:00+00:00",
                                      rate_per_second=n / 86_400))
    doc = file_statistics(table, workload, "rides")
    stats = Statistics.from_dict(doc)
    alone_plan = engine.load_plan(optimizer.build_plan(workload, planner="none", statistics=doc, stream="rides"))
    shared_plan = engine.load_plan(optimizer.build_plan(flows, planner="share-all", statistics=doc, stream="rides"))
    query_s: dict[str, float] = {}
    shared_s = float("inf")
    agree = None
    for _ in range(ctx.repeat):
        a: dict[str, dict[str, float]] = {}
        b: dict[str, dict[str, float]] = {}
        want = engine.evaluate(alone_plan, table, timings=a)
        got = engine.evaluate(shared_plan, table, timings=b)
        mine = [r for r in want if r["query"].startswith("flow_")]
        agree = agree or rows_agree(sorted(mine, key=repr), sorted(got, key=repr))
        for q, s in a.get("queries", {}).items():
            query_s[q] = min(query_s.get(q, float("inf")), s)
        shared_s = min(shared_s, sum(b.get("groups", {}).values()) + sum(b.get("queries", {}).values()))
    entries = {q["name"]: q for q in alone_plan.raw["queries"]}
    steps = alone_costs(entries, stats)
    twins = [q for q in entries if q.startswith("typed_")]
    per_step = sum(query_s[q] for q in twins) / sum(steps[q] for q in twins)
    spent, units = 0.0, 0.0
    for q in (x for x in entries if x.startswith("flow_")):
        e = entries[q]
        rates = rates_for(stats, e["window"]["within_us"], {v["type"] for v in e["variables"]}, q)
        other = sum(rates.of(t) for t in rates.steps if t != SHARED_TYPE)
        p = max(stats.partitions(e["partition_by"], SHARED_TYPE), 1.0)
        per = rates.events[SHARED_TYPE] / p
        units += p * (per * max(per - 1.0, 0.0) / 2.0 + per)
        spent += query_s[q] / per_step - other
    alone_s = sum(query_s[q] for q in entries if q.startswith("flow_"))
    measured = alone_s / shared_s
    return {
        "events": n, "partitions": stats.partitions(["district"], SHARED_TYPE),
        "alone_s": round(alone_s, 6), "shared_s": round(shared_s, 6), "measured_ratio": round(measured, 3),
        "steps_per_unit": round(spent / units, 4),
        "estimated_ratio": round(_estimated_ratio(flows, doc, optimizer.cost.GRAPH_ENTRY_COST) or 1.0, 3),
        "entry_cost_fit": _fit(flows, doc, measured),
    }, agree


def _estimated_ratio(workload: Any, doc: dict[str, Any], entry_cost: float) -> float | None:
    """non-shared / shared of the group ``hamlet`` plans with ``entry_cost``; None: it declines."""
    saved = hamlet.GRAPH_ENTRY_COST
    hamlet.GRAPH_ENTRY_COST = entry_cost
    try:
        plan = optimizer.build_plan(workload, planner="hamlet", statistics=doc, stream="rides")
    finally:
        hamlet.GRAPH_ENTRY_COST = saved
    if not plan["sharing"]:
        return None
    cost = plan["sharing"][0]["estimated_cost"]
    return cost["non_shared"] / cost["shared"]


def _fit(workload: Any, doc: dict[str, Any], measured: float) -> float | None:
    """The entry cost at which the estimated ratio is the measured one (the estimate falls as
    the cost grows), to 1%; None where the measured ratio is at most 1 or beyond the range."""
    lo, hi = 0.0, 64.0
    if measured <= 1.0 or (_estimated_ratio(workload, doc, lo) or 1.0) < measured:
        return None
    if (_estimated_ratio(workload, doc, hi) or 1.0) > measured:
        return None
    while hi - lo > 0.01 * max(hi, 0.01):
        mid = (lo + hi) / 2
        if (_estimated_ratio(workload, doc, mid) or 1.0) > measured:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 3)
