"""The oracle's trends and results: DESIGN §5 written out by enumeration.

For one query: split the rows into partitions (equal values of the GROUP-BY and
equivalence attributes; a row lacking one is in no partition), list the
windows ``[k*s, k*s + d)`` holding some row, and in each window of each
partition enumerate every trend by depth-first search over (event, variable)
steps with strictly increasing time stamps, then keep those the semantics
allows and aggregate them. Exponential on purpose: nothing is shared with the
engine's algorithms, only the definitions are followed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.oracle.expr import attributes, holds
from tests.oracle.pattern import Pattern

ANY = "skip-till-any-match"
NEXT = "skip-till-next-match"
CONTIGUOUS = "contiguous"
CAP = 10**38 - 1  # the largest value of a decimal(38,0) result column
US = 1_000_000


class TooManyTrends(Exception):
    """A window has more trends than the oracle's budget allows."""


@dataclass
class Ev:
    ts: int  # µs
    type: str
    attrs: dict[str, Any]
    index: int = 0  # position in the partition's window list


@dataclass
class Query:
    """What the oracle needs of one query: the AST pattern and the plan entry's data."""

    name: str
    pattern: Pattern
    semantics: str
    within: int
    slide: int
    group_by: list[str]
    equivalence: list[str]
    types: dict[str, str]  # variable -> event type (positive and negated)
    local: dict[str, list[dict[str, Any]]]
    adjacent: list[tuple[str, str, dict[str, Any]]]
    aggregates: list[dict[str, Any]]
    needed: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, ast_query: Any, spec: dict[str, Any]) -> Query:
        """From the parsed query (pattern) and its plan entry (expressions, window, aggregates)."""
        types = {v["name"]: v["type"] for v in spec["variables"]}
        local = {k: list(v) for k, v in spec.get("local_predicates", {}).items()}
        aggregates = list(spec["aggregates"])
        needed: dict[str, set[str]] = {}
        for var, exprs in local.items():
            for e in exprs:
                needed.setdefault(var, set()).update(attributes(e))
        for a in aggregates:
            if a.get("attr"):
                needed.setdefault(a["var"], set()).add(a["attr"])
        window = spec["window"]
        return cls(
            name=spec["name"],
            pattern=Pattern.of(ast_query.pattern),
            semantics=ast_query.semantics,
            within=window["within_us"],
            slide=window.get("slide_us") or window["within_us"],
            group_by=[g.name for g in ast_query.group_by],
            equivalence=[a.name for c in ast_query.conditions if type(c).__name__ == "Equivalence" for a in c.attrs],
            types=types,
            local=local,
            adjacent=[(a["from"], a["to"], a["expr"]) for a in spec.get("adjacent_predicates", [])],
            aggregates=aggregates,
            needed=needed,
        )

    def matches(self, var: str, e: Ev) -> bool:
        """The event is of the variable's type, has the attributes its predicates and
        aggregates read, and passes its local predicates."""
        if e.type != self.types[var]:
            return False
        if any(e.attrs.get(a) is None for a in self.needed.get(var, ())):
            return False
        return all(holds(x, e.attrs) for x in self.local.get(var, ()))

    def adjacent_ok(self, a: str, e: Ev, b: str, f: Ev) -> bool:
        return all(holds(x, e.attrs, f.attrs) for s, d, x in self.adjacent if s == a and d == b)


# ---------------------------------------------------------------------------
# negation, trends


def neg_match(q: Query, events: list[Ev], neg: tuple[str, ...], lo: int, hi: int, lo_closed: bool) -> bool:
    """A match of ``neg`` (events with strictly increasing time stamps, each matching its
    negated variable) lying inside (lo, hi), or [lo, hi) when ``lo_closed``."""

    def rest(k: int, after: int, closed: bool) -> bool:
        if k == len(neg):
            return True
        return any(
            (e.ts > after or (closed and e.ts == after)) and e.ts < hi and q.matches(neg[k], e)
            and rest(k + 1, e.ts, False)
            for e in events
        )

    return rest(0, lo, lo_closed)


