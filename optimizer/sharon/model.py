"""The Sharon workload model: fixed-length sequence queries, their sub-patterns and the
sharing candidates among them (Sharon §II-III, dissertation ch. 22 and 24).

A query in the model is a sequence pattern ``SEQ(E_1, ..., E_n)`` without Kleene: its
template (``optimizer.plan.query_entry``) is one path ``E_1 -> ... -> E_n`` through its
positive variables. A *sub-pattern* is a contiguous run ``E_m ... E_{m+l}`` of its types;
a **sharing candidate** ``(p, Q_p)`` is a sub-pattern ``p`` of length two or more and the
two or more queries that contain it (Def. 3) and may share it (their *key*, below).

Decisions where the paper is silent (ch. 24 relaxes its assumptions 2 and 3 in a few
sentences; these are the rules taken here):

* **Who may share** (ch. 24.2). Queries share ``p`` only with the same ``partition_by``
  (grouping and equivalence predicates), window length and slide, and, position by
  position of ``p``, the same local predicates and the same adjacent predicates between
  consecutive positions (variables renamed to the position in ``p``). A pattern with
  queries of several keys gives one candidate per key with two or more queries.
* An occurrence of ``p`` in a query is not shareable where an adjacent predicate of the
  query crosses its border (between ``E_{m-1}`` and ``E_m``, or ``E_{m+l}`` and
  ``E_{m+l+1}``): the count combination multiplies aggregated counts and cannot test a
  predicate between the events on either side.
* **Repeated types** (ch. 24.3). A type may occur several times in a query; rates are
  summed over positions, which gives the paper's factor ``k`` for a type that occurs
  ``k`` times. Where ``p`` occurs more than once in a query, the query takes part in the
  candidate at its *leftmost* shareable occurrence (``Candidate.positions``); the others
  are computed by the query itself.
* **Outside the model** (``Query.alone`` says why; no candidate, not counted in costs):
  semantics other than ``skip-till-any-match`` (A-Seq's counting), a negation, a Kleene
  pattern or any template that is not one path.
* **Rates** are events per window per event type; a query's rate at a position is the
  type's rate times the query's selectivity on that variable (1 unless given).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.query import canonical_predicates
from trendlake.optimizer.errors import OptimizerError

__all__ = ["ANY", "Candidate", "Query", "Workload", "conflict", "conflict_masks", "conflicts", "from_entries", "overlap_queries",
           "sub_patterns"]

ANY = "skip-till-any-match"


@dataclass(frozen=True)
class Query:
    """One query: its pattern's types, variables and rates in order, and what sharing
    compares (``local_keys`` per position, ``links`` per pair of consecutive positions: the
    canonical adjacent predicates, "" for none)."""

    name: str
    types: tuple[str, ...]
    variables: tuple[str, ...]
    rates: tuple[float, ...]
    base: Any  # partition_by, window length, window slide
    local_keys: tuple[str, ...]
    links: tuple[str, ...]
    alone: str | None = None

    @property
    def length(self) -> int:
        return len(self.types)

    def key(self, m: int, length: int) -> Any:
        """The sharing key of the sub-pattern of ``length`` types starting at ``m``."""
        return (self.base, self.local_keys[m:m + length], self.links[m:m + length - 1])

    def shareable(self, m: int, length: int) -> bool:
        """Whether no adjacent predicate crosses the border of the occurrence at ``m``."""
        end = m + length - 1
        return (m == 0 or not self.links[m - 1]) and (end == self.length - 1 or not self.links[end])


@dataclass(frozen=True, eq=False)
class Candidate:
    """A sharing candidate ``(p, Q_p)`` or one of its options (§VII: the same pattern
    shared by a subset of its queries; ``origin`` is the candidate it was expanded from).
    ``positions[q]`` is the index of ``p``'s first type in query ``q``."""

    id: str
    pattern: tuple[str, ...]
    queries: tuple[str, ...]
    positions: Mapping[str, int]
    key: Any = field(repr=False)
    origin: str | None = None

    @property
    def length(self) -> int:
        return len(self.pattern)

    def span(self, query: str) -> tuple[int, int]:
        """The positions ``[first, last]`` the pattern takes in ``query``."""
        m = self.positions[query]
        return m, m + self.length - 1

    def label(self) -> str:
        return f"({', '.join(self.pattern)}){{{', '.join(self.queries)}}}"

    def restricted(self, queries: Iterable[str], cid: str) -> Candidate:
        """The option of this candidate shared by ``queries`` only."""
        keep = set(queries)
        qs = tuple(q for q in self.queries if q in keep)
        return Candidate(cid, self.pattern, qs, {q: self.positions[q] for q in qs}, self.key,
                         self.origin or self.id)


