"""Planner registry: ``PLANNERS[name](entries, candidates, statistics) -> groups``.

Every planner has one signature: the plan's query entries by name (in
workload order, ``optimizer.plan.query_entry``, computed once per plan), the
sharing candidates of every kind (``optimizer.candidates.find``) and the
statistics (or None), giving the sharing groups it chose, each made by
``optimizer.groups.make_group`` through its kind's candidates module.
``build_plan`` numbers the groups and estimates the plan's cost.

``statistics`` is the checked view ``optimizer.statistics.Statistics`` (or None): planners
read it through its accessors (``events_per_window``, ``mean_burst``, ``steps_per_window``,
``selectivity_of``, ``partitions``; ``optimizer.cost.rates_for``), never the document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trendlake.optimizer.candidates import Candidates
from trendlake.optimizer.planners import auto, gloria, hamlet, none, panes, share_all, sharon

Planner = Callable[[Mapping[str, dict[str, Any]], Candidates, Any], list[dict[str, Any]]]

PLANNERS: dict[str, Planner] = {
    "none": none.plan,
    "hamlet": hamlet.plan_dynamic,
    "hamlet-static": hamlet.plan_static,
    "gloria": gloria.plan_gloria,
    "gloria-noprune": gloria.plan_noprune,
    "gloria-greedy": gloria.plan_greedy,
    "sharon": sharon.plan_sharon,
    "sharon-greedy": sharon.plan_greedy,
    "sharon-exhaustive": sharon.plan_exhaustive,
    "shared-panes": panes.plan_shared,
    "weaveshare": panes.plan_weaveshare,
    "share-all": share_all.plan,
    "auto": auto.plan,
}


def get_planner(name: str) -> Planner:
    """The registered planner ``name``; ValueError naming the known ones otherwise."""
    try:
        return PLANNERS[name]
    except KeyError:
        raise ValueError(f"unknown planner {name!r} (known: {', '.join(sorted(PLANNERS))})") from None
