"""GRETA: event-grained trend aggregation over the GRETA graph, for every query.

The engine's general strategy (dissertation ch. 10-13, and the event-grained
baseline of ch. 16 for skip-till-next-match and contiguous): a vertex per
(event, matched variable), per-window intermediate aggregates summed from
predecessor vertices, negation by invalidation (``engine.negation``), running
totals per variable where a transition has no adjacent predicate or negation.
Design notes: docs/engine.md, "GRETA".
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from trendlake.engine.aggregates import Aggs, Algebra, results_of
from trendlake.engine.columns import Event
from trendlake.engine.negation import Negations, max_bound
from trendlake.engine.query import ANY, CONTIGUOUS, NEXT, CompiledQuery, Transition
from trendlake.engine.results import WindowResult
from trendlake.engine.timeline import time_groups, window_range
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
            windows = window_range(t, within, slide)
            kmin, kmax = windows.start, windows.stop - 1
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
                    vl.prune(kmin, negs.blocked_before(list_trs[v], latest))
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
