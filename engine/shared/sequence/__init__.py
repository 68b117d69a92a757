"""The ``sequence`` sharing kind (GLORIA): queries sharing the propagation along transitions.

The body (``schemas/kinds/sequence.json``) names each query's variable of each
event type, and per transition ``from -> to`` of the merged template the
Q-sets that share it, each with the event type of its snapshots. ``body``
resolves the Q-sets into snapshot spaces and checks the rules; ``run``
executes them (symbolic expressions over snapshots, shared per Q-set);
``compiled`` is the same pass in C for groups of count states.
docs/plan-format.md, "Sharing", states the rules; docs/engine.md, "Shared
sequence execution", why the results are exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trendlake.engine.query import ANY, CompiledQuery
from trendlake.engine.shared.base import GroupInput, GroupResults, KindBase, windows_detail
from trendlake.engine.shared.sequence import compiled
from trendlake.engine.shared.sequence.body import resolve, shape_of_entry, shape_of_query
from trendlake.engine.shared.sequence.run import SequenceStats, run_group
from trendlake.engine.shared.template import template_problems

__all__ = ["SEQUENCE", "SequenceKind", "SequenceStats"]


class SequenceKind(KindBase):
    """Checks, runs, reports and explains ``sequence`` groups (the ``Kind`` contract)."""

    name = "sequence"

    def check(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
        body = group["body"]
        members = list(group["queries"])
        if set(body["variables"]) != set(members):
            return ["variables must name exactly its queries"]
        problems: list[str] = []
        for name in members:
            types = {v["name"]: v["type"] for v in entries[name]["variables"] if not v["negated"]}
            stated = body["variables"][name]
            if set(stated) != set(types.values()):
                problems.append(f"variables of {name} must name each of its types "
                                f"({', '.join(sorted(set(types.values())))}) once")
            for t, var in sorted(stated.items()):
                if types.get(var) != t:
                    problems.append(f"variable {name}.{var} is not a positive variable of type {t}")
        for entry in body["transitions"]:
            for qset in entry["qsets"]:
                for q in qset["queries"]:
                    if q not in members:
                        where = "the group" if q in entries else "the plan"
                        problems.append(f"the Q-set of {entry['from']} -> {entry['to']} names query {q}, "
                                        f"which is not in {where}")
        if problems:
            return problems
        _, problems = resolve(body, {q: shape_of_entry(entries[q]) for q in members})
        return problems + template_problems(body["template"], members, entries)

    def supports(self, group: Mapping[str, Any], queries: Sequence[CompiledQuery]) -> str | None:
        first = queries[0]
        for q in queries:
            if q.semantics != ANY:
                return f"query {q.name}: {q.semantics} is not shared (skip-till-any-match only)"
            if (q.within, q.slide, q.partition_by) != (first.within, first.slide, first.partition_by):
                return f"query {q.name}: windows or partitioning differ within the group"
            if q.has_adjacent or q.has_negation:
                return f"query {q.name}: adjacent predicates or negation (sequence groups are type-grained)"
            if len({q.variables[v].type for v in q.positive}) != len(q.positive):
                return f"query {q.name}: a type occurs more than once"
            stated = group["body"]["variables"].get(q.name, {})
            if any(stated.get(q.variables[v].type) != v for v in q.positive):
                return f"query {q.name}: its variables differ from the group's"
        _, problems = resolve(group["body"], {q.name: shape_of_query(q) for q in queries})
        return problems[0] if problems else None

    def new_stats(self, per_window: bool = False) -> SequenceStats:
        return SequenceStats(per_window={} if per_window else None)

    def run(self, group: Mapping[str, Any], data: GroupInput, stats: Any) -> GroupResults:
        spaces, problems = resolve(group["body"], {q.name: shape_of_query(q) for q in data.queries})
        assert not problems, problems  # supports() refused such groups
        stats = stats if stats is not None else SequenceStats()
        got = compiled.run(spaces, data, stats)  # states of counts only
        stats.executor = "compiled" if got is not None else "python"
        return got if got is not None else run_group(spaces, data, stats)

    def summary(self, stats: SequenceStats) -> str:
        return (f"{stats.shared} propagations shared instead of {stats.alone}, {stats.own} per query, "
                f"{stats.split} split, {stats.snapshots} snapshots in {stats.windows} windows")

    def report(self, group: Mapping[str, Any], stats: SequenceStats) -> dict[str, Any]:
        totals = {k: getattr(stats, k) for k in (
            "windows", "shared", "alone", "own", "split", "snapshots", "evaluations", "recomputed", "executor")}
        windows = windows_detail(group, stats.per_window, ("shared", "alone", "own"))
        by_type = {t: {"shared": c[0], "alone": c[1], "own": c[2]} for t, c in sorted(stats.by_type.items())}
        return {**totals, "by_type": by_type, "windows_detail": windows}

    def describe(self, group: Mapping[str, Any]) -> list[str]:
        lines = [f"{len(group['queries'])} queries share transitions (GLORIA)"]
        for entry in group["body"]["transitions"]:
            qsets = "; ".join(f"({', '.join(qs['queries'])})^{qs['snapshots']}" for qs in entry["qsets"])
            lines.append(f"{entry['from']} -> {entry['to']}: {qsets}")
        return lines

    def template(self, group: Mapping[str, Any]) -> Mapping[str, Any]:
        shared = sorted({e["to"] for e in group["body"]["transitions"]
                         if any(len(qs["queries"]) > 1 for qs in e["qsets"])})
        return {**group["body"]["template"], "shared": shared}


SEQUENCE = SequenceKind()
