"""Merged templates (Hamlet Fig. 3): a building block of the sharing kinds.

A group's merged template lists each event type once: every start type, end
type and transition ``from -> to`` (between types) with the queries whose own
templates have it. The optimizer writes it (``merged_template``) and a kind
checks the one a plan states against its queries (``template_problems``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trendlake.engine.errors import brief

__all__ = ["merged_template", "template_problems", "template_sets"]


def merged_template(entries: Mapping[str, Mapping[str, Any]], members: Sequence[str]) -> dict[str, Any]:
    """The merged template of the queries ``members`` (plan query entries by name), sorted by
    type, each entry naming its queries in the order of ``members``."""
    sets = template_sets(entries, members)
    order = {q: i for i, q in enumerate(members)}

    def names(qs: set[str]) -> list[str]:
        return sorted(qs, key=order.__getitem__)

    return {
        "start": [{"type": k[0], "queries": names(qs)} for k, qs in sorted(sets["start"].items())],
        "end": [{"type": k[0], "queries": names(qs)} for k, qs in sorted(sets["end"].items())],
        "transitions": [{"from": k[0], "to": k[1], "queries": names(qs)} for k, qs in sorted(sets["transitions"].items())],
    }


def template_sets(queries: Mapping[str, Mapping[str, Any]], members: Sequence[str]) -> dict[str, dict[tuple[str, ...], set[str]]]:
    """The merged template a group's queries give (Hamlet Fig. 3), by section: each start and
    end type ``(type,)`` and each transition ``(from type, to type)`` with the queries it serves."""
    out: dict[str, dict[tuple[str, ...], set[str]]] = {"start": {}, "end": {}, "transitions": {}}
    for name in members:
        q = queries[name]
        types = {v["name"]: v["type"] for v in q["variables"]}
        for part in ("start", "end"):
            for v in q["template"][part]:
                out[part].setdefault((types.get(v, v),), set()).add(name)
        for t in q["template"]["transitions"]:
            out["transitions"].setdefault((types.get(t["from"], t["from"]), types.get(t["to"], t["to"])), set()).add(name)
    return out


def template_problems(template: Mapping[str, Any], members: Sequence[str], queries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """How a group's ``template`` differs from the merged template of its queries' templates:
    every query it names is one of the group's, no entry is listed twice, and each start type,
    end type and transition serves exactly the group's queries whose own templates have it."""
    members = list(members)
    derived = template_sets(queries, members)
    if not any(template[part] for part in derived):
        return [f"the template is empty, but its queries' templates have "
                f"{sum(len(d) for d in derived.values())} start types, end types and transitions"]
    problems: list[str] = []
    for part in ("start", "end", "transitions"):
        stated: dict[tuple[str, ...], set[str]] = {}
        for entry in template[part]:
            key = (entry["from"], entry["to"]) if part == "transitions" else (entry["type"],)
            what = f"transition {key[0]} -> {key[1]}" if part == "transitions" else f"{part} type {key[0]}"
            if key in stated:
                problems.append(f"the template lists {what} twice")
            if len(set(entry["queries"])) != len(entry["queries"]):
                problems.append(f"the template's {what} names a query twice")
            for name in entry["queries"]:
                if name not in members:
                    where = "the group" if name in queries else "the plan"
                    problems.append(f"the template's {what} names query {brief(name)}, "
                                    f"which is not in {where}")
            stated.setdefault(key, set()).update(entry["queries"])
        for key in sorted(set(stated) | set(derived[part])):
            want = derived[part].get(key, set())
            got = stated.get(key, set()) & set(members)
            if got != want:
                what = f"transition {key[0]} -> {key[1]}" if part == "transitions" else f"{part} type {key[0]}"
                problems.append(
                    f"the template's {what} serves {brief(sorted(got) or 'no query')}, "
                    f"but the templates of its queries give {brief(sorted(want) or 'no query')}"
                )
    return problems


