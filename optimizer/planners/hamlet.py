"""Hamlet's planners: share the trend aggregation of common Kleene sub-patterns.

``hamlet`` (dynamic) forms the same groups but lets the executor decide per
burst whether to share it or split it (Hamlet §4.2: a burst whose events
only some queries match is shared when keeping the others out of the update
costs less than processing it per query); ``hamlet-static`` shares every
burst.

``hamlet-static`` decides once per workload, at plan time, from the
statistics (Hamlet's static baseline): for every sharable set
(``optimizer.candidates.kleene``, largest first) it keeps the queries whose
sharing pays for itself (the benefit-driven pruning of Theorem 4.2 applied per
query) and shares when at least two queries remain and the group's estimated
cost is below the non-shared one. A query is in at most one group.

Two cost models, by the executor that will run the group:

- counts only (the compiled shared pass, ``optimizer.cost.typed_pass_cost``): a
  query stays when the rows it would visit alone exceed what it adds to the
  pass (its share of its own types' rows, its own steps and its class
  updates); the group shares when the pass's rows, updates and own steps cost
  less than the queries' rows alone. The pass
  visits every row of the group's types once, at about 1.7 times a row of a
  query alone, so a group pays from a handful of queries on, or where the
  queries match most of the same rows;
- other aggregates (the Python executor, ``optimizer.cost.hamlet_cost``): a
  query stays when the steps of the shared type it no longer takes exceed the
  snapshot cost of its own steps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trendlake.optimizer.candidates import Candidates, kleene
from trendlake.optimizer.candidates.kleene import counts_only
from trendlake.optimizer.cost import (
    CLASS_UPDATE_COST,
    GRAPH_ENTRY_COST,
    OWN_STEP_COST,
    PYTHON_SNAPSHOT_COST,
    SHARED_ROW_COST,
    alone_costs,
    graph_cost,
    hamlet_cost,
    rates_for,
    selectivity,
    typed_pass_cost,
    typed_pass_parameters,
)


def plan_static(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Hamlet's static baseline: groups decided once, every burst shared."""
    return _plan(entries, candidates, statistics, dynamic=False)


