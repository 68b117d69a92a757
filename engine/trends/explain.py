"""Why a window's trends are constructed the way they are (``trendlake trends --explain``).

:func:`explain` turns a :class:`~trendlake.engine.trends.Planning` into data: the
budget, the chosen plan with its graphlets (vertex ranges: graphlets are
consecutive time intervals, so consecutive vertex indices) and cut edges, and
the alternatives with their estimates and why each lost. The alternatives are
M-CET, T-CET and H-CET under the optimizer's partitioning (costed here when the
chosen algorithm did not run the optimizer), then the other plans the optimizer
costed, cheapest fitting ones first. Every figure is the cost model's
(``cost.cost``); nothing is constructed.
"""

from __future__ import annotations

from typing import Any

from trendlake.engine.trends.cost import Cost, cost
from trendlake.engine.trends.h_cet import graphlet_of
from trendlake.engine.trends.partitioning import OPTIMIZERS

__all__ = ["MAX_PLANS", "cut_edges", "explain", "graphlets"]

MAX_PLANS = 10  # the optimizer's other plans listed (the counts cover them all)


def graphlets(planning: Any, cuts: tuple[int, ...]) -> list[dict[str, int]]:
    """Per graphlet of ``cuts``: its first and last vertex, vertices, edges inside it and cut
    edges leaving it, over the edges of ``planning.paths`` (the trends listed)."""
    paths = planning.paths
    gl = graphlet_of(paths, cuts)
    out = [{"first": -1, "last": -1, "vertices": 0, "edges": 0, "cut_edges": 0} for _ in range(len(cuts) + 1)]
    for v, g in enumerate(gl):
        d = out[g]
        d["first"] = v if d["first"] < 0 else d["first"]
        d["last"] = v
        d["vertices"] += 1
        for w in paths.succ[v]:
            d["edges" if gl[w] == g else "cut_edges"] += 1
    return out


def cut_edges(planning: Any, cuts: tuple[int, ...]) -> list[tuple[int, int]]:
    """The edges of ``planning.paths`` that cross a cut of ``cuts``."""
    gl = graphlet_of(planning.paths, cuts)
    return [(v, w) for v, ws in enumerate(planning.paths.succ) for w in ws if gl[w] != gl[v]]


def _entry(c: Cost, held: int) -> dict[str, Any]:
    return {"algorithm": c.algorithm, "cuts": list(c.cuts), "graphlets": c.graphlets, "cpu": c.cpu,
            "memory": c.memory, "memory_with_kept_trends": c.memory + held}


def _why(planning: Any, c: Cost, chosen: Cost | None) -> tuple[bool, str]:
    """Whether ``c`` fits the budget, and why it was not chosen."""
    room, asked = planning.room, planning.algorithm
    if room is not None and c.memory > room:
        return False, (f"over the memory budget: {c.memory + planning.held} bytes with the kept trends > "
                       f"{planning.memory}")
    if chosen is None or (asked != "auto" and c.algorithm != asked):
        return True, f"fits, but --algorithm {asked} was asked" + (
            "" if chosen is None else f" (this plan: CPU {c.cpu}, the chosen {chosen.cpu})")
    if c.cpu > chosen.cpu:
        return True, f"dearer: CPU {c.cpu} > {chosen.cpu} (+{(c.cpu - chosen.cpu) / max(chosen.cpu, 1):.1%})"
    if asked == "auto" and c.algorithm == "t-cet":
        return True, ("auto runs H-CET under the optimizer's partitioning (with no cut H-CET is T-CET plus a "
                      "cache of the trends), else M-CET")
    if asked == "auto" and c.algorithm == "m-cet":
        return True, "auto runs M-CET only when no H-CET plan fits"
    if c.cpu == chosen.cpu and c.memory > chosen.memory:
        return True, f"as much CPU, more memory: {c.memory} > {chosen.memory} bytes"
    if c.cpu == chosen.cpu:
        return True, "as cheap as the chosen plan; the optimizer kept the one it found first"
    return True, (f"fits and costs less CPU, but {planning.optimizer} did not choose it (a heuristic off "
                  "homogeneous graphs, docs/engine.md)")


def explain(planning: Any, max_plans: int = MAX_PLANS) -> dict[str, Any]:
    """The explanation of ``planning`` as JSON-ready data (see the module docstring)."""
    paths, held, size = planning.paths, planning.held, planning.size
    chosen: Cost | None = planning.plan
    fits = chosen is not None and planning.refusal is None
    evaluated = planning.evaluated
    budget = planning.room if planning.room is not None else float("inf")
    optimized: Cost | None = None
    if evaluated is None:  # the optimizer did not run for the chosen plan: run it to compare
        evaluated = []
        if budget >= 0:
            optimized = OPTIMIZERS[planning.optimizer](paths, budget, size, evaluated=evaluated)
    elif chosen is not None and chosen.algorithm == "h-cet":
        optimized = chosen
    named = [cost(paths, "m-cet", (), size), cost(paths, "t-cet", (), size)]
    if optimized is not None:
        named.append(optimized)
    key = (chosen.algorithm, chosen.cuts) if chosen is not None else None
    seen = {key}
    alternatives = []
    for c, source in [(c, "algorithm") for c in named] + [(c, "optimizer") for c in _ranked(evaluated, budget)]:
        if (c.algorithm, c.cuts) in seen:
            continue
        seen.add((c.algorithm, c.cuts))
        ok, why = _why(planning, c, chosen if fits else None)
        label = "H-CET under the optimizer's partitioning" if c is optimized else None
        alternatives.append({**_entry(c, held), "fits": ok, "why": why, "source": source,
                             **({"label": label} if label else {})})
    shown = [a for a in alternatives if a["source"] == "algorithm"]
    shown += [a for a in alternatives if a["source"] == "optimizer"][:max_plans]
    over = sum(1 for c in evaluated if c.memory > budget)
    out: dict[str, Any] = {
        "query": planning.query.name,
        "group": list(planning.group),
        "window": list(planning.window),
        "algorithm": planning.algorithm,
        "optimizer": planning.optimizer,
        "budget": planning.memory,
        "kept_trends_bytes": held,
        "room": planning.room,
        "graph": {"vertices": size[0], "edges": size[1], "time_stamps": paths.groups,
                  "edges_of_the_trends": paths.edges, "bytes": planning.graph.bytes()},
        "count_all": planning.count_all,
        "count": planning.count,
        "complete": planning.complete,
        "chosen": None,
        "alternatives": shown,
        "optimizer_evaluated": len(evaluated),
        "optimizer_over_budget": over,
        "optimizer_fitting": len(evaluated) - over,
        "alternatives_not_shown": len(alternatives) - len(shown),
        "refused": planning.refusal,
    }
    if chosen is not None:
        parts = graphlets(planning, chosen.cuts)
        out["chosen"] = {**_entry(chosen, held), "fits": fits, "graphlet_list": parts,
                         "cut_edges": sum(p["cut_edges"] for p in parts)}
    return out


def _ranked(evaluated: list[Cost], budget: float) -> list[Cost]:
    """The optimizer's plans: fitting ones by CPU, then the rest by memory."""
    return sorted(evaluated, key=lambda c: (c.memory > budget, c.cpu if c.memory <= budget else c.memory, c.cuts))
