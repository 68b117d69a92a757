"""GRETA: event-grained trend aggregation over the GRETA graph, for every query.

This is the general strategy of the engine: it evaluates every query the plan
format can express and produces exactly the results of the two-step reference
(``engine.reference``, DESIGN §5). It follows the GRETA approach of the
dissertation (chapters 10-13) and its event-grained baseline for the other
semantics (chapter 16):

* **GRETA graph** (Def. 11.1, Algorithm 6): a vertex is a pair (event,
  variable) -- an event that matches a variable of the template (its type and
  local predicates, the "vertex predicates" of §11.3). An event matching
  several aliases of its type gives several vertices, each a separate path,
  as in the reference. Edges are never stored: a new vertex sums the
  intermediate aggregates of its predecessor vertices (edges = template
  transitions whose adjacent predicates hold, the "edge predicates" of §11.3)
  and is then itself a predecessor for later events. START vertices add one
  new trend; END vertices add their aggregates to the final result.
* **Intermediate aggregates** (Theorem 11.2 for COUNT(*), Theorem 12.1 for
  COUNT(E), SUM, MIN, MAX; AVG = SUM / COUNT(E) at finalization) are kept
  per window a vertex falls into (§11.3, "sub-graph sharing" with a window
  identifier per aggregate): the predicate evaluation and the predecessor
  search of an event happen once, only the per-window additions repeat.
  A vertex whose windows all ended, or that can no longer connect to any
  future event, is dropped.
* **Negation** (Def. 11.2-11.3, invalidation and pruning of §11.2): each
  negative sub-pattern keeps, per prefix of its sequence, the latest start
  time of a match of that prefix seen so far. Before the events of a time
  stamp t are processed this gives ``L(t)``, the latest start of a complete
  match lying entirely before t. A transition carrying the negation is
  invalid from a vertex at time s to an event at t iff ``L(t) > s``; since
  ``L`` only grows, invalidated vertices form a time prefix that is pruned
  once every transition that needs them is invalid (invalid event pruning).
  A leading ``NOT`` (``start_negations``) blocks a START vertex at t in the
  windows starting at or before ``L(t)``. A trailing ``NOT``
  (``end_negations``) uses the symmetric quantity ``C(t)``, the earliest end
  of a match lying entirely after t, computed by one backward pass over the
  partition: an END vertex at t counts in the windows ending after ``C(t)``.
* **Skip-till-next-match** (Def. 2.3 / 2.7, SASE; DESIGN §5): a vertex
  connects only to the events at the earliest time stamp at which any event
  may follow it under skip-till-any-match (over all transitions from its
  variable, with local and adjacent predicates and negations). So a vertex is
  *open* until a time stamp offers it a follower; it connects to all
  followers at that time stamp and is then closed and dropped (ch. 16.1:
  "only the last matched event may connect to a new event").
* **Contiguous** (Def. 2.4 / 2.7): next-match trends with no other event of the
  partition strictly between their first and last event. Hence predecessors
  are only the vertices of the immediately preceding time stamp of the
  partition (ch. 16.1: an unmatched event discards the graph), and a vertex
  whose time stamp holds other partition events may only *start* the trends
  it passes on (a middle event must be the only event at its time stamp).

Events with equal time stamps are never adjacent: each time-stamp group is
processed against the state from before it (the time-based transactions of
§11.4). Counts are exact Python ints saturated by ``engine.results.sat``;
sums use ``scale`` and saturate to NaN beyond ``SUM_BOUND`` (see below).

Speed: a transition without adjacent predicates and negations under
skip-till-any-match has as predecessors *all* earlier vertices of its source
variable, so their aggregates are kept as one running total per variable and
window (the per-type sub-graph sum) instead of being summed vertex by vertex.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from itertools import islice
from typing import Any

from trendlake.engine.events import Event
from trendlake.engine.query import ANY, CONTIGUOUS, NEXT, CompiledQuery, Transition
from trendlake.engine.results import CAP, WindowResult, sat, scale

# Counts and integer sums stay exact Python ints however large (the OVERFLOW
# rule is applied at output by engine.results.finalize), so that AVG, the exact
# sum over the exact count, is right when both pass the result columns' bound.
SUM_BOUND = CAP * CAP  # kept for importers; no longer a saturation bound

Agg = Any  # a number (COUNT(*) only) or a list laid out by _Algebra
Aggs = dict[int, Agg]  # window index -> aggregate


def _sum_sat(value: Any) -> Any:
    """A state sum as kept: exact (see engine.results)."""
    return value


class _Algebra:
    """The intermediate aggregate of a vertex (Theorem 12.1) and its operations.

    With only COUNT(*) an aggregate is a number. Otherwise it is a list:
    ``[count, counts..., sums..., mins..., maxs...]``.
    """

    def __init__(self, query: CompiledQuery) -> None:
        needs = query.needs
        self.count_vars = sorted(needs.counts)
        self.sum_keys = sorted(needs.sums)
        self.min_keys = sorted(needs.mins)
        self.max_keys = sorted(needs.maxs)
        self.scalar = not (self.count_vars or self.sum_keys or self.min_keys or self.max_keys)
        self.n_counts = 1 + len(self.count_vars)
        self.n_additive = self.n_counts + len(self.sum_keys)
        self.n_min = self.n_additive + len(self.min_keys)
        self.size = self.n_min + len(self.max_keys)
        self.zero: list[Any] = [0] * self.n_additive + [None] * (self.size - self.n_additive)
        self.own_counts: dict[str, list[int]] = {}
        self.own_sums: dict[str, list[tuple[int, str]]] = {}
        self.own_mins: dict[str, list[tuple[int, str]]] = {}
        self.own_maxs: dict[str, list[tuple[int, str]]] = {}
        for var in query.positive:
            self.own_counts[var] = [1 + i for i, v in enumerate(self.count_vars) if v == var]
            self.own_sums[var] = [
                (self.n_counts + i, a) for i, (v, a) in enumerate(self.sum_keys) if v == var
            ]
            self.own_mins[var] = [
                (self.n_additive + i, a) for i, (v, a) in enumerate(self.min_keys) if v == var
            ]
            self.own_maxs[var] = [
                (self.n_min + i, a) for i, (v, a) in enumerate(self.max_keys) if v == var
            ]

    def add_into(self, acc: Aggs, aggs: Aggs, kmin: int) -> None:
        """``acc[k] += aggs[k]`` for the windows k >= kmin (the ones still open)."""
        if self.scalar:
            for k, a in aggs.items():
                if k >= kmin:
                    acc[k] = acc.get(k, 0) + a
            return
        for k, a in aggs.items():
            if k < kmin:
                continue
            cur = acc.get(k)
            if cur is None:
                acc[k] = a.copy()
            else:
                self.merge(cur, a)

    def merge(self, cur: list[Any], a: list[Any]) -> None:
        for i in range(self.n_additive):
            cur[i] += a[i]
        for i in range(self.n_additive, self.n_min):
            v = a[i]
            if v is not None and (cur[i] is None or v < cur[i]):
                cur[i] = v
        for i in range(self.n_min, self.size):
            v = a[i]
            if v is not None and (cur[i] is None or v > cur[i]):
                cur[i] = v

    def finish(
        self,
        acc: Aggs,
        windows: range,
        starts: Callable[[int], bool] | None,
        var: str,
        attrs: dict[str, Any],
    ) -> Aggs:
        """The vertex's aggregates: predecessor sums, +1 trend if it starts one, then its own event."""
        out: Aggs = {}
        if self.scalar:
            for k in windows:
                c = acc.get(k, 0)
                if starts is not None and starts(k):
                    c += 1
                if c:
                    out[k] = sat(c)
            return out
        own_counts = self.own_counts[var]
        own_sums = self.own_sums[var]
        own_mins = self.own_mins[var]
        own_maxs = self.own_maxs[var]
        n_counts = self.n_counts
        n_additive = self.n_additive
        for k in windows:
            a = acc.get(k)
            start = starts is not None and starts(k)
            if a is None:
                if not start:
                    continue
                a = self.zero.copy()
            if start:
                a[0] += 1
            for i in range(n_counts):
                a[i] = sat(a[i])
            for i in range(n_counts, n_additive):
                a[i] = _sum_sat(a[i])
            c = a[0]
            for i in own_counts:
                a[i] = sat(a[i] + c)
            for i, attr in own_sums:
                a[i] = _sum_sat(a[i] + scale(attrs[attr], c))
            for i, attr in own_mins:
                v = attrs[attr]
                if a[i] is None or v < a[i]:
                    a[i] = v
            for i, attr in own_maxs:
                v = attrs[attr]
                if a[i] is None or v > a[i]:
                    a[i] = v
            out[k] = a
        return out

    def result(self, a: Agg) -> WindowResult:
        if self.scalar:
            return WindowResult(trends=a)
        n_counts, n_additive, n_min = self.n_counts, self.n_additive, self.n_min
        return WindowResult(
            trends=sat(a[0]),
            counts={v: sat(a[1 + i]) for i, v in enumerate(self.count_vars)},
            sums={key: _sum_sat(a[n_counts + i]) for i, key in enumerate(self.sum_keys)},
            mins={
                key: a[n_additive + i]
                for i, key in enumerate(self.min_keys)
                if a[n_additive + i] is not None
            },
            maxs={
                key: a[n_min + i] for i, key in enumerate(self.max_keys) if a[n_min + i] is not None
            },
        )


