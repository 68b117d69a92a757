"""Hamlet's planners: share the trend aggregation of common Kleene sub-patterns.

``hamlet`` (dynamic) forms the same groups but lets the executor decide per
burst whether to share it or split it (Hamlet §4.2: a burst whose events
only some queries match is shared when keeping the others out of the update
costs less than processing it per query); ``hamlet-static`` shares every
burst.

``hamlet-static`` decides once per workload, at plan time, from the
statistics (Hamlet's static baseline): for every sharable set
(``optimizer.sharing.candidates``, largest first) it keeps the queries whose
sharing pays for itself — a query joins when the steps of the shared type it
no longer processes exceed the snapshot cost of its own steps (the
benefit-driven pruning of Theorem 4.2 applied per query) — and shares when at
least two queries remain and the group's estimated cost is below the
non-shared one (``optimizer.cost.hamlet_static_cost``). A query is in at most
one group. Statistics decide: with each query's own types about as frequent as
the bursts of the shared type between them (the usual case), running each
query on COGRA's kernel is cheaper and nothing is shared.
"""

from __future__ import annotations

import json
from typing import Any

from trendlake.optimizer import ast
from trendlake.optimizer.cost import graph_cost, hamlet_cost, rates_for, selectivity
from trendlake.optimizer.sharing import candidates, merged_template
from trendlake.optimizer.statistics import Statistics

# Bringing a query up to date from the shared coefficients and applying one of its steps,
# relative to one step of the single-query kernel. Set from a profile of an early version of
# the shared executor on the hamlet benchmark's rides workload (40 queries, 20,000 events:
# about 8 us per member step and window against about 1.6 us per kernel step); the executor
# got faster since (docs/engine.md, "When sharing pays"), so this is conservative: the
# planners share less than they could. Calibrating it from the benchmark's executor figure
# is open work.
SNAPSHOT_COST = 4.0
# Carrying one snapshot's coefficients along one edge of the shared event-grained graph,
# relative to an edge of a single query's GRETA graph (an adjacent predicate evaluated and
# per-window aggregates added): a dict entry added against a predicate call and a few list
# merges. Estimated from the executor's inner loops, to be calibrated from the hamlet
# benchmark's event-grained figure (docs/engine.md, "When sharing pays").
GRAPH_ENTRY_COST = 0.1


def plan_static(workload: ast.Workload, statistics: Statistics | None = None) -> dict[str, Any]:
    """Hamlet's static baseline: groups decided once, every burst shared."""
    return _plan(workload, statistics, dynamic=False)


def plan_dynamic(workload: ast.Workload, statistics: Statistics | None = None) -> dict[str, Any]:
    """Hamlet: groups decided at plan time, each burst shared or split at run time."""
    return _plan(workload, statistics, dynamic=True)


def _graph_group(
    cand: Any, members: dict[str, str], entries: dict[str, Any], rates: dict[str, Any],
    types_of: dict[str, set[str]], dynamic: bool, statistics: Statistics | None,
) -> dict[str, Any] | None:
    """A group sharing the event-grained graph of ``cand.type`` when that is estimated cheaper
    (``optimizer.cost.graph_cost``; costs in graph edges per window), else None. The graph is
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
    first = entries[next(iter(members))]
    return {
        "id": "",
        "kind": "kleene",
        "queries": list(members),
        "variables": dict(members),
        "type": cand.type,
        "partition_by": first["partition_by"],
        "window": dict(first["window"]),
        "decision": "dynamic" if dynamic else "static",
        "snapshots": ["graphlet"],
        "parameters": {"snapshot_cost": SNAPSHOT_COST, "graph_entry_cost": GRAPH_ENTRY_COST},
        "estimated_cost": {"shared": round(shared, 6), "non_shared": round(non_shared, 6)},
        "template": merged_template(entries, members),
    }


def _plan(workload: ast.Workload, statistics: Statistics | None, dynamic: bool) -> dict[str, Any]:
    from trendlake.optimizer.plan import query_entry

    entries = {q.name: query_entry(q) for q in workload.queries}
    types_of = {
        name: {v["type"] for v in e["variables"] if not v["negated"]} for name, e in entries.items()
    }
    rates = {
        name: rates_for(statistics, e["window"]["within_us"], types_of[name], name) for name, e in entries.items()
    }
    alone = {name: sum(rates[name].of(t) for t in types_of[name]) for name in entries}
    taken: set[str] = set()
    groups = []
    for cand in candidates(list(entries.values())):
        members = {q: v for q, v in cand.variables.items() if q not in taken}
        if len(members) < 2:
            continue
        if cand.graph:
            group = _graph_group(cand, members, entries, rates, types_of, dynamic, statistics)
            if group is not None:
                group["id"] = f"g{len(groups)}"
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
        # benefit-driven pruning: a query stays when the shared type's steps it no longer
        # takes exceed the snapshots its own steps cost
        kept = {q: v for q, v in members.items() if k_steps[q] > SNAPSHOT_COST * other[q]}
        if len(kept) < 2:
            continue
        by_predicate: dict[str, list[str]] = {}
        for q, v in kept.items():
            key = json.dumps(entries[q]["local_predicates"].get(v, []), sort_keys=True)
            by_predicate.setdefault(key, []).append(q)
        classes = [(len(qs), match[qs[0]]) for qs in by_predicate.values()]
        shared, non_shared = hamlet_cost(
            k_events, {q: k_steps[q] for q in kept}, {q: other[q] for q in kept}, classes, SNAPSHOT_COST, dynamic
        )
        if shared >= non_shared:
            continue
        first = entries[next(iter(kept))]
        same = len(by_predicate) == 1
        groups.append(
            {
                "id": f"g{len(groups)}",
                "kind": "kleene",
                "queries": list(kept),
                "variables": kept,
                "type": cand.type,
                "partition_by": first["partition_by"],
                "window": dict(first["window"]),
                "decision": "dynamic" if dynamic else "static",
                "snapshots": ["graphlet"] if same else ["graphlet", "event"],
                "parameters": {"snapshot_cost": SNAPSHOT_COST},
                "estimated_cost": {"shared": round(shared, 6), "non_shared": round(non_shared, 6)},
                "template": merged_template(entries, kept),
            }
        )
        taken.update(kept)
    total_alone = sum(alone.values())
    saved = 0.0
    for g in groups:
        est = g["estimated_cost"]
        if "graph_entry_cost" in g["parameters"]:  # costed in graph edges: the same fraction saved
            saved += (1.0 - est["shared"] / est["non_shared"]) * sum(alone[q] for q in g["queries"])
        else:
            saved += est["non_shared"] - est["shared"]
    return {
        "sharing": groups,
        "estimated_cost": round(total_alone - saved, 6),
        "alternatives": [{"planner": "none", "estimated_cost": round(total_alone, 6)}],
    }
