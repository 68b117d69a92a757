"""The subsequence kind's prefix pass against its queries alone: funnels that begin alike.

``k`` queries ``SEQ(B, C, D, E, X_i)`` (COUNT(*), 6-second windows sliding by 3) over
``--events`` events where B..E are thirty times as frequent as each ``X_i``: one
``subsequence`` group sharing ``B, C, D, E`` (run by the prefix pass,
``engine/shared/subsequence/prefix.py``) and every query alone on COGRA's kernel, in turns
in one process on the same events, least of the repeats. ``factor`` is the group's time
over its queries' alone per unit of the trie's share (``engine.shared.subsequence.prefix.trie_share``:
trie variables over query variables), what ``optimizer.cost.PREFIX_STEP_COST`` stands for.
The group's rows are checked equal to the queries' alone.

It measures one sharing kind's internals, so it lives in ``benchmarks/calibration``.

    python -m benchmarks calibrate_prefix [--size full] [--events 100000] [--repeat 3]
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pyarrow as pa
from trendlake.engine.plan import content_hash
from trendlake.engine.shared.subsequence.prefix import trie_share
from trendlake.optimizer.candidates import subsequence

from benchmarks.calibration.typed_sharing import round_robin
from benchmarks.experiments.common import OK, Context, Figure, make_record, rows_agree
from trendlake import engine, optimizer

TITLE = "The prefix pass: funnels that begin alike, shared vs each query alone"
PREFIX = ["B", "C", "D", "E"]


def add_options(p: Any) -> None:
    p.add_argument("--events", type=int, help="events of the stream (full: 100000)")


def funnels(k: int) -> str:
    return "\n".join(f"QUERY q{i:02d} RETURN COUNT(*) PATTERN SEQ({', '.join(PREFIX)}, X{i}) "
                     "WITHIN 6 seconds SLIDE 3 seconds;" for i in range(k))


def events(n: int, k: int, seed: int) -> pa.Table:
    """``n`` events 1-8 ms apart: each of B..E thirty times as frequent as each X_i."""
    rng = random.Random(seed)
    types = PREFIX * 30 + [f"X{i}" for i in range(k)]
    t, rows = 0, []
    for i in range(n):
        t += rng.randint(1, 8000)
        rows.append({"type": rng.choice(types), "ts": t, "seq": i})
    return engine.table_from_rows(rows)


def group_plan(text: str) -> tuple[dict[str, Any], dict[str, Any], float]:
    """The plan of each query alone, the plan with all of them in one group, the trie's share."""
    alone = optimizer.build_plan(optimizer.parse_workload(text), planner="none")
    entries = {q["name"]: q for q in alone["queries"]}
    names = sorted(entries)
    group = subsequence.group(entries, names, [(PREFIX, names, [0] * len(names), 1.0)], "sharon",
                              parameters={}, estimated_cost=(0.0, 0.0))
    shared = dict(copy.deepcopy(alone), sharing=[{**group, "id": "g0"}])
    shared["content_hash"] = content_hash(shared)
    share = trie_share([entries[q] for q in names])
    assert share is not None, "funnels of distinct types are the prefix pass's"
    return alone, shared, share


def run(ctx: Context) -> dict[str, Any]:
    n = ctx.option("events", ctx.pick(5_000, 30_000, 100_000))
    counts = ctx.pick([4, 8], [8, 16], [8, 16, 32])
    rows, disagreements = [], []
    for k in counts:
        text = funnels(k)
        alone, shared, share = group_plan(text)
        table = events(n, k, ctx.seed)
        got, times = round_robin({name: (lambda p=p, t=table: engine.evaluate(p, t))
                                  for name, p in (("group", shared), ("alone", alone))}, ctx.repeat)
        diff = rows_agree(got["alone"], got["group"])
        if diff is not None:
            disagreements.append({"x": k, "strategies": ["alone", "group"], "difference": diff})
        group_s, alone_s = min(times["group"]), min(times["alone"])
        rows.append({"queries": k, "group_s": round(group_s, 6), "alone_s": round(alone_s, 6),
                     "ratio": round(group_s / alone_s, 3), "trie_share": round(share, 4),
                     "factor": round(group_s / alone_s / share, 3), "result_rows": len(got["alone"])})
        ctx.log(f"  {k} funnels: group {group_s:.4f} s, alone {alone_s:.4f} s ({group_s / alone_s:.2f}x), "
                f"trie share {share:.3f}: factor {group_s / alone_s / share:.2f}")
    fig = Figure("funnels", f"k funnels SEQ(B, C, D, E, X_i) over {n} events: one group vs each alone", "queries",
                 counts, ["group", "alone"], y_label="seconds (least of repeats)")
    fig.series["group"] = [r["group_s"] for r in rows]
    fig.series["alone"] = [r["alone_s"] for r in rows]
    fig.extra["factor"] = [r["factor"] for r in rows]
    return make_record(
        ctx, title=TITLE, paper="Sharon §III-C (shared prefixes); optimizer.cost.PREFIX_STEP_COST",
        compares="a subsequence group on the prefix pass against its queries alone on COGRA's kernel",
        strategies={"group": {"label": "one subsequence group (the prefix pass)", "kind": "shared", "status": OK},
                    "alone": {"label": "COGRA's kernel, each query alone", "kind": "engine", "status": OK}},
        figures=[fig.with_ratios([("alone", "group")])],
        points=[{"figure": "funnels", "x": r["queries"], "strategy": s, "status": OK, "best_s": r[f"{s}_s"]}
                for r in rows for s in ("group", "alone")],
        checks=len(rows), disagreements=disagreements, rows=rows, events=n,
        constants_in_use={"prefix_step_cost": optimizer.cost.PREFIX_STEP_COST},
    )