Step = tuple[int, str]  # (event index in the window list, variable)


def _gaps_ok(q: Query, events: list[Ev], path: list[Step], gap_sets: list[frozenset]) -> bool:
    """Some parse of the path has every between-NOT unmatched in its gap."""
    for gaps in gap_sets:
        if all(
            not neg_match(q, events, neg, events[path[k - 1][0]].ts, events[path[k][0]].ts, False)
            for k, neg in gaps
            if 0 < k < len(path)
        ):
            return True
    return False


def _may_follow(q: Query, events: list[Ev], path: list[Step], j: int, var: str) -> bool:
    """Skip-till-any-match: (event j, var) may extend the trend prefix ``path``."""
    i, last = path[-1]
    e, f = events[i], events[j]
    if f.ts <= e.ts or not q.matches(var, f) or not q.adjacent_ok(last, e, var, f):
        return False
    word = tuple(v for _, v in path) + (var,)
    parses = [g for end, g in q.pattern.parses(word) if end in (-1, len(word))]
    # the negations in the new gap (index len(path)) must not match
    return any(
        all(
            not neg_match(q, events, neg, e.ts, f.ts, False)
            for k, neg in g
            if k == len(path)
        )
        for g in parses
    )


def trends(q: Query, events: list[Ev], window: tuple[int, int], budget: int) -> Iterator[list[Step]]:
    """Every trend (DESIGN §5) of one partition's events inside ``window``."""
    w_start, w_end = window
    variables = q.pattern.variables()
    count = 0

    def earliest_followers(path: list[Step]) -> int | None:
        stamps = [
            events[j].ts
            for j in range(len(events))
            for v in variables
            if _may_follow(q, events, path, j, v)
        ]
        return min(stamps) if stamps else None

    def contiguous(path: list[Step]) -> bool:
        first, last = events[path[0][0]].ts, events[path[-1][0]].ts
        inside = {e.index for e in events if first < e.ts < last}
        return inside == {i for i, _ in path[1:-1]}

    def extend(path: list[Step]) -> Iterator[list[Step]]:
        nonlocal count
        word = tuple(v for _, v in path)
        complete = q.pattern.complete(word)
        if complete and _gaps_ok(q, events, path, complete):
            last = events[path[-1][0]].ts
            if not any(neg_match(q, events, neg, last, w_end, False) for neg in q.pattern.trailing):
                if q.semantics != CONTIGUOUS or contiguous(path):
                    count += 1
                    if count > budget:
                        raise TooManyTrends(f"more than {budget} trends in a window")
                    yield list(path)
        here = events[path[-1][0]]
        if q.semantics == CONTIGUOUS and len(path) > 1 and any(
            e.ts == here.ts and e is not here for e in events
        ):
            return  # extended, this event is a middle one sharing its time stamp
        target = earliest_followers(path) if q.semantics != ANY else None
        for j in range(path[-1][0] + 1, len(events)):
            if target is not None and events[j].ts != target:
                continue
            if q.semantics == CONTIGUOUS and any(here.ts < e.ts < events[j].ts for e in events):
                continue  # that event would lie between the trend's first and last event
            for v in variables:
                if _may_follow(q, events, path, j, v):
                    path.append((j, v))
                    yield from extend(path)
                    path.pop()

    for i, e in enumerate(events):
        for v in variables:
            if not q.matches(v, e) or not q.pattern.viable((v,)):
                continue
            if any(neg_match(q, events, neg, w_start, e.ts, True) for neg in q.pattern.leading):
                continue
            yield from extend([(i, v)])


# ---------------------------------------------------------------------------
# partitions, windows, aggregates


def _windows(ts: int, within: int, slide: int) -> list[int]:
    """Every k with k*slide <= ts < k*slide + within."""
    k = ts // slide  # the last window starting at or before ts
    out = []
    while k * slide + within > ts:
        out.append(k)
        k -= 1
    return out


