"""A ``sequence`` group's body, resolved: Q-sets per transition grouped into snapshot spaces.

Every query of the group is reduced to its *shape*: its event types, start
types and transitions between types (each positive type once per query). A
Q-set on transition ``P -> V`` with snapshots of type ``E`` is a *node*:

- a *root* when ``E == P``: the values of ``P`` are snapshotted (per query of
  the Q-set) at every time stamp with events of ``P``, and ``V`` extends from
  the latest snapshot;
- otherwise it continues the expression of ``P``: every query of the Q-set has
  all its transitions into ``P`` in nodes of one space with snapshots of ``E``
  (and ``P`` is not one of its start types), so ``P``'s value is that space's
  symbolic expression alone.

A *space* is the set of nodes reached from the roots with the same queries and
snapshot type. Within a space, the nodes into one type ``V`` with the same
Q-set add to one expression of ``V``; a node continuing ``P`` reads the
space's expressions of ``P`` over Q-sets that hold each of its queries (a
Q-set may continue a larger one's expression, e.g. where some queries end,
but not gather several). ``resolve`` checks these rules
and returns the spaces, or the problems (one phrase each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.errors import brief

__all__ = ["Shape", "Space", "resolve", "shape_of_entry", "shape_of_query"]


@dataclass(frozen=True)
class Shape:
    """A query's template over event types: its types, start types and transitions."""

    types: frozenset[str]
    start: frozenset[str]
    transitions: frozenset[tuple[str, str]]


@dataclass
class Space:
    """Nodes sharing one snapshot type ``snapshot``: ``queries`` those of its root snapshots;
    per expression ``(type V, Q-set)`` (the nodes into ``V`` of one Q-set) its sources, each
    ``(P, None)`` for the latest snapshot (``P`` the snapshot type) or ``(P, Q-set')`` for the
    space's expression of ``P`` over a Q-set' holding every query of the Q-set."""

    key: tuple[frozenset[str], str]
    snapshot: str
    queries: frozenset[str]
    sources: dict[tuple[str, frozenset[str]], list[tuple[str, frozenset[str] | None]]] = field(default_factory=dict)

def shape_of_entry(entry: Mapping[str, Any]) -> Shape:
    """The shape of a plan query entry."""
    types = {v["name"]: v["type"] for v in entry["variables"] if not v["negated"]}
    tpl = entry["template"]
    return Shape(
        frozenset(types.values()),
        frozenset(types.get(v, v) for v in tpl["start"]),
        frozenset((types.get(t["from"], t["from"]), types.get(t["to"], t["to"])) for t in tpl["transitions"]),
    )


def shape_of_query(q: Any) -> Shape:
    """The shape of a compiled query."""
    types = {v: q.variables[v].type for v in q.positive}
    return Shape(
        frozenset(types.values()),
        frozenset(types[v] for v in q.start),
        frozenset((types[t.src], types[t.dst]) for t in q.transitions),
    )


def resolve(body: Mapping[str, Any], shapes: Mapping[str, Shape]) -> tuple[list[Space], list[str]]:
    """The spaces of ``body`` restricted to the queries ``shapes`` names, or the problems."""
    problems: list[str] = []
    nodes: list[tuple[str, str, frozenset[str], str]] = []  # (from, to, queries, snapshots)
    owner: dict[tuple[str, str, str], int] = {}  # (query, from, to) -> node
    for entry in body["transitions"]:
        p, v = entry["from"], entry["to"]
        for qset in entry["qsets"]:
            names = [q for q in qset["queries"] if q in shapes]
            for q in names:
                if (p, v) not in shapes[q].transitions:
                    problems.append(f"the Q-set of {p} -> {v} names query {q}, whose template has no {p} -> {v}")
                elif (q, p, v) in owner:
                    problems.append(f"query {q}'s transition {p} -> {v} is in two Q-sets")
                else:
                    owner[(q, p, v)] = len(nodes)
            if names:
                nodes.append((p, v, frozenset(names), qset["snapshots"]))
    for q, shape in shapes.items():
        for p, v in sorted(shape.transitions):
            if (q, p, v) not in owner:
                problems.append(f"query {q}'s transition {p} -> {v} is in no Q-set")
    if problems:
        return [], problems
    space_of = _assign(nodes, owner, shapes)
    return _spaces(nodes, space_of, owner, shapes)


def _into(owner: Mapping[tuple[str, str, str], int], q: str, p: str) -> list[int]:
    """The nodes of query ``q``'s transitions into type ``p``."""
    return [n for (qq, _, to), n in owner.items() if qq == q and to == p]


def _assign(nodes: Sequence[tuple[str, str, frozenset[str], str]], owner: Mapping[tuple[str, str, str], int],
            shapes: Mapping[str, Shape]) -> dict[int, tuple[frozenset[str], str]]:
    """Each node's space: roots their own, the others their source's (propagated until no
    change, so cycles of Kleene sub-patterns resolve); unreached nodes have none."""
    space_of: dict[int, tuple[frozenset[str], str]] = {
        i: (qs, e) for i, (p, _, qs, e) in enumerate(nodes) if p == e
    }
    changed = True
    while changed:
        changed = False
        for i, (p, _, qs, e) in enumerate(nodes):
            if i in space_of:
                continue
            found = {space_of[n] for q in qs for n in _into(owner, q, p) if n in space_of}
            found = {s for s in found if s[1] == e}
            if len(found) == 1:
                space_of[i] = found.pop()
                changed = True
    return space_of


def _spaces(nodes: Sequence[tuple[str, str, frozenset[str], str]], space_of: Mapping[int, tuple[frozenset[str], str]],
            owner: Mapping[tuple[str, str, str], int], shapes: Mapping[str, Shape]) -> tuple[list[Space], list[str]]:
    problems: list[str] = []
    spaces: dict[tuple[frozenset[str], str], Space] = {}
    for i, (p, v, qs, e) in enumerate(nodes):
        where = f"the Q-set {brief(sorted(qs))} of {p} -> {v}"
        if e not in set.intersection(*(set(shapes[q].types) for q in qs)):
            problems.append(f"{where} snapshots type {e}, which is not a type of each of its queries")
            continue
        key = space_of.get(i)
        if key is None:
            problems.append(f"{where} snapshots {e}, but the values of {p} are neither snapshots of {e} "
                            f"nor one Q-set's expression over them")
            continue
        if p != e:
            for q in sorted(qs):
                if p in shapes[q].start:
                    problems.append(f"{where} continues the expression of {p}, a start type of query {q}")
                elif {space_of.get(n) for n in _into(owner, q, p)} != {key}:
                    problems.append(f"{where} continues the expression of {p}, but query {q}'s transitions "
                                    f"into {p} are not all in that Q-set's space")
        space = spaces.setdefault(key, Space(key, key[1], key[0]))
        if p == e:
            space.sources.setdefault((v, qs), []).append((p, None))
            continue
        feeding = {nodes[n][2] for q in qs for n in _into(owner, q, p)}
        for other in sorted(feeding, key=sorted):
            if not qs <= other:
                problems.append(f"{where} continues the expression of {p} over {brief(sorted(other))}, "
                                f"which does not hold each of its queries")
            space.sources.setdefault((v, qs), []).append((p, other))
    return (list(spaces.values()), problems) if not problems else ([], problems)