@dataclass(frozen=True)
class Workload:
    """The queries in workload order and the sharing candidates among them."""

    queries: tuple[Query, ...]
    candidates: tuple[Candidate, ...]
    by_name: Mapping[str, Query] = field(repr=False)


def overlap_queries(a: Candidate, b: Candidate) -> list[str]:
    """The queries that cause a conflict between ``a`` and ``b`` (Def. 6): queries of both
    in which their patterns take a common position (a suffix of one is a prefix of the
    other, or one contains the other)."""
    out = []
    for q in a.queries:
        if q in b.positions:
            a0, a1 = a.span(q)
            b0, b1 = b.span(q)
            if a0 <= b1 and b0 <= a1:
                out.append(q)
    return out


def conflict(a: Candidate, b: Candidate) -> bool:
    return bool(overlap_queries(a, b))


def conflicts(cands: Sequence[Candidate]) -> list[tuple[int, int]]:
    """Every conflicting pair ``(i, j)``, ``i < j``, of ``cands`` (indexed per query: only
    candidates with a common query are compared)."""
    by_query: dict[str, list[int]] = {}
    for i, c in enumerate(cands):
        for q in c.queries:
            by_query.setdefault(q, []).append(i)
    out: set[tuple[int, int]] = set()
    for q, idx in by_query.items():
        spans = [(i, cands[i].span(q)) for i in idx]
        for x, (i, (a0, a1)) in enumerate(spans):
            for j, (b0, b1) in spans[x + 1:]:
                if a0 <= b1 and b0 <= a1:
                    out.add((min(i, j), max(i, j)))
    return sorted(out)


def conflict_masks(cands: Sequence[Candidate]) -> list[int]:
    """``conflicts`` as bit masks: entry ``i`` has bit ``j`` set where ``cands[i]`` and
    ``cands[j]`` conflict. Per query, candidates with the same positions are taken
    together (options of one candidate have the same)."""
    adj = [0] * len(cands)
    by_query: dict[str, dict[tuple[int, int], int]] = {}
    for i, c in enumerate(cands):
        for q in c.queries:
            spans = by_query.setdefault(q, {})
            span = c.span(q)
            spans[span] = spans.get(span, 0) | 1 << i
    for spans in by_query.values():
        items = list(spans.items())
        for (a0, a1), mask in items:
            near = 0
            for (b0, b1), other in items:
                if a0 <= b1 and b0 <= a1:
                    near |= other
            for i in _bits(mask):
                adj[i] |= near
    return [m & ~(1 << i) for i, m in enumerate(adj)]