@dataclass
class Acc:
    trends: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    sums: dict[tuple[str, str], Any] = field(default_factory=dict)
    values: dict[tuple[str, str], list[Any]] = field(default_factory=dict)


def _add(q: Query, acc: Acc, events: list[Ev], path: list[Step]) -> None:
    acc.trends += 1
    for var in {a["var"] for a in q.aggregates if a.get("var")}:
        acc.counts[var] = acc.counts.get(var, 0) + sum(1 for _, v in path if v == var)
    for key in {(a["var"], a["attr"]) for a in q.aggregates if a.get("attr")}:
        vals = [events[i].attrs[key[1]] for i, v in path if v == key[0]]
        acc.sums[key] = acc.sums.get(key, 0) + sum(vals)
        acc.values.setdefault(key, []).extend(vals)


def _exact(n: Any) -> Any:
    return "OVERFLOW" if isinstance(n, int) and abs(n) > CAP else n


def _finish(q: Query, acc: Acc) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in q.aggregates:
        fn, key = a["fn"], (a.get("var"), a.get("attr"))
        vals = acc.values.get(key, [])
        if fn == "count_star":
            out[a["name"]] = _exact(acc.trends)
        elif fn == "count":
            out[a["name"]] = _exact(acc.counts.get(a["var"], 0))
        elif fn == "sum":
            out[a["name"]] = _exact(acc.sums.get(key, 0))
        elif fn == "avg":
            n, s = acc.counts.get(a["var"], 0), acc.sums.get(key, 0)
            # the exact sum over the exact count, rounded once (int / int is correctly rounded);
            # a count or sum past CAP does not make the mean overflow
            out[a["name"]] = None if n == 0 else s / n
        elif fn == "min":
            out[a["name"]] = min(vals) if vals else None
        elif fn == "max":
            out[a["name"]] = max(vals) if vals else None
        else:
            raise ValueError(f"oracle: unknown aggregate {fn!r}")
    return out


def evaluate_query(q: Query, rows: list[dict[str, Any]], budget: int = 200_000) -> list[dict[str, Any]]:
    """Result rows of one query: one per (group, window) with at least one trend.

    ``rows``: dicts with ``type``, ``ts`` (seconds: an integer, or a number rounded to
    whole microseconds as the typing rules of ``trendlake.schemas.typing`` round it) and attributes.
    """
    keys = q.group_by + [a for a in q.equivalence if a not in q.group_by]
    parts: dict[tuple, list[Ev]] = {}
    for r in rows:
        attrs = {k: v for k, v in r.items() if k not in ("type", "ts", "seq")}
        key = tuple(attrs.get(k) for k in keys)
        if any(v is None for v in key):
            continue
        parts.setdefault(key, []).append(Ev(round(r["ts"] * US), r["type"], attrs))
    accs: dict[tuple[tuple, int], Acc] = {}
    for key, evs in parts.items():
        evs.sort(key=lambda e: e.ts)
        for k in sorted({k for e in evs for k in _windows(e.ts, q.within, q.slide)}):
            start, end = k * q.slide, k * q.slide + q.within
            inside = [Ev(e.ts, e.type, e.attrs, n) for n, e in enumerate(x for x in evs if start <= x.ts < end)]
            group = key[: len(q.group_by)]
            for path in trends(q, inside, (start, end), budget):
                _add(q, accs.setdefault((group, k), Acc()), inside, path)
    out = []
    for (group, k), acc in sorted(accs.items(), key=lambda kv: (repr(kv[0][0]), kv[0][1])):
        row: dict[str, Any] = {"query": q.name}
        row.update(zip(q.group_by, group, strict=True))
        row["window_start"] = k * q.slide
        row["window_end"] = k * q.slide + q.within
        row.update(_finish(q, acc))
        out.append(row)
    return out
