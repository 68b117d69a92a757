"""Candidates of the ``sequence`` kind (GLORIA): queries that may share transitions of SEQ and
nested-Kleene sub-patterns.

A query may take part when the engine's ``sequence`` executor runs it
(docs/plan-format.md, "Sharing", kind ``sequence``): skip-till-any-match,
type-grained (no adjacent predicate), no negation, each positive type once.
Queries can share only with the same partitioning and windows (the group's
envelope), so a candidate is such a set of two or more eligible queries of
which every one has a transition (between types) that another one has too.
Which transitions they share, with which snapshots, is the planner's
(``optimizer.planners.gloria``); ``forced_group`` shares each transition by
all its queries, with snapshots of the transition's source type (a root
Q-set, valid whatever the queries' other transitions do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendlake.engine.query import ANY
from trendlake.engine.shared.template import merged_template
from trendlake.optimizer.groups import make_group

__all__ = ["KIND", "Candidate", "candidates", "eligible", "group", "transitions_of"]

KIND = "sequence"


def eligible(entry: Mapping[str, Any]) -> str | None:
    """None when a query can take part in a ``sequence`` group, else why not."""
    name = entry["name"]
    if entry["semantics"] != ANY:
        return f"query {name}: {entry['semantics']} (only skip-till-any-match is shared)"
    if entry.get("adjacent_predicates"):
        return f"query {name}: adjacent predicates (event-grained)"
    if any(v["negated"] for v in entry["variables"]) or entry.get("negations"):
        return f"query {name}: negation"
    positive = [v["type"] for v in entry["variables"] if not v["negated"]]
    if len(set(positive)) != len(positive):
        return f"query {name}: a type occurs more than once"
    return None


def transitions_of(entry: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The query's transitions between event types."""
    types = {v["name"]: v["type"] for v in entry["variables"]}
    return {(types[t["from"]], types[t["to"]]) for t in entry["template"]["transitions"]}


@dataclass
class Candidate:
    """Eligible queries of one partitioning and windows, each sharing a transition with another."""

    queries: list[str]

    def forced_group(self, entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]) -> dict[str, Any]:
        """Each transition shared by all of ``queries`` that have it, snapshots of its source."""
        by_transition: dict[tuple[str, str], list[str]] = {}
        for q in queries:
            for t in sorted(transitions_of(entries[q])):
                by_transition.setdefault(t, []).append(q)
        qsets = {t: [(qs, t[0])] for t, qs in by_transition.items()}
        return group(entries, list(queries), qsets, parameters={}, estimated_cost=(0.0, 0.0))


def candidates(entries: list[dict[str, Any]]) -> list[Candidate]:
    """Every set of two or more eligible queries of one partitioning and windows whose members
    each share a transition with another member, largest first."""
    by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for e in entries:
        if eligible(e) is None:
            key = (tuple(e["partition_by"]), e["window"]["within_us"], e["window"]["slide_us"])
            by_key.setdefault(key, []).append(e)
    out = []
    for members in by_key.values():
        count: dict[tuple[str, str], int] = {}
        for e in members:
            for t in transitions_of(e):
                count[t] = count.get(t, 0) + 1
        sharing = [e["name"] for e in members if any(count[t] > 1 for t in transitions_of(e))]
        if len(sharing) >= 2:
            out.append(Candidate(sharing))
    out.sort(key=lambda c: -len(c.queries))
    return out


def group(
    entries: Mapping[str, Mapping[str, Any]],
    queries: list[str],
    qsets: Mapping[tuple[str, str], Sequence[tuple[Sequence[str], str]]],
    *,
    parameters: Mapping[str, float],
    estimated_cost: tuple[float, float],
) -> dict[str, Any]:
    """A ``sequence`` group of ``queries``: ``qsets[(from type, to type)]`` lists the
    transition's Q-sets as (queries, snapshot type), every transition of every query in one."""
    variables = {q: {v["type"]: v["name"] for v in entries[q]["variables"] if not v["negated"]} for q in queries}
    body = {
        "variables": variables,
        "transitions": [{"from": a, "to": b, "qsets": [{"queries": list(qs), "snapshots": snap} for qs, snap in sets]}
                        for (a, b), sets in sorted(qsets.items())],
        "template": merged_template(entries, queries),
    }
    return make_group(KIND, queries, entries, body, parameters, estimated_cost)
