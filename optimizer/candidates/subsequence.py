"""Candidates of the ``subsequence`` kind (Sharon): fixed-length sequence queries with common
sub-sequences.

A query may take part when it is a fixed-length sequence (no Kleene variable) the engine's
sequence executor runs (``optimizer.candidates.sequence.eligible``: skip-till-any-match,
type-grained, no negation, each positive type once). Queries share only with the same
partitioning and windows, so a candidate is such a set of two or more queries of which every
one has two consecutive types that another one has too. Which sub-sequences they share is the
planner's (``optimizer.planners.sharon``: Sharon's searches); ``forced_group`` shares every
pair of consecutive types by all the queries that have it (Sharon's candidates of length 2,
which never conflict).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendlake.optimizer.candidates import sequence
from trendlake.optimizer.groups import make_group

__all__ = ["KIND", "Candidate", "Part", "candidates", "eligible", "group", "types_of"]

KIND = "subsequence"

# one shared sub-sequence: its pattern (types), queries, where it starts in each, its benefit
Part = tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...], float]


def types_of(entry: Mapping[str, Any]) -> list[str]:
    """The query's positive types in pattern order."""
    return [v["type"] for v in entry["variables"] if not v["negated"]]


def eligible(entry: Mapping[str, Any]) -> str | None:
    """None when a query can take part in a ``subsequence`` group, else why not."""
    why = sequence.eligible(entry)
    if why is None and any(t["from"] == t["to"] for t in entry["template"]["transitions"]):
        why = f"query {entry['name']}: a Kleene variable (Sharon shares fixed-length sequences)"
    return why


@dataclass
class Candidate:
    """Eligible queries of one partitioning and windows, each sharing two consecutive types
    with another."""

    queries: list[str]

    def forced_group(self, entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]) -> dict[str, Any]:
        """Every pair of consecutive types shared by all of ``queries`` that have it."""
        parts = [(pair, tuple(qs), tuple(at), 0.0) for pair, (qs, at) in _pairs(entries, queries).items()
                 if len(qs) >= 2]
        return group(entries, list(queries), parts, "greedy", parameters={}, estimated_cost=(0.0, 0.0))


def _pairs(entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]
           ) -> dict[tuple[str, ...], tuple[list[str], list[int]]]:
    out: dict[tuple[str, ...], tuple[list[str], list[int]]] = {}
    for q in queries:
        types = types_of(entries[q])
        for i, pair in enumerate(zip(types, types[1:], strict=False)):
            qs, at = out.setdefault(pair, ([], []))
            qs.append(q)
            at.append(i)
    return out


def candidates(entries: list[dict[str, Any]]) -> list[Candidate]:
    """Every set of two or more eligible queries of one partitioning and windows whose members
    each share two consecutive types with another member, largest first."""
    by_key: dict[tuple[Any, ...], list[str]] = {}
    for e in entries:
        if eligible(e) is None:
            key = (tuple(e["partition_by"]), e["window"]["within_us"], e["window"]["slide_us"])
            by_key.setdefault(key, []).append(e["name"])
    by_name = {e["name"]: e for e in entries}
    out = []
    for names in by_key.values():
        pairs = _pairs(by_name, names)
        sharing = [q for q in names if any(q in qs and len(qs) > 1 for qs, _ in pairs.values())]
        if len(sharing) >= 2:
            out.append(Candidate(sharing))
    out.sort(key=lambda c: -len(c.queries))
    return out


def group(entries: Mapping[str, Mapping[str, Any]], queries: list[str], parts: Sequence[Part], search: str, *,
          parameters: Mapping[str, float], estimated_cost: tuple[float, float],
          graph: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ``subsequence`` group of ``queries`` sharing ``parts``: each part's transitions in one
    Q-set of its queries with snapshots of the part's first type where the sequence kind takes
    that, else of each transition's source; every other transition a Q-set of one query.
    ``graph`` (``SharingPlan.graph_dict``): the Sharon graph the search chose from, for
    ``trendlake explain``."""
    from trendlake.engine.shared import kind_of

    shared = [{"pattern": list(p), "queries": list(qs), "positions": list(at), "benefit": round(float(b), 6)}
              for p, qs, at, b in parts]
    for snapshot_first in (True, False):
        qsets: dict[tuple[str, str], list[tuple[list[str], str]]] = {}
        inside: set[tuple[str, str, str]] = set()
        for pattern, qs, _, _ in parts:
            for a, b in zip(pattern, pattern[1:], strict=False):
                qsets.setdefault((a, b), []).append((list(qs), pattern[0] if snapshot_first else a))
                inside.update((q, a, b) for q in qs)
        for q in queries:
            types = types_of(entries[q])
            for a, b in zip(types, types[1:], strict=False):
                if (q, a, b) not in inside:
                    qsets.setdefault((a, b), []).append(([q], a))
        seq = sequence.group(entries, queries, qsets, parameters=parameters, estimated_cost=estimated_cost)
        body = {"search": search, "shared": shared, **seq["body"], **({"graph": dict(graph)} if graph else {})}
        made = make_group(KIND, queries, entries, body, parameters, estimated_cost)
        kind = kind_of(KIND)
        if kind is None or not kind.check(made, entries):
            return made
    return made
