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

from itertools import islice
from typing import Any

from trendlake.engine.aggregates import Aggs, Algebra, results_of
from trendlake.engine.columns import Event
from trendlake.engine.negation import Negations, max_bound
from trendlake.engine.query import ANY, CONTIGUOUS, NEXT, CompiledQuery, Transition
from trendlake.engine.results import WindowResult
from trendlake.engine.timeline import time_groups
from trendlake.engine.vertices import VarList, Vertex

__all__ = ["run", "supports"]


def supports(query: CompiledQuery) -> str | None:
    """GRETA evaluates every query the plan format can express."""
    return None


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    if not events:
        return {}
    return _Greta(query).run(events)


class _Greta:
    def __init__(self, query: CompiledQuery) -> None:
        self.q = query
        self.alg = Algebra(query)
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
        groups = time_groups(events)
        negs = Negations(q, groups)
        tr_negs = {(t.src, t.dst): t.negations for t in q.transitions}
        # how far back an invalidated vertex of a variable is still needed
        list_trs: dict[str, list[Transition]] = {v: [] for v in self.list_vars}
        for t in q.transitions:
            if t.src in self.list_vars and (t.src, t.dst) not in self.free:
                list_trs[t.src].append(t)

        lists = {v: VarList() for v in self.list_vars}  # any-match
        totals: dict[str, Aggs] = {v: {} for v in self.total_vars}  # any-match
        open_: dict[str, list[Vertex]] = {v: [] for v in self.has_succ}  # next-match
        prev: dict[str, list[Vertex]] = {}  # contiguous: vertices of the previous time stamp
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
            latest = negs.latest()
            bounds = {
                key: max_bound([latest[n] for n in ids]) for key, ids in tr_negs.items() if ids
            }
            start_bound = negs.start_bound(latest)
            end_bound = negs.end_bound(gi)

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

            new: list[Vertex] = []
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
                    new.append(Vertex(t, e.attrs, var, prop, kmax))

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
            negs.advance(t, group)

        return results_of(alg, results)