class _Vertex:
    """A GRETA vertex: an event matched to one variable, with per-window aggregates."""

    __slots__ = ("ts", "attrs", "var", "prop", "last_window", "closed")

    def __init__(
        self, ts: int, attrs: dict[str, Any], var: str, prop: Aggs, last_window: int
    ) -> None:
        self.ts = ts
        self.attrs = attrs
        self.var = var
        self.prop = prop  # the aggregates it passes on to its successors
        self.last_window = last_window
        self.closed = False


class _Negation:
    """Latest start time of a match of each prefix of a negative sequence (invalidation state)."""

    __slots__ = ("vars", "best")

    def __init__(self, query: CompiledQuery, sequence: tuple[str, ...]) -> None:
        self.vars = [query.variables[name] for name in sequence]
        self.best: list[int | None] = [None] * len(sequence)

    @property
    def latest(self) -> int | None:
        """Latest start of a complete match among the events processed so far."""
        return self.best[-1]

    def advance(self, t: int, group: list[Event]) -> None:
        best = self.best
        for j in range(len(best) - 1, -1, -1):  # descending: best[j-1] is still the old value
            cand = t if j == 0 else best[j - 1]
            if cand is None or (best[j] is not None and best[j] >= cand):
                continue
            var = self.vars[j]
            if any(var.matches(e.type, e.attrs) for e in group):
                best[j] = cand


