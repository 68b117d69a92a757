"""The GLORIA workload model: queries over a template of event types, cut into *units*.

A query's template (``optimizer.plan.query_entry``: ``variables``, ``template``) is a
graph over its event types. Its strongly connected parts are its *blocks*: an event type
alone, or a Kleene cycle (a self-loop ``B+``, a flat cycle ``SEQ(A, B)+``, or a nested
one ``SEQ(C, SEQ(A, B)+, D)+`` -- the whole strongly connected part, inner cycles
included). The language has no disjunction, so the blocks of a query form a chain and
consecutive blocks are joined by one transition. The *units* of a query, in order, are
the transitions between its blocks (``seq`` units, one per (from, to) type pair of the
workload) and its Kleene blocks (``kleene`` units, one per distinct set of internal
transitions): ``SEQ(A, B+, C)`` is ``A>B``, ``K[B>B]``, ``B>C``. A unit's *pool* holds its
candidate transition sharing plans (the paper's ``Pool(E_i, E_j)``; a Kleene unit's pool
holds the cycle paths of §6 as single nodes).

Decisions where the paper is silent or ambiguous:

* Sharable set. Two queries may be in one Q-set of a unit only when they agree on its
  *key*: the same ``partition_by``, window (length and slide) and semantics, the same
  local predicates on each event type of the unit and the same adjacent predicates on
  its transitions (compared with variables renamed to their types). The paper's
  snapshots carry each query's own value, so different predicates on *other* types do
  not stop sharing; different predicates on the unit's own types would (an event that
  matches one query and not the other cannot be propagated once for both).
* A query is planned *alone* (one unit of its own, never shared, costed by Eq. 2) when
  its semantics is not ``skip-till-any-match`` (the paper's online aggregation), it has a
  negation, an event type occurs in it twice (the paper's assumption 2), or its template
  is not a chain of blocks (not produced by the language, checked anyway).
* A Kleene unit is shared only by queries with the same cycle (the paper's assumption
  1): ``SEQ(A, B)+`` and ``SEQ(C, SEQ(A, B)+)+`` have different blocks and do not share
  the inner cycle.
* Rates are events per window (of the query's partition) per event type; a query's
  count of a type is the rate times its selectivity on that variable (1 unless given).
  A Q-set's count of a type is the largest count of its members (they have the same
  predicates on the unit's types, so equal counts unless the caller says otherwise).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.query import canonical_predicates
from trendlake.optimizer.errors import OptimizerError

__all__ = ["Query", "Unit", "Workload", "from_entries"]

ANY = "skip-till-any-match"


@dataclass(frozen=True)
class Unit:
    """A transition between two blocks (``seq``), a Kleene block (``kleene``), or the whole
    template of a query planned alone (``alone``). Types are labels: an alone query's
    labels are ``query/variable`` so that nothing else ever meets them."""

    id: str
    kind: str
    transitions: tuple[tuple[str, str], ...]
    types: tuple[str, ...]

    @property
    def source(self) -> str:
        return self.transitions[0][0]

    @property
    def target(self) -> str:
        return self.transitions[0][1]


@dataclass(frozen=True)
class Query:
    """One query: its units in order, start and end labels, counts and keys."""

    name: str
    units: tuple[str, ...]
    start: tuple[str, ...]
    end: tuple[str, ...]
    counts: Mapping[str, float]  # label -> events per window that match the query
    keys: Mapping[str, Any]  # unit id -> sharing key
    labels: Mapping[str, str]  # label -> event type
    alone: str | None = None  # why the query is planned alone, or None

    def count(self, label: str) -> float:
        return self.counts[label]


@dataclass(frozen=True)
class Workload:
    """Queries and their units; ``order`` lists units so that a unit comes after the units
    before it in every query where that is possible (cycles among units are cut)."""

    queries: tuple[Query, ...]
    units: Mapping[str, Unit]
    order: tuple[str, ...]
    members: Mapping[str, tuple[str, ...]] = field(repr=False)  # unit -> queries, workload order
    by_name: Mapping[str, Query] = field(repr=False)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)  # memoised counts

    def prev(self, query: str, unit: str) -> str | None:
        """The unit before ``unit`` in ``query``, or None where the query starts with it."""
        units = self.by_name[query].units
        i = units.index(unit)
        return units[i - 1] if i else None

    def next(self, query: str, unit: str) -> str | None:
        units = self.by_name[query].units
        i = units.index(unit)
        return units[i + 1] if i + 1 < len(units) else None

    def boundary(self, unit: str, prev: str) -> str:
        """The event type at which ``prev`` hands over to ``unit``."""
        u, v = self.units[prev], self.units[unit]
        return v.source if v.kind == "seq" else u.target


def _sccs(nodes: list[str], edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan), in reverse topological order."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for n in nodes:
        if n not in index:
            visit(n)
    return out


def _chain(types: list[str], trans: list[tuple[str, str]]) -> list[tuple[frozenset[str], frozenset[tuple[str, str]]]] | None:
    """The query's blocks in order, or None when they do not form a chain joined by one
    transition each."""
    comps = list(reversed(_sccs(types, trans)))
    where = {t: i for i, comp in enumerate(comps) for t in comp}
    between: dict[int, list[tuple[str, str]]] = {}
    inner: list[set[tuple[str, str]]] = [set() for _ in comps]
    for a, b in trans:
        ia, ib = where[a], where[b]
        if ia == ib:
            inner[ia].add((a, b))
        elif ib != ia + 1:
            return None
        else:
            between.setdefault(ia, []).append((a, b))
    if any(len(between.get(i, [])) != 1 for i in range(len(comps) - 1)):
        return None
    return [(frozenset(c), frozenset(inner[i])) for i, c in enumerate(comps)]


def _kleene_id(inner: frozenset[tuple[str, str]]) -> str:
    return "K[" + ",".join(f"{a}>{b}" for a, b in sorted(inner)) + "]"


def from_entries(
    entries: list[dict[str, Any]],
    rates: Mapping[str, float],
    selectivity: Mapping[tuple[str, str], float] | None = None,
) -> Workload:
    """The GLORIA workload of the plan's query entries under ``rates`` (event type ->
    events per window) and ``selectivity`` ((query, variable) -> fraction, default 1)."""
    selectivity = selectivity or {}
    missing = sorted({v["type"] for e in entries for v in e["variables"] if not v["negated"]} - set(rates))
    if missing:
        raise OptimizerError(f"GLORIA needs a rate for every event type: none for {', '.join(missing)}")
    bad = sorted(t for t, r in rates.items() if not (isinstance(r, (int, float)) and r >= 0 and r == r and r != float("inf")))
    if bad:
        raise OptimizerError(f"GLORIA rates must be finite numbers >= 0: {', '.join(bad)}")
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        raise OptimizerError("GLORIA: query names must be unique")
    units: dict[str, Unit] = {}
    queries: list[Query] = []
    for e in entries:
        queries.append(_query(e, rates, selectivity, units))
    members: dict[str, list[str]] = {u: [] for u in units}
    for q in queries:
        for u in q.units:
            members[u].append(q.name)
    order = _order(list(units), queries)
    return Workload(tuple(queries), dict(units), tuple(order),
                    {u: tuple(m) for u, m in members.items()}, {q.name: q for q in queries})



def _query(e: dict[str, Any], rates: Mapping[str, float], selectivity: Mapping[tuple[str, str], float],
           units: dict[str, Unit]) -> Query:
    name = e["name"]
    positive = [v for v in e["variables"] if not v["negated"]]
    type_of = {v["name"]: v["type"] for v in positive}
    tpl = e["template"]
    trans_v = [(t["from"], t["to"]) for t in tpl["transitions"]]
    alone = None
    if e["semantics"] != ANY:
        alone = f"{e['semantics']} (GLORIA shares skip-till-any-match)"
    elif e.get("negations") or tpl.get("start_negations") or tpl.get("end_negations"):
        alone = "a negation"
    elif len(set(type_of.values())) != len(type_of):
        alone = "an event type occurs twice"
    chain = None
    if alone is None:
        chain = _chain(list(type_of), trans_v)
        if chain is None:
            alone = "its template is not a chain of blocks"
    sel = {v: float(selectivity.get((name, v), 1.0)) for v in type_of}
    if alone is not None:
        label = {v: f"{name}/{v}" for v in type_of}
        uid = f"alone:{name}"
        trans = tuple((label[a], label[b]) for a, b in trans_v)
        if trans:
            units[uid] = Unit(uid, "alone", trans, tuple(label[v] for v in type_of))
        return Query(name, (uid,) if trans else (), tuple(label[v] for v in tpl["start"]),
                     tuple(label[v] for v in tpl["end"]),
                     {label[v]: rates[type_of[v]] * sel[v] for v in type_of}, {uid: ("alone", name)},
                     {label[v]: type_of[v] for v in type_of}, alone)
    assert chain is not None
    var_of = {t: v for v, t in type_of.items()}
    roles = {v: t for v, t in type_of.items()}
    local = e.get("local_predicates", {})
    adjacent: dict[tuple[str, str], list[Any]] = {}
    for a in e.get("adjacent_predicates", []):
        adjacent.setdefault((type_of[a["from"]], type_of[a["to"]]), []).append(a["expr"])
    base = (tuple(e["partition_by"]), e["window"]["within_us"], e["window"]["slide_us"], e["semantics"])

    def key(types: Iterable[str], trans: Iterable[tuple[str, str]]) -> Any:
        preds = tuple((t, canonical_predicates(local.get(var_of[t], []), roles)) for t in sorted(types))
        adj = tuple((p, canonical_predicates(adjacent[p], roles)) for p in sorted(trans) if p in adjacent)
        return (*base, preds, adj)

    blocks = [(frozenset(type_of[v] for v in c), frozenset((type_of[a], type_of[b]) for a, b in inner))
              for c, inner in chain]
    order: list[str] = []
    keys: dict[str, Any] = {}
    between = {(type_of[a], type_of[b]) for a, b in trans_v}
    for i, (types, inner) in enumerate(blocks):
        if i:
            prev_types = blocks[i - 1][0]
            (pair,) = [p for p in between if p[0] in prev_types and p[1] in types]
            uid = f"{pair[0]}>{pair[1]}"
            units.setdefault(uid, Unit(uid, "seq", (pair,), pair))
            order.append(uid)
            keys[uid] = key(pair, [pair])
        if inner:
            uid = _kleene_id(inner)
            units.setdefault(uid, Unit(uid, "kleene", tuple(sorted(inner)), tuple(sorted(types))))
            order.append(uid)
            keys[uid] = key(types, inner)
    return Query(name, tuple(order), tuple(type_of[v] for v in tpl["start"]), tuple(type_of[v] for v in tpl["end"]),
                 {type_of[v]: rates[type_of[v]] * sel[v] for v in type_of}, keys,
                 {t: t for t in type_of.values()}, None)


def _order(units: list[str], queries: list[Query]) -> list[str]:
    """Units in an order that follows every query's chain where the chains agree (a DFS
    topological order; a unit graph with a cycle keeps the DFS order)."""
    succ: dict[str, list[str]] = {u: [] for u in units}
    for q in queries:
        for a, b in zip(q.units, q.units[1:], strict=False):
            if b not in succ[a]:
                succ[a].append(b)
    state: dict[str, int] = {}
    post: list[str] = []
    for root in units:
        if root in state:
            continue
        stack = [(root, iter(succ[root]))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next((w for w in it if w not in state), None)
            if nxt is None:
                stack.pop()
                state[node] = 2
                post.append(node)
            else:
                state[nxt] = 1
                stack.append((nxt, iter(succ[nxt])))
    return post[::-1]