def _bits(mask: int) -> Iterable[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def sub_patterns(q: Query) -> Iterable[tuple[int, int]]:
    """(start, length) of every sub-pattern of length two or more, by start then length."""
    for m in range(q.length):
        for length in range(2, q.length - m + 1):
            yield m, length


def _check_rates(entries: Sequence[Mapping[str, Any]], rates: Mapping[str, float]) -> None:
    missing = sorted({v["type"] for e in entries for v in e["variables"] if not v["negated"]} - set(rates))
    if missing:
        raise OptimizerError(f"Sharon needs a rate for every event type: none for {', '.join(missing)}")
    bad = sorted(t for t, r in rates.items()
                 if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r < float("inf"))
    if bad:
        raise OptimizerError(f"Sharon rates must be finite numbers >= 0: {', '.join(bad)}")
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise OptimizerError(f"Sharon: query names must be unique: {', '.join(dup)} more than once")


def _path(e: Mapping[str, Any]) -> list[str] | None:
    """The positive variables in pattern order, or None when the template is not one path."""
    positive = [v["name"] for v in e["variables"] if not v["negated"]]
    tpl = e["template"]
    succ: dict[str, str] = {}
    pred: dict[str, str] = {}
    for t in tpl["transitions"]:
        a, b = t["from"], t["to"]
        if a == b or a in succ or b in pred:
            return None
        succ[a], pred[b] = b, a
    if len(tpl["start"]) != 1 or len(tpl["end"]) != 1:
        return None
    order = [tpl["start"][0]]
    while order[-1] in succ and len(order) <= len(positive):
        order.append(succ[order[-1]])
    if order[-1] != tpl["end"][0] or sorted(order) != sorted(positive):
        return None
    return order


def _query(e: Mapping[str, Any], rates: Mapping[str, float], selectivity: Mapping[tuple[str, str], float]) -> Query:
    name = e["name"]
    base = (tuple(e["partition_by"]), e["window"]["within_us"], e["window"]["slide_us"])
    alone = None
    if e["semantics"] != ANY:
        alone = f"{e['semantics']} (Sharon shares skip-till-any-match)"
    elif any(v["negated"] for v in e["variables"]) or e.get("negations"):
        alone = "a negation"
    order = _path(e) if alone is None else None
    if alone is None and order is None:
        alone = "not a fixed-length sequence (Kleene)"
    if order is None:
        return Query(name, (), (), (), base, (), (), alone)
    type_of = {v["name"]: v["type"] for v in e["variables"]}
    local = e.get("local_predicates", {})
    local_keys = tuple(canonical_predicates(local.get(v, []), {v: "_"}) if local.get(v) else "" for v in order)
    adjacent: dict[tuple[str, str], list[Any]] = {}
    for a in e.get("adjacent_predicates", []):
        adjacent.setdefault((a["from"], a["to"]), []).append(a["expr"])
    links = tuple(canonical_predicates(adjacent[(a, b)], {a: "_from", b: "_to"}) if (a, b) in adjacent else ""
                  for a, b in zip(order, order[1:], strict=False))
    qrates = tuple(float(rates[type_of[v]]) * float(selectivity.get((name, v), 1.0)) for v in order)
    return Query(name, tuple(type_of[v] for v in order), tuple(order), qrates, base, local_keys, links, None)


def _candidates(queries: Sequence[Query]) -> tuple[Candidate, ...]:
    found: dict[tuple[tuple[str, ...], Any], dict[str, int]] = {}
    for q in queries:
        for m, length in sub_patterns(q):
            if q.shareable(m, length):
                members = found.setdefault((q.types[m:m + length], q.key(m, length)), {})
                members.setdefault(q.name, m)  # the leftmost shareable occurrence
    order = {q.name: i for i, q in enumerate(queries)}
    kept = sorted(((p, key, members) for (p, key), members in found.items() if len(members) >= 2),
                  key=lambda x: (x[0], min(order[q] for q in x[2])))
    out = []
    seen: dict[tuple[str, ...], int] = {}
    for p, key, members in kept:
        seen[p] = seen.get(p, 0) + 1
        cid = f"({', '.join(p)})" + (f"#{seen[p]}" if seen[p] > 1 else "")
        qs = tuple(sorted(members, key=order.__getitem__))
        out.append(Candidate(cid, p, qs, {q: members[q] for q in qs}, key))
    return tuple(out)


def from_entries(
    entries: Sequence[Mapping[str, Any]],
    rates: Mapping[str, float],
    selectivity: Mapping[tuple[str, str], float] | None = None,
) -> Workload:
    """The Sharon workload of the plan's query entries under ``rates`` (event type ->
    events per window) and ``selectivity`` ((query, variable) -> fraction, default 1)."""
    _check_rates(entries, rates)
    queries = tuple(_query(e, rates, selectivity or {}) for e in entries)
    return Workload(queries, _candidates([q for q in queries if q.alone is None]), {q.name: q for q in queries})
