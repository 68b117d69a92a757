"""The ``subsequence`` sharing kind (Sharon): fixed-length sequence queries sharing the counts of
common sub-sequences.

Sharon's decisions are the body's ``shared`` list: each chosen candidate's pattern (event types
``t1 .. tk``), its queries and where the pattern starts in each (``optimizer.sharon``). The shared
method (Sharon §III-C) computes a sub-sequence's counts once and combines them with each query's
prefix counts (at ``t1``) and suffix counts: exactly a Q-set of the pattern's queries on each
transition ``t(i) -> t(i+1)``, with snapshots of ``t1`` (GLORIA's form, ``engine.shared.sequence``),
every other transition a Q-set of one query. The body states that form too (``variables``,
``transitions``, ``template``), and the check holds it to ``shared``. A group of type-grained
count queries without repeated types runs on the prefix pass (``prefix``: the queries as a trie,
every common prefix counted once, on COGRA's count pass); any other on the sequence kind's
executor. docs/plan-format.md, "Sharing", kind ``subsequence``; docs/engine.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.query import CompiledQuery
from trendlake.engine.shared.base import GroupInput, GroupResults, KindBase
from trendlake.engine.shared.sequence import SEQUENCE, SequenceStats
from trendlake.engine.shared.subsequence import prefix

__all__ = ["SUBSEQUENCE", "SubsequenceKind", "SubsequenceStats", "shared_problems"]

_SEQUENCE_FIELDS = ("variables", "transitions", "template")


@dataclass
class SubsequenceStats(SequenceStats):
    """The sequence executor's record, and the prefix pass's."""

    prefix: prefix.PrefixStats = field(default_factory=prefix.PrefixStats)


def _as_sequence(group: Mapping[str, Any]) -> dict[str, Any]:
    """The group in the sequence kind's form (its Q-sets), which the sequence executor runs."""
    return {**group, "kind": SEQUENCE.name, "body": {k: group["body"][k] for k in _SEQUENCE_FIELDS}}


def shared_problems(body: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]],
                    members: Sequence[str]) -> list[str]:
    """What breaks the rules of ``shared``: each pattern of two or more types is its queries'
    positive types from its position on, a query's shared parts do not overlap, and the
    transitions inside a pattern are one Q-set of exactly its queries, every other Q-set one
    query's."""
    problems: list[str] = []
    inside: dict[tuple[str, str, str], frozenset[str]] = {}
    used: dict[str, set[int]] = {}
    for item in body["shared"]:
        pattern, queries, positions = list(item["pattern"]), list(item["queries"]), list(item["positions"])
        if len(positions) != len(queries):
            problems.append(f"shared {'/'.join(pattern)}: one position per query expected")
            continue
        for q, at in zip(queries, positions, strict=True):
            if q not in members:
                problems.append(f"shared {'/'.join(pattern)} names query {q}, which is not in the group")
                continue
            types = [v["type"] for v in entries[q]["variables"] if not v["negated"]]
            if types[at:at + len(pattern)] != pattern:
                problems.append(f"shared {'/'.join(pattern)} is not the types of {q} from position {at}")
            span = set(range(at, at + len(pattern) - 1))
            if used.setdefault(q, set()) & span:
                problems.append(f"query {q} shares overlapping sub-sequences")
            used[q] |= span
            for a, b in zip(pattern, pattern[1:], strict=False):
                inside[(q, a, b)] = frozenset(queries)
    for entry in body["transitions"]:
        for qset in entry["qsets"]:
            names = frozenset(qset["queries"])
            wanted = {inside.get((q, entry["from"], entry["to"]), frozenset({q})) for q in names}
            if wanted != {names}:
                problems.append(f"the Q-set ({', '.join(sorted(names))}) of {entry['from']} -> {entry['to']} "
                                "is not what shared states")
    return problems


class SubsequenceKind(KindBase):
    """Checks, runs, reports and explains ``subsequence`` groups (the ``Kind`` contract)."""

    name = "subsequence"

    def check(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
        problems = []
        for name in group["queries"]:
            e = entries[name]
            if any(t["from"] == t["to"] for t in e["template"]["transitions"]):
                problems.append(f"query {name}: a Kleene variable (Sharon shares fixed-length sequences)")
        problems += SEQUENCE.check(_as_sequence(group), entries)
        return problems or shared_problems(group["body"], entries, list(group["queries"]))

    def supports(self, group: Mapping[str, Any], queries: Sequence[CompiledQuery]) -> str | None:
        return SEQUENCE.supports(_as_sequence(group), queries)

    def new_stats(self, per_window: bool = False) -> SubsequenceStats:
        return SubsequenceStats(per_window={} if per_window else None)

    def run(self, group: Mapping[str, Any], data: GroupInput, stats: Any) -> GroupResults:
        got = prefix.run(data, getattr(stats, "prefix", None))
        if got is not None:
            if stats is not None:
                stats.executor = "prefix"
            return got
        return SEQUENCE.run(_as_sequence(group), data, stats)

    def summary(self, stats: SequenceStats) -> str:
        p = getattr(stats, "prefix", None)
        if p is None or not p.runs:
            return SEQUENCE.summary(stats)
        line = f"prefix pass: {p.variables} trie variables stepped for {p.query_variables} of its queries alone"
        return f"{line}; {SEQUENCE.summary(stats)}" if stats.windows else line

    def report(self, group: Mapping[str, Any], stats: SequenceStats) -> dict[str, Any]:
        p = getattr(stats, "prefix", None) or prefix.PrefixStats()
        return {**SEQUENCE.report(_as_sequence(group), stats),
                "prefix": {"runs": p.runs, "variables": p.variables, "query_variables": p.query_variables}}

    def describe(self, group: Mapping[str, Any]) -> list[str]:
        body = group["body"]
        lines = [f"{len(group['queries'])} queries share sub-sequences (Sharon, search {body['search']})"]
        for item in body["shared"]:
            at = ", ".join(f"{q}@{p}" for q, p in zip(item["queries"], item["positions"], strict=True))
            lines.append(f"SEQ({', '.join(item['pattern'])}) shared by {at}; benefit {item['benefit']:g}")
        graph = body.get("graph")
        if graph:
            lines.append(f"Sharon graph: {graph['vertices_total']} candidates, {graph['edges_total']} conflicts "
                         f"({len(body['shared'])} chosen)")
        return lines

    def graph(self, group: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return group["body"].get("graph")

    def template(self, group: Mapping[str, Any]) -> Mapping[str, Any]:
        return SEQUENCE.template(_as_sequence(group))


SUBSEQUENCE = SubsequenceKind()