def _earliest_ends(
    query: CompiledQuery, sequence: tuple[str, ...], groups: list[tuple[int, list[Event]]]
) -> list[int | None]:
    """Per time-stamp group: the earliest end of a match lying entirely after it (backward pass)."""
    variables = [query.variables[name] for name in sequence]
    m = len(variables)
    best: list[int | None] = [None] * m  # earliest end of a match of sequence[j:]
    out: list[int | None] = [None] * len(groups)
    for gi in range(len(groups) - 1, -1, -1):
        t, group = groups[gi]
        out[gi] = best[0]
        for j in range(m):  # ascending: best[j+1] is still the old value
            cand = t if j == m - 1 else best[j + 1]
            if cand is None or (best[j] is not None and best[j] <= cand):
                continue
            var = variables[j]
            if any(var.matches(e.type, e.attrs) for e in group):
                best[j] = cand
    return out


def _max_bound(bounds: list[int | None]) -> int | None:
    present = [b for b in bounds if b is not None]
    return max(present) if present else None


class _VarList:
    """Vertices of one variable in time order, with a pruned (expired or invalid) prefix."""

    __slots__ = ("vertices", "stamps", "offset")

    def __init__(self) -> None:
        self.vertices: list[_Vertex] = []
        self.stamps: list[int] = []
        self.offset = 0

    def prune(self, kmin: int, blocked_before: int | None) -> None:
        vs, off = self.vertices, self.offset
        while off < len(vs) and vs[off].last_window < kmin:
            off += 1
        if blocked_before is not None:
            off = max(off, bisect.bisect_left(self.stamps, blocked_before))
        if off > 32 and off * 2 > len(vs):
            del vs[:off]
            del self.stamps[:off]
            off = 0
        self.offset = off

    def from_time(self, bound: int | None) -> int:
        if bound is None:
            return self.offset
        return max(self.offset, bisect.bisect_left(self.stamps, bound))

    def append(self, v: _Vertex) -> None:
        self.vertices.append(v)
        self.stamps.append(v.ts)


