"""The planners of the ``panes`` kind (Weave Share): queries that differ only in their windows.

``shared-panes`` (Weave Share's "Shared") puts every candidate's queries in one
group (one tree), where that is estimated cheaper than running them alone.
``weaveshare`` splits each candidate into Weave Share's execution trees (the
greedy merge on Weave Share's cost model, ``optimizer.weaveshare``, at the
candidate's input rate from the statistics) and keeps each tree of two or more
queries as a group where it is estimated cheaper than alone. Planned within
``stored(previous plan)`` (``build_plan(..., previous=)``, ``trendlake optimize
--incremental``), it weaves each candidate's queries into the previous plan's
``panes`` groups instead (``weaveshare.incremental``): kept where the woven
plan's cost is within ``TOLERANCE`` of the plan from scratch, else re-planned;
each group records ``parameters.woven`` (1: woven, 0: re-planned).

Estimates, per unit of time, in steps of COGRA's compiled kernel: alone, each
query applies each step (a run of one variable's events, ``optimizer.cost``'s
steps per window over the window's length) to each of its open windows,
``within / slide`` of them. Over panes, each step is applied once to the
pane's map, ``D + 1`` states for a state of ``D`` counts (``PANE_STEP_COST`` per
state; a run of events is cut where a pane ends, so a pane with events adds
about one step), and each window carries the state through the panes with
events of its own partition, each a ``D x (D + 1)`` product
(``PANE_PRODUCT_COST`` per entry). The events are taken as spread evenly over
the partitions of the queries' partitioning (``Statistics.partitions``) and at
random within a partition: of the ``p`` panes of a window, ``p (1 - e^(-e/p))``
hold one of its partition's ``e`` events (about ``e`` when they are few, ``p``
when they are many). So the same events over more partitions cost more
products, and where each partition has about one event per pane or fewer
sharing is estimated dearer than alone (docs/engine.md, "Shared panes"). A group's
``estimated_cost`` is its queries' cost alone (``optimizer.cost.alone_costs``)
and that times the ratio of the two rates.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from trendlake.engine.shared.panes import rules
from trendlake.optimizer import weaveshare
from trendlake.optimizer.candidates import Candidates, panes
from trendlake.optimizer.cost import PANE_PRODUCT_COST, PANE_STEP_COST, alone_costs, rates_for

__all__ = ["TOLERANCE", "estimate", "plan_shared", "plan_weaveshare", "stored"]

# how far above the from-scratch plan's cost (Weave Share's Eq. 1) a woven plan may be kept
TOLERANCE = 0.2
# the previous plan's panes groups (query names), while planning incrementally
_STORED: ContextVar[list[list[str]] | None] = ContextVar("stored_panes_groups", default=None)


@contextmanager
def stored(previous: Mapping[str, Any] | None) -> Iterator[None]:
    """Plan ``weaveshare`` incrementally against ``previous``'s panes groups (None: from scratch)."""
    groups = None if previous is None else [list(g["queries"]) for g in previous.get("sharing", [])
                                            if g.get("kind") == panes.KIND]
    token = _STORED.set(groups)
    try:
        yield
    finally:
        _STORED.reset(token)


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
        trees, woven = _trees(queries, max(rate, 1e-12))
        for names in trees:
            names = [q for q in cand.queries if q in set(names)]
            if len(names) < 2:
                continue
            shared, alone = estimate(entries, names, statistics)
            if shared < alone:
                parameters = {} if woven is None else {"woven": float(woven)}
                groups.append(panes.group(entries, names, parameters=parameters, estimated_cost=(shared, alone)))
    return groups


def _trees(queries: Sequence[Any], rate: float) -> tuple[list[tuple[str, ...]], bool | None]:
    """Weave Share's trees of ``queries`` (names), from scratch (woven None) or woven into the
    stored groups (woven: whether the woven plan was kept)."""
    stored_groups = _STORED.get()
    if stored_groups is None:
        return [t.names for t in weaveshare.plan_trees(queries, rate)], None
    by_name = {q.name: q for q in queries}
    old = [[by_name[n] for n in g if n in by_name] for g in stored_groups]
    old = [g for g in old if g]
    got = weaveshare.incremental(old, queries, rate, tolerance=TOLERANCE)
    return [t.names for t in got.trees], not got.replanned


def counts_of(entry: Mapping[str, Any]) -> int:
    """The counts of a query's window state: per positive variable its count and COUNT(E)s."""
    positive = [v for v in entry["variables"] if not v["negated"]]
    keys = {a.get("var") for a in entry["aggregates"] if a["fn"] == "count"}
    return len(positive) * (1 + len(keys))


def partitions_of(entry: Mapping[str, Any], statistics: Any) -> float:
    """The partitions of a query's partitioning holding events of its positive types (the most
    of any of its types; 1 where the statistics do not say)."""
    if statistics is None:
        return 1.0
    types = {v["type"] for v in entry["variables"] if not v["negated"]}
    return max([1.0, *(statistics.partitions(entry["partition_by"], t) for t in types)])


def nonempty_panes(panes_: float, steps: float) -> float:
    """The expected panes with a step among ``panes_`` panes of one window and partition that
    hold ``steps`` steps spread at random: ``panes_ (1 - e^(-steps / panes_))``, about ``steps``
    when they are few and ``panes_`` when they are many."""
    if panes_ <= 0 or steps <= 0:
        return 0.0
    return panes_ * -math.expm1(-steps / panes_)


def estimate(entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str], statistics: Any) -> tuple[float, float]:
    """(shared, non-shared) cost per window of ``queries`` as one ``panes`` group."""
    costs = alone_costs({q: entries[q] for q in queries}, statistics)
    windows = panes.windows_of(entries, queries)
    first = entries[queries[0]]
    # steps and events per microsecond (the same query: the same steps, whatever its window)
    rate = sum(costs[q] / w for q, (w, _) in zip(queries, windows, strict=True)) / len(queries)
    types = {v["type"] for v in first["variables"] if not v["negated"]}
    longest = max(w for w, _ in windows)
    events = sum(rates_for(statistics, longest, types).events.values()) / longest
    alone_rate = sum(rate * w / s for w, s in windows)
    d = counts_of(first)
    edges_per_us = len(rules.edges(windows)) / rules.composite_slide(windows)
    parts = partitions_of(first, statistics)
    # per partition: a pane with an event is a map; a step is cut where a pane ends
    steps = rate + parts * nonempty_panes(edges_per_us, events / parts)
    products = sum(parts * nonempty_panes(edges_per_us * w, events * w / parts) / s for w, s in windows)
    shared_rate = steps * (d + 1) * PANE_STEP_COST + products * d * (d + 1) * PANE_PRODUCT_COST
    non_shared = sum(costs.values())
    return (non_shared * shared_rate / alone_rate if alone_rate > 0 else non_shared), non_shared
