"""Candidates of the ``kleene`` kind: sets of queries that may share a Kleene sub-pattern.

Works on the plan's query entries (``optimizer.plan.query_entry``), the same
data the engine reads. Hamlet (Def. 4-5): queries can share the trend
aggregation of a Kleene sub-pattern ``K+`` when they have the same
partitioning, semantics and windows and the same type ``K``. Type-grained
queries (no adjacent predicates) share whatever their local predicates on
``K``: where those differ, snapshots at event level keep each query's
aggregates apart (Hamlet Def. 9). Queries with adjacent predicates share the
event-grained graph of ``K`` when they match and connect the same events of
``K`` (equal local predicates on ``K`` and equal adjacent predicates on ``K ->
K``) and no adjacent predicate leads into or out of ``K``. What the shared
executor supports today (docs/plan-format.md, "Sharing"):
skip-till-any-match, every type at most once per pattern, templates whose
only cycles are Kleene self-loops, negation only away from ``K`` (not on a
transition into, out of or within ``K``, no leading NOT when ``K`` starts the
pattern, no trailing NOT when it ends it; such queries share the
event-grained graph); every aggregate function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.query import ANY, canonical_predicates, has_cycle
from trendlake.engine.shared.template import merged_template
from trendlake.optimizer.groups import make_group

__all__ = ["KIND", "Candidate", "candidates", "counts_only", "eligible", "group"]

KIND = "kleene"


@dataclass
class Candidate:
    """Queries that can share the Kleene sub-pattern of one type."""

    type: str
    variables: dict[str, str]  # query -> its variable of the shared type
    key: tuple[Any, ...] = field(repr=False)

    @property
    def queries(self) -> list[str]:
        return list(self.variables)

    @property
    def graph(self) -> bool:
        """Whether the queries share the event-grained graph of K (they have adjacent predicates)."""
        return "graph" in self.key[1]

    def forced_group(self, entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]) -> dict[str, Any]:
        """``queries`` sharing K whatever it costs, every burst shared, with the constants of
        the executor that will run it (the compiled pass for type-grained counts)."""
        from trendlake.optimizer.cost import PYTHON_SNAPSHOT_COST, typed_pass_parameters

        if not self.graph and all(counts_only(entries[q]) for q in queries):
            parameters = typed_pass_parameters()
        else:
            parameters = {"snapshot_cost": PYTHON_SNAPSHOT_COST}
        return group(entries, {q: self.variables[q] for q in queries}, self.type, graph=self.graph,
                     decision="static", same_predicates=False, parameters=parameters,
                     estimated_cost=(0.0, 0.0))


def counts_only(entry: Mapping[str, Any]) -> bool:
    """Whether a query's window state holds counts only (COUNT(*), COUNT(E)): the compiled
    shared pass runs its type-grained groups."""
    return all(a["fn"] in ("count_star", "count") for a in entry["aggregates"])


def eligible(entry: dict[str, Any]) -> str | None:
    """None when a query can take part in a shared Kleene group, else why not."""
    name = entry["name"]
    if entry["semantics"] != ANY:
        return f"query {name}: {entry['semantics']} (only skip-till-any-match is shared)"
    positive = [v for v in entry["variables"] if not v["negated"]]
    if len({v["type"] for v in positive}) != len(positive):
        return f"query {name}: a type occurs more than once"
    if has_cycle((t["from"], t["to"]) for t in entry["template"]["transitions"]):
        return f"query {name}: nested Kleene (a cycle through several variables)"
    return None


def candidates(entries: list[dict[str, Any]], same_predicates: bool = False) -> list[Candidate]:
    """Every set of two or more eligible queries sharing a Kleene sub-pattern, largest first.

    The queries of a set may have different local predicates on the shared type (the
    executor then keeps a query out of an update whose events it does not match);
    ``same_predicates`` asks for sets whose queries match exactly the same events."""
    found: dict[tuple[Any, ...], Candidate] = {}
    for entry in entries:
        if eligible(entry) is not None:
            continue
        loops = {t["from"] for t in entry["template"]["transitions"] if t["from"] == t["to"]}
        types = {v["name"]: v["type"] for v in entry["variables"]}
        adjacent: dict[tuple[str, str], list[Any]] = {}
        for a in entry.get("adjacent_predicates", []):
            adjacent.setdefault((a["from"], a["to"]), []).append(a["expr"])
        template = entry["template"]
        negated_at = {(t["from"], t["to"]) for t in template["transitions"] if t.get("negations")}
        for var in sorted(loops):
            if any((src == var) != (dst == var) for src, dst in adjacent):
                continue  # an adjacent predicate into or out of K: not shared
            if any(var in pair for pair in negated_at):
                continue  # a negation into, out of or within K
            if (template.get("start_negations") and var in template["start"]) or (
                    template.get("end_negations") and var in template["end"]):
                continue  # a leading or trailing NOT next to K
            event_grained = bool(adjacent or entry.get("negations"))
            matching: tuple[Any, ...] = ()
            if event_grained or same_predicates:
                # the event-grained graph is shared by queries matching the same events of K
                matching = (
                    canonical_predicates(
                        [entry.get("local_predicates", {}).get(var, []),
                         sorted(entry.get("required_attributes", {}).get(var, []))],
                        {var: "$"},
                    ),
                )
            if event_grained:
                matching += (
                    "graph",
                    canonical_predicates(adjacent.get((var, var), []), {var: "$src"}) if (var, var) in adjacent else "",
                )
            key = (
                types[var],
                matching,
                tuple(entry["partition_by"]),
                entry["window"]["within_us"],
                entry["window"]["slide_us"],
                entry["semantics"],
            )
            cand = found.setdefault(key, Candidate(types[var], {}, key))
            cand.variables[entry["name"]] = var
    out = [c for c in found.values() if len(c.variables) >= 2]
    out.sort(key=lambda c: (-len(c.variables), c.type, c.key[3:]))
    return out


def group(
    entries: Mapping[str, Mapping[str, Any]],
    variables: Mapping[str, str],
    shared_type: str,
    *,
    graph: bool,
    decision: str,
    same_predicates: bool,
    parameters: Mapping[str, float],
    estimated_cost: tuple[float, float],
) -> dict[str, Any]:
    """A ``kleene`` group of the queries ``variables`` names (query -> its variable of
    ``shared_type``): event-grained (``graph``) or type-grained with snapshots at graphlet
    level, and at event level too when the queries' predicates on the type differ."""
    body = {
        "type": shared_type,
        "variables": dict(variables),
        "grain": "event" if graph else "type",
        "decision": decision,
        "snapshots": ["graphlet"] if graph or same_predicates else ["graphlet", "event"],
        "template": merged_template(entries, list(variables)),
    }
    return make_group(KIND, list(variables), entries, body, parameters, estimated_cost)
