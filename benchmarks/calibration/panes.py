"""Calibrate the panes pass's constants of ``optimizer.cost``: ``PANE_STEP_COST`` and
``PANE_PRODUCT_COST``.

Workloads of one query under several windows (``SEQ(Request, Travel+)`` and
``SEQ(Request, Travel+, Dropoff)`` with ``COUNT(Travel)``: states of 2 and 6
counts) over a generated rides day, each window set once as a ``panes`` group
and once each query alone, side by side in one process on the same events: the
compiled calls of each (the panes pass; COGRA's kernel per query) recorded and
timed again on their own, least of the repeats. The pass reports its steps
(each applied to the ``D + 1`` states of a pane's map) and its pane products
(each ``D x (D + 1)`` multiply-adds); alone, each step is applied to each open
window (``typed_sharing.cogra_steps`` counts them). With one step alone as the unit,

    measured group / alone x alone's window steps = PANE_STEP_COST x steps x (D + 1)
                                                  + PANE_PRODUCT_COST x products x D (D + 1)

over every workload and window set, solved by least squares. The rows of the
group are checked equal to its queries' alone.

It measures one sharing kind's internals, so it lives in ``benchmarks/calibration``.

    python -m benchmarks calibrate_panes [--size full] [--events 100000] [--repeat 3]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from trendlake.datagen.streams import generate
from trendlake.engine.shared.panes import PanesStats

from benchmarks.calibration.typed_sharing import cogra_steps, recorded_calls, replay_time
from benchmarks.experiments.common import (
    OK,
    Context,
    Figure,
    forced_sharing,
    make_record,
    rows_agree,
)
from trendlake import engine, optimizer

TITLE = "The panes pass: a pane map's step and product against COGRA's step (PANE_*_COST)"
BODIES = {
    "seq2": ("COUNT(*)", "SEQ(Request, Travel+)", 2),
    "seq3": ("COUNT(*), COUNT(Travel) AS travel", "SEQ(Request, Travel+, Dropoff)", 6),
}
WINDOW_SETS = {
    "sample": [(30, 5), (60, 10), (30, 10), (120, 30), (60, 15)],
    "tumbling": [(10, 10), (20, 20), (30, 30)],
    "fine": [(10, 1), (15, 5), (20, 2)],
}


def add_options(p: Any) -> None:
    p.add_argument("--events", type=int, help="events of the generated day (by size: 5000, 30000, 100000)")


def workload_text(body: str, windows: list[tuple[int, int]]) -> str:
    returns, pattern, _ = BODIES[body]
    return "".join(f"QUERY w{w}_{s} RETURN district, {returns} PATTERN {pattern} GROUP-BY district "
                   f"WITHIN {w} minutes SLIDE {s} minutes;\n" for w, s in windows)


def measure(ctx: Context, table: pa.Table, body: str, windows: list[tuple[int, int]]) -> tuple[dict[str, Any], str | None]:
    """The compiled calls of the queries alone (COGRA's kernel) and of the group (the panes
    pass), recorded in one evaluation each and timed again on their own, least of the repeats:
    what the cost constants are relative to (the engine's work around them is the same)."""
    from trendlake.engine.shared import panes as panes_kind
    from trendlake.engine.strategies.cogra import kernel

    text = workload_text(body, windows)
    raw = optimizer.build_plan(optimizer.compile_workload(text))
    alone = engine.load_plan(raw)
    shared = engine.load_plan(forced_sharing(raw, "static"))
    assert [g["kind"] for g in shared.raw["sharing"]] == ["panes"], shared.raw["sharing"]
    stats = PanesStats()
    agree = rows_agree(engine.evaluate(alone, table), engine.evaluate(shared, table, shared_stats={"g0": stats}))
    kernel_calls = recorded_calls(kernel, "_steps", alone, table)
    pane_calls = recorded_calls(panes_kind, "_panes", shared, table)
    alone_s = replay_time(kernel_calls, kernel._steps.run, ctx.repeat)
    group_s = replay_time(pane_calls, panes_kind._panes.run, ctx.repeat)
    d = BODIES[body][2]
    window_steps = cogra_steps(kernel_calls)
    return {
        "body": body, "windows": [f"{w}/{s}" for w, s in windows], "counts": d,
        "alone_s": round(alone_s, 5), "group_s": round(group_s, 5), "measured_ratio": round(alone_s / group_s, 3),
        "steps": stats.steps, "panes": stats.panes, "products": stats.products,
        "window_steps": window_steps,
        "map_steps": stats.steps * (d + 1), "product_entries": stats.products * d * (d + 1),
        "group_in_alone_steps": round(window_steps * group_s / alone_s, 1),
    }, agree


def fit(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """(PANE_STEP_COST, PANE_PRODUCT_COST) by least squares, neither below 0."""
    x = np.array([[r["map_steps"], r["product_entries"]] for r in rows], dtype=float)
    y = np.array([r["group_in_alone_steps"] for r in rows], dtype=float)
    (a, b), *_ = np.linalg.lstsq(x, y, rcond=None)
    if b < 0:
        a, b = float(np.dot(x[:, 0], y) / np.dot(x[:, 0], x[:, 0])), 0.0
    if a < 0:
        a, b = 0.0, float(np.dot(x[:, 1], y) / np.dot(x[:, 1], x[:, 1]))
    return round(float(a), 3), round(float(b), 4)


def run(ctx: Context) -> dict[str, Any]:
    n = ctx.option("events", ctx.pick(5_000, 30_000, 100_000))
    table = pa.concat_tables(generate("rides", n, ctx.seed, start="2026-01-05T00:00:00+00:00", rate_per_second=n / 86_400))
    rows, disagreements = [], []
    for body in BODIES:
        for name, windows in WINDOW_SETS.items():
            row, agree = measure(ctx, table, body, windows)
            row["window_set"] = name
            rows.append(row)
            if agree is not None:
                disagreements.append({"x": f"{body}/{name}", "strategies": ["alone", "panes"], "difference": agree})
            ctx.log(f"  {body} {name}: group {row['group_s']:.4f} s, alone {row['alone_s']:.4f} s "
                    f"({row['measured_ratio']:.2f}x); {row['steps']} steps, {row['products']} products")
    step_cost, product_cost = fit(rows)
    ctx.log(f"  fit: PANE_STEP_COST {step_cost}, PANE_PRODUCT_COST {product_cost}")
    labels = [f"{r['body']}/{r['window_set']}" for r in rows]
    fig = Figure("panes", "One query under several windows: the panes pass vs the kernel per query", "workload",
                 labels, ["panes", "alone"], y_label="seconds in the compiled calls (least of repeats)")
    fig.series["panes"] = [r["group_s"] for r in rows]
    fig.series["alone"] = [r["alone_s"] for r in rows]
    return make_record(
        ctx, title=TITLE, paper="Weave Share (panes of windows); optimizer.cost",
        compares="a panes group against its queries alone (engine seconds), and the pass's counters",
            strategies={"panes": {"label": "the panes pass of one group (share-all)", "kind": "shared", "status": OK},
                    "alone": {"label": "COGRA's compiled kernel, each query alone", "kind": "engine", "status": OK}},
        figures=[fig.with_ratios([("alone", "panes")])],
        points=[{"figure": "panes", "x": lab, "strategy": k, "status": OK, "best_s": r[f"{'group' if k == 'panes' else 'alone'}_s"]}
                for lab, r in zip(labels, rows, strict=True) for k in ("panes", "alone")],
        checks=len(rows), disagreements=disagreements, rows=rows, events=n,
        pane_step_cost=step_cost, pane_product_cost=product_cost,
        constants_in_use={"pane_step_cost": optimizer.cost.PANE_STEP_COST,
                          "pane_product_cost": optimizer.cost.PANE_PRODUCT_COST},
    )