def _groups(events: list[Event]) -> list[tuple[int, list[Event]]]:
    groups: list[tuple[int, list[Event]]] = []
    for e in events:
        if groups and groups[-1][0] == e.ts:
            groups[-1][1].append(e)
        else:
            groups.append((e.ts, [e]))
    return groups


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    if not events:
        return {}
    return _Greta(query).run(events)


class _Greta:
    def __init__(self, query: CompiledQuery) -> None:
        self.q = query
        self.alg = _Algebra(query)
        self.semantics = query.semantics
        any_match = self.semantics == ANY
        # skip-till-any-match: transitions served by a running total of their source variable
        self.free = {
            (t.src, t.dst)
            for t in query.transitions
            if any_match and t.adjacent is None and not t.negations
        }
        self.total_vars = {src for src, _ in self.free}
        self.list_vars = {t.src for t in query.transitions if (t.src, t.dst) not in self.free}
        self.has_succ = {v for v in query.positive if query.successors[v]}

    def run(self, events: list[Event]) -> dict[int, WindowResult]:
        q, alg = self.q, self.alg
        within, slide = q.within, q.slide
        semantics = self.semantics
        scalar = alg.scalar
        groups = _groups(events)
        forward_ids = sorted(
            {n for t in q.transitions for n in t.negations} | set(q.start_negations)
        )
        forward = {n: _Negation(q, q.negations[n]) for n in forward_ids}
        neg_types = {q.variables[name].type for n in forward_ids for name in q.negations[n]}
        ends_after = [_earliest_ends(q, q.negations[n], groups) for n in q.end_negations]
        tr_negs = {(t.src, t.dst): t.negations for t in q.transitions}
        # how far back an invalidated vertex of a variable is still needed
        list_trs: dict[str, list[Transition]] = {v: [] for v in self.list_vars}
        for t in q.transitions:
            if t.src in self.list_vars and (t.src, t.dst) not in self.free:
                list_trs[t.src].append(t)

        lists = {v: _VarList() for v in self.list_vars}  # any-match
        totals: dict[str, Aggs] = {v: {} for v in self.total_vars}  # any-match
        open_: dict[str, list[_Vertex]] = {v: [] for v in self.has_succ}  # next-match
        prev: dict[str, list[_Vertex]] = {}  # contiguous: vertices of the previous time stamp
        results: Aggs = {}
        starts_vars = q.start
        end_vars = q.end
        variables = q.variables
        vars_by_type = q.vars_by_type
        predecessors = q.predecessors

        for gi, (t, group) in enumerate(groups):
            kmin = (t - within) // slide + 1
            kmax = t // slide
            windows = range(kmin, kmax + 1)
            latest = {n: neg.latest for n, neg in forward.items()}
            bounds = {
                key: _max_bound([latest[n] for n in negs]) for key, negs in tr_negs.items() if negs
            }
            start_bound = _max_bound([latest[n] for n in q.start_negations])
            end_bound: int | None = None
            if ends_after:
                present = [c[gi] for c in ends_after if c[gi] is not None]
                end_bound = min(present) if present else None

            def starts(k: int, sb: int | None = start_bound) -> bool:
                return sb is None or sb < k * slide

            # prune: expired windows and invalidated vertices
            if semantics == ANY:
                for v, vl in lists.items():
                    trs = list_trs[v]
                    blocked: int | None = None
                    if trs and all(t_.negations for t_ in trs):
                        bs = [bounds.get((t_.src, t_.dst)) for t_ in trs]
                        blocked = None if None in bs else min(b for b in bs if b is not None)
                    vl.prune(kmin, blocked)
                for tot in totals.values():
                    for k in [k for k in tot if k < kmin]:
                        del tot[k]
            elif semantics == NEXT:
                for v, ol in open_.items():
                    if ol and ol[0].last_window < kmin:
                        open_[v] = [p for p in ol if p.last_window >= kmin]

            new: list[_Vertex] = []
            any_closed = False
            for e in group:
                for var in vars_by_type.get(e.type, ()):
                    if not variables[var].matches(e.type, e.attrs):
                        continue
                    acc: Aggs = {}
                    for tr in predecessors[var]:
                        src = tr.src
                        key = (src, var)
                        if key in self.free:
                            alg.add_into(acc, totals[src], kmin)
                            continue
                        adjacent = tr.adjacent
                        bound = bounds.get(key)
                        if semantics == ANY:
                            vl = lists[src]
                            cands: Any = islice(vl.vertices, vl.from_time(bound), None)
                        elif semantics == NEXT:
                            cands = open_.get(src, ())
                        else:
                            cands = prev.get(src, ())
                        attrs = e.attrs
                        for p in cands:
                            if adjacent is not None and not adjacent(p.attrs, attrs):
                                continue
                            if semantics != ANY:
                                if p.last_window < kmin or (bound is not None and bound > p.ts):
                                    continue
                                if semantics == NEXT:
                                    p.closed = True
                                    any_closed = True
                            if scalar:  # inlined add_into for COUNT(*) only
                                for k, a in p.prop.items():
                                    if k >= kmin:
                                        acc[k] = acc.get(k, 0) + a
                            else:
                                alg.add_into(acc, p.prop, kmin)
                    aggs = alg.finish(
                        acc, windows, starts if var in starts_vars else None, var, e.attrs
                    )
                    if not aggs:
                        continue
                    if var in end_vars:
                        for k, a in aggs.items():
                            if end_bound is not None and end_bound < k * slide + within:
                                continue
                            cur = results.get(k)
                            if cur is None:
                                results[k] = a if alg.scalar else a.copy()
                            elif alg.scalar:
                                results[k] = cur + a
                            else:
                                alg.merge(cur, a)
                    if var not in self.has_succ:
                        continue
                    prop = aggs
                    if semantics == CONTIGUOUS and len(group) > 1:
                        # a middle event must be alone at its time stamp: pass on only
                        # the trends this vertex starts
                        if var not in starts_vars:
                            continue
                        prop = alg.finish({}, windows, starts, var, e.attrs)
                        if not prop:
                            continue
                    new.append(_Vertex(t, e.attrs, var, prop, kmax))

            # the group is done: its vertices become predecessors for later time stamps
            if semantics == ANY:
                for v in new:
                    if v.var in lists:
                        lists[v.var].append(v)
                    if v.var in totals:
                        alg.add_into(totals[v.var], v.prop, kmin)
            elif semantics == NEXT:
                if any_closed:
                    for var, ol in open_.items():
                        open_[var] = [p for p in ol if not p.closed]
                for v in new:
                    open_[v.var].append(v)
            else:
                prev = {}
                for v in new:
                    prev.setdefault(v.var, []).append(v)
            if forward and any(e.type in neg_types for e in group):
                for neg in forward.values():
                    neg.advance(t, group)

        out: dict[int, WindowResult] = {}
        for k in sorted(results):
            r = alg.result(results[k])
            if r.trends:
                out[k] = r
        return out