def plan_dynamic(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Hamlet: groups decided at plan time, each burst shared or split at run time."""
    return _plan(entries, candidates, statistics, dynamic=True)


def _graph_group(
    cand: Any, members: dict[str, str], entries: Mapping[str, Any], rates: dict[str, Any],
    types_of: dict[str, set[str]], alone_of: dict[str, float], dynamic: bool, statistics: Any,
) -> dict[str, Any] | None:
    """A group sharing the event-grained graph of ``cand.type`` when that is estimated cheaper
    (``optimizer.cost.graph_cost``, in graph edges per window), else None. The graph is
    shared by every burst: a per-burst split would rebuild it per query."""
    k_events = max(rates[q].events.get(cand.type, 0.0) for q in members)
    feeding: dict[str, float] = {}  # types leading into K, over the group: what starts snapshots
    for q, v in members.items():
        types = {x["name"]: x["type"] for x in entries[q]["variables"]}
        for t in entries[q]["template"]["transitions"]:
            if t["to"] == v and t["from"] != v:
                feeding[types[t["from"]]] = rates[q].events.get(types[t["from"]], 0.0)
    k_bursts = max(rates[q].of(cand.type) for q in members)
    snapshots = max(1.0, min(k_bursts, sum(feeding.values()) + 1.0))
    other = {q: sum(rates[q].events.get(t, 0.0) for t in types_of[q] if t != cand.type) for q in members}
    # the partitions of the stream, when the statistics were grouped by the group's partitioning
    partitions = statistics.partitions(entries[next(iter(members))]["partition_by"], cand.type) if statistics else 1.0
    shared, non_shared = graph_cost(k_events, snapshots, other, GRAPH_ENTRY_COST, partitions)
    if shared >= non_shared:
        return None
    # costed in graph edges: in steps, the same fraction of the queries' cost alone
    alone = sum(alone_of[q] for q in members)
    return kleene.group(
        entries, members, cand.type, graph=True, decision="dynamic" if dynamic else "static",
        same_predicates=True, parameters={"snapshot_cost": PYTHON_SNAPSHOT_COST, "graph_entry_cost": GRAPH_ENTRY_COST},
        estimated_cost=(alone * shared / non_shared, alone),
    )


def _plan(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any, dynamic: bool) -> list[dict[str, Any]]:
    types_of = {
        name: {v["type"] for v in e["variables"] if not v["negated"]} for name, e in entries.items()
    }
    rates = {
        name: rates_for(statistics, e["window"]["within_us"], types_of[name], name) for name, e in entries.items()
    }
    alone = alone_costs(entries, statistics)
    taken: set[str] = set()
    groups = []
    for cand in candidates.get(kleene.KIND, []):
        members = {q: v for q, v in cand.variables.items() if q not in taken}
        if len(members) < 2:
            continue
        if cand.graph:
            group = _graph_group(cand, members, entries, rates, types_of, alone, dynamic, statistics)
            if group is not None:
                groups.append(group)
                taken.update(members)
            continue
        match = {
            q: selectivity(statistics, q, v, bool(entries[q]["local_predicates"].get(v)))
            for q, v in members.items()
        }
        other = {q: alone[q] - rates[q].of(cand.type) for q in members}
        k_steps = {q: rates[q].of(cand.type) * match[q] for q in members}  # only the events it matches
        k_events = max(rates[q].events.get(cand.type, 0.0) for q in members)
        window = entries[next(iter(members))]["window"]
        windows = -(-int(window["within_us"]) // int(window["slide_us"]))
        # states of counts only run on the compiled shared pass (its measured constants),
        # others on the Python executor
        compiled = all(counts_only(entries[q]) for q in members)
        if compiled:
            # rows per window over the windows open: each query's alone (its own types' and
            # the events of K it matches), the pass's once for the group
            own_types = {q: types_of[q] - {cand.type} for q in members}
            users = {t: sum(t in own_types[q] for q in members) for t in set().union(*own_types.values())}
            rows = {q: (sum(rates[q].events.get(t, 0.0) for t in own_types[q]) + k_events * match[q]) / windows
                    for q in members}
            # benefit-driven pruning: a query stays when the rows it no longer visits alone
            # exceed what it adds to the pass: its share of its own types' rows (a type is
            # visited once for the queries using it), its own steps and its updates
            added = {q: (SHARED_ROW_COST * sum(rates[q].events.get(t, 0.0) / users[t] for t in own_types[q])
                         + CLASS_UPDATE_COST * k_events * match[q]) / windows + OWN_STEP_COST * other[q]
                     for q in members}
            kept = {q: v for q, v in members.items() if rows[q] > added[q]}
        else:
            # a query stays when the shared type's steps it no longer takes exceed the
            # snapshots its own steps cost
            kept = {q: v for q, v in members.items() if k_steps[q] > PYTHON_SNAPSHOT_COST * other[q]}
        if len(kept) < 2:
            continue
        by_predicate: dict[str, list[str]] = {}
        for q, v in kept.items():
            key = json.dumps(entries[q]["local_predicates"].get(v, []), sort_keys=True)
            by_predicate.setdefault(key, []).append(q)
        classes = [(len(qs), match[qs[0]]) for qs in by_predicate.values()]
        if compiled:
            group_types = set().union(*(own_types[q] for q in kept))
            group_rows = (k_events + sum(max(rates[q].events.get(t, 0.0) for q in kept if t in own_types[q])
                                         for t in group_types)) / windows
            shared, non_shared = typed_pass_cost(
                sum(k_steps[q] + other[q] for q in kept), sum(rows[q] for q in kept), group_rows,
                k_events * sum(sel for _, sel in classes) / windows, sum(other[q] for q in kept),
            )
        else:
            shared, non_shared = hamlet_cost(
                k_events, {q: k_steps[q] for q in kept}, {q: other[q] for q in kept}, classes, PYTHON_SNAPSHOT_COST,
                dynamic,
            )
        if shared >= non_shared:
            continue
        parameters = typed_pass_parameters() if compiled else {"snapshot_cost": PYTHON_SNAPSHOT_COST}
        groups.append(kleene.group(
            entries, kept, cand.type, graph=False, decision="dynamic" if dynamic else "static",
            same_predicates=len(by_predicate) == 1, parameters=parameters,
            estimated_cost=(shared, non_shared),
        ))
        taken.update(kept)
    return groups
