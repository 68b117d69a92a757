"""The ``kleene`` sharing kind (Hamlet): queries sharing the trend aggregation of one Kleene type.

The body (``schemas/kinds/kleene.json``) names the shared type ``K``, each
query's variable of it, the grain, the per-burst decision, the snapshot
levels and the merged template. Type-grained groups (no adjacent predicates,
no negation) run on shared coefficients over COGRA's window state: states of
counts only in one compiled pass (``compiled``, ``_typed.c``), the others on
``typed``'s Python executor; event-grained ones on one shared graph of ``K`` (``graph``,
with ``coefficients``). docs/plan-format.md, "Sharing", states the rules;
docs/engine.md, "Shared Kleene execution", why the results are exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trendlake.engine.query import CompiledQuery
from trendlake.engine.shared.base import GroupInput, GroupResults, KindBase, windows_detail
from trendlake.engine.shared.kleene import graph, typed
from trendlake.engine.shared.kleene.typed import SharedStats
from trendlake.engine.shared.template import template_problems

__all__ = ["KLEENE", "KleeneKind", "SharedStats"]


class KleeneKind(KindBase):
    """Checks, runs, reports and explains ``kleene`` groups (the ``Kind`` contract)."""

    name = "kleene"

    def check(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
        body = group["body"]
        members = list(group["queries"])
        problems: list[str] = []
        if set(body["variables"]) != set(members):
            return ["variables must name exactly its queries"]
        for name in members:
            var = body["variables"][name]
            types = {v["name"]: v["type"] for v in entries[name]["variables"] if not v["negated"]}
            if var not in types:
                problems.append(f"query {name} has no positive variable {var}")
            elif types[var] != body["type"]:
                problems.append(f"variable {name}.{var} is of type {types[var]}, not {body['type']}")
        if body["grain"] == "type" and "snapshot_cost" not in group["parameters"]:
            problems.append("a type-grained group states its parameters.snapshot_cost (the c of the per-burst decision)")
        event = any(entries[q].get("adjacent_predicates") or entries[q].get("negations") for q in members)
        if body["grain"] != ("event" if event else "type"):
            problems.append(
                f"grain {body['grain']}, but its queries are {'event' if event else 'type'}-grained "
                "(adjacent predicates or negation make a group event-grained)"
            )
        return problems + template_problems(body["template"], members, entries)

    def supports(self, group: Mapping[str, Any], queries: Sequence[CompiledQuery]) -> str | None:
        variables = group["body"]["variables"]
        if graph.uses_graph(queries):
            return graph.supports(queries, variables)
        return typed.supports(queries, variables)

    def new_stats(self, per_window: bool = False) -> SharedStats:
        return SharedStats(per_window={} if per_window else None)

    def run(self, group: Mapping[str, Any], data: GroupInput, stats: Any) -> GroupResults:
        body = group["body"]
        variables = body["variables"]
        stats = stats if stats is not None else SharedStats()
        # the shared variable's mask is left unpruned: queries with the same predicates on it
        # then match the same events everywhere (one class, the shared update); in a partition
        # where a query has no trend its state never becomes a result
        masks = {q.name: data.pruned(q.name, frozenset({variables[q.name]})) for q in data.queries}
        if graph.uses_graph(data.queries):
            return graph.run_group(data.queries, variables, masks, data.idx, data.ts, data.attrs, data.kid, stats)
        snapshot_cost = float(group["parameters"]["snapshot_cost"])
        return typed.run_group(
            data.queries, variables, masks, data.idx, data.ts, data.attrs, data.kid, stats,
            dynamic=body["decision"] == "dynamic", snapshot_cost=snapshot_cost,
        )

    def summary(self, stats: SharedStats) -> str:
        return (f"{stats.shared_events} events of the shared type in {stats.windows} windows, "
                f"{stats.shared_bursts} bursts shared, {stats.split_bursts} split, {stats.snapshots} snapshots")

    def report(self, group: Mapping[str, Any], stats: SharedStats) -> dict[str, Any]:
        totals = {k: getattr(stats, k) for k in (
            "windows", "graphlets", "bursts", "shared_events", "snapshots", "rebases",
            "shared_bursts", "split_bursts", "event_snapshots")}
        windows = windows_detail(group, stats.per_window,
                                 ("bursts", "shared", "split", "event_snapshots", "snapshots"))
        return {"decision": group["body"]["decision"], **totals, "windows_detail": windows}

    def describe(self, group: Mapping[str, Any]) -> list[str]:
        body = group["body"]
        if body["grain"] == "event":
            how = f"one event-grained graph of {body['type']}, every burst shared"
        else:
            how = f"{body['decision']} decision, snapshots at {' and '.join(body['snapshots'])} level"
        return [
            f"{len(group['queries'])} queries share {body['type']}+ ({how})",
            "queries: " + ", ".join(f"{q} ({body['variables'][q]})" for q in group["queries"]),
        ]

    # format version 2 kept these beside the envelope's fields
    V2_FIELDS = ("variables", "type", "decision", "snapshots", "template")

    def upgrade(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], version: int) -> Mapping[str, Any]:
        """Version 2: the body's fields move into ``body``, with the grain the queries give
        (event-grained when one of them has adjacent predicates or negation)."""
        if version != 2 or "body" in group:
            return group
        body = {k: group[k] for k in self.V2_FIELDS if k in group}
        members = [entries.get(q) or {} for q in group.get("queries") or []]
        event = any(e.get("adjacent_predicates") or e.get("negations") for e in members)
        body["grain"] = "event" if event else "type"
        return {**{k: v for k, v in group.items() if k not in self.V2_FIELDS}, "body": body}

    def template(self, group: Mapping[str, Any]) -> Mapping[str, Any]:
        return {**group["body"]["template"], "shared": [group["body"]["type"]]}


KLEENE = KleeneKind()
