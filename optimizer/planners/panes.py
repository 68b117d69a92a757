"""The planners of the ``panes`` kind (Weave Share): queries that differ only in their windows.

``shared-panes`` (Weave Share's "Shared") puts every candidate's queries in one
group (one tree), where that is estimated cheaper than running them alone.
``weaveshare`` splits each candidate into Weave Share's execution trees (the
greedy merge on Weave Share's cost model, ``optimizer.weaveshare``, at the
candidate's input rate from the statistics) and keeps each tree of two or more
queries as a group where it is estimated cheaper than alone.

Estimates, per unit of time, in steps of COGRA's compiled kernel: alone, each
query applies each step (a run of one variable's events, ``optimizer.cost``'s
steps per window over the window's length) to each of its open windows,
``within / slide`` of them. Over panes, each step is applied once to the
pane's map, ``D + 1`` states for a state of ``D`` counts (``PANE_STEP_COST`` per
state), and each window carries the state through its panes with events
(at most one per step, at most the group's edges in the window), each a
``D x (D + 1)`` product (``PANE_PRODUCT_COST`` per entry). A group's
``estimated_cost`` is its queries' cost alone (``optimizer.cost.alone_costs``)
and that times the ratio of the two rates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trendlake.optimizer import weaveshare
from trendlake.optimizer.candidates import Candidates, panes
from trendlake.optimizer.cost import PANE_PRODUCT_COST, PANE_STEP_COST, alone_costs, rates_for

__all__ = ["estimate", "plan_shared", "plan_weaveshare"]


def plan_shared(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """One group per candidate, all its queries, where estimated cheaper than alone."""
    groups = []
    for cand in candidates.get(panes.KIND, []):
        shared, alone = estimate(entries, cand.queries, statistics)
        if shared < alone:
            groups.append(panes.group(entries, list(cand.queries), parameters={}, estimated_cost=(shared, alone)))
    return groups


def plan_weaveshare(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Weave Share's trees of each candidate, each of two or more queries a group where
    estimated cheaper than alone."""
    groups = []
    for cand in candidates.get(panes.KIND, []):
        first = entries[cand.queries[0]]
        types = {v["type"] for v in first["variables"] if not v["negated"]}
        within = int(first["window"]["within_us"])
        rate = sum(rates_for(statistics, within, types).events.values()) / within
        queries = weaveshare.from_entries([entries[q] for q in cand.queries])
        for tree in weaveshare.plan_trees(queries, max(rate, 1e-12)):
            names = [q for q in cand.queries if q in set(tree.names)]
            if len(names) < 2:
                continue
            shared, alone = estimate(entries, names, statistics)
            if shared < alone:
                groups.append(panes.group(entries, names, parameters={}, estimated_cost=(shared, alone)))
    return groups


def counts_of(entry: Mapping[str, Any]) -> int:
    """The counts of a query's window state: per positive variable its count and COUNT(E)s."""
    positive = [v for v in entry["variables"] if not v["negated"]]
    keys = {a.get("var") for a in entry["aggregates"] if a["fn"] == "count"}
    return len(positive) * (1 + len(keys))


def estimate(entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str], statistics: Any) -> tuple[float, float]:
    """(shared, non-shared) cost per window of ``queries`` as one ``panes`` group."""
    costs = alone_costs({q: entries[q] for q in queries}, statistics)
    windows = panes.windows_of(entries, queries)
    # steps per microsecond (the same query: the same steps, whatever its window)
    rate = sum(costs[q] / w for q, (w, _) in zip(queries, windows, strict=True)) / len(queries)
    alone_rate = sum(rate * w / s for w, s in windows)
    d = counts_of(entries[queries[0]])
    edges_per_us = len(panes.edges_of(windows)) / panes.slide_of(windows)
    products = sum(min(edges_per_us * w, rate * w) / s for w, s in windows)
    shared_rate = rate * (d + 1) * PANE_STEP_COST + products * d * (d + 1) * PANE_PRODUCT_COST
    non_shared = sum(costs.values())
    return (non_shared * shared_rate / alone_rate if alone_rate > 0 else non_shared), non_shared
