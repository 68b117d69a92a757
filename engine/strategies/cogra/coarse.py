"""COGRA's per-time-stamp interpreter for skip-till-any-match with negation and/or
adjacent predicates (type- and mixed-grained), and for small partitions."""

from __future__ import annotations

from typing import Any

from trendlake.engine.events import Event
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.strategies.cogra.pattern import copy_aggs, merge_aggs, results_of
from trendlake.engine.strategies.greta import (
    _Algebra,
    _earliest_ends,
    _groups,
    _max_bound,
    _VarList,
    _Vertex,
)

Aggs = dict[int, Any]



class Coarse:
    """Per time-stamp group interpreter: type-grained aggregates per (variable, window),
    "since" aggregates for negated transitions, kept events only for the sources of
    transitions with adjacent predicates (mixed-grained)."""

    _cache: dict[int, tuple[CompiledQuery, Coarse]] = {}

    @classmethod
    def of(cls, query: CompiledQuery) -> Coarse:
        """The interpreter of ``query``, built once (it keeps no state between runs)."""
        hit = cls._cache.get(id(query))
        if hit is None or hit[0] is not query:
            if len(cls._cache) > 256:
                cls._cache.clear()
            hit = (query, cls(query))
            cls._cache[id(query)] = hit
        return hit[1]

    def __init__(self, query: CompiledQuery) -> None:
        q = query
        self.q = q
        self.alg = _Algebra(q)
        self.kind: dict[tuple[str, str], str] = {}
        for t in q.transitions:
            if t.adjacent is not None:
                self.kind[(t.src, t.dst)] = "events"
            elif t.negations:
                self.kind[(t.src, t.dst)] = "since"
            else:
                self.kind[(t.src, t.dst)] = "type"
        self.type_vars = {
            t.src for t in q.transitions if self.kind[(t.src, t.dst)] in ("type", "since")
        }
        self.list_vars = {t.src for t in q.transitions if self.kind[(t.src, t.dst)] == "events"}
        # (variable, negation) pairs that need since aggregates
        self.since_keys = sorted(
            {
                (t.src, n)
                for t in q.transitions
                if self.kind[(t.src, t.dst)] == "since"
                for n in t.negations
            }
        )
        self.has_succ = {v for v in q.positive if q.successors[v]}

    def run(self, events: list[Event]) -> dict[int, WindowResult]:
        q, alg = self.q, self.alg
        within, slide = q.within, q.slide
        groups = _groups(events)
        forward_ids = sorted(
            {n for t in q.transitions for n in t.negations} | set(q.start_negations)
        )
        neg_vars = {n: [q.variables[name] for name in q.negations[n]] for n in forward_ids}
        best: dict[int, list[int | None]] = {n: [None] * len(neg_vars[n]) for n in forward_ids}
        neg_types = {v.type for vs in neg_vars.values() for v in vs}
        ends_after = [_earliest_ends(q, q.negations[n], groups) for n in q.end_negations]
        list_trs: dict[str, list[Any]] = {v: [] for v in self.list_vars}
        for t in q.transitions:
            if self.kind[(t.src, t.dst)] == "events":
                list_trs[t.src].append(t)

        totals: dict[str, Aggs] = {v: {} for v in self.type_vars}
        since: dict[tuple[str, int], list[Aggs]] = {
            (v, n): [{} for _ in neg_vars[n]] for v, n in self.since_keys
        }
        since_by_var: dict[str, list[tuple[int, list[Aggs]]]] = {}
        for (v, n), lst in since.items():
            since_by_var.setdefault(v, []).append((n, lst))
        lists = {v: _VarList() for v in self.list_vars}
        results: Aggs = {}
        start_vars, end_vars = q.start, q.end
        variables, vars_by_type, predecessors = q.variables, q.vars_by_type, q.predecessors
        kinds = self.kind

        for gi, (t, group) in enumerate(groups):
            kmin = (t - within) // slide + 1
            kmax = t // slide
            windows = range(kmin, kmax + 1)
            latest = {n: b[-1] for n, b in best.items()}
            start_bound = _max_bound([latest[n] for n in q.start_negations])
            end_bound: int | None = None
            if ends_after:
                present = [c[gi] for c in ends_after if c[gi] is not None]
                end_bound = min(present) if present else None

            def starts(k: int, sb: int | None = start_bound) -> bool:
                return sb is None or sb < k * slide

            # expired windows and invalidated kept events
            for aggs in totals.values():
                if aggs and min(aggs) < kmin:
                    for k in [k for k in aggs if k < kmin]:
                        del aggs[k]
            for lst in since.values():
                for aggs in lst:
                    if aggs and min(aggs) < kmin:
                        for k in [k for k in aggs if k < kmin]:
                            del aggs[k]
            for v, vl in lists.items():
                trs = list_trs[v]
                blocked: int | None = None
                if trs and all(t_.negations for t_ in trs):
                    bs = [_max_bound([latest[n] for n in t_.negations]) for t_ in trs]
                    blocked = None if None in bs else min(b for b in bs if b is not None)
                vl.prune(kmin, blocked)

            new: list[_Vertex] = []
            for e in group:
                for var in vars_by_type.get(e.type, ()):
                    if not variables[var].matches(e.type, e.attrs):
                        continue
                    acc: Aggs = {}
                    for tr in predecessors[var]:
                        src = tr.src
                        kind = kinds[(src, var)]
                        if kind == "type":
                            alg.add_into(acc, totals[src], kmin)
                        elif kind == "since":
                            n_best, bound = None, None
                            for n in tr.negations:
                                b = latest[n]
                                if b is not None and (bound is None or b > bound):
                                    n_best, bound = n, b
                            if n_best is None:
                                alg.add_into(acc, totals[src], kmin)
                            else:
                                alg.add_into(acc, since[(src, n_best)][-1], kmin)
                        else:
                            bound = (
                                _max_bound([latest[n] for n in tr.negations])
                                if tr.negations
                                else None
                            )
                            vl = lists[src]
                            adjacent = tr.adjacent
                            attrs = e.attrs
                            vs = vl.vertices
                            for i in range(vl.from_time(bound), len(vs)):
                                p = vs[i]
                                if adjacent(p.attrs, attrs):
                                    alg.add_into(acc, p.prop, kmin)
                    aggs = alg.finish(
                        acc, windows, starts if var in start_vars else None, var, e.attrs
                    )
                    if not aggs:
                        continue
                    if var in end_vars:
                        if end_bound is None:
                            merge_aggs(alg, results, aggs)
                        else:
                            merge_aggs(
                                alg,
                                results,
                                {
                                    k: a
                                    for k, a in aggs.items()
                                    if not end_bound < k * slide + within
                                },
                            )
                    if var in self.has_succ:
                        new.append(_Vertex(t, e.attrs, var, aggs, kmax))

            # the group is done: its vertices become predecessors for later time stamps
            for v in new:
                if v.var in totals:
                    alg.add_into(totals[v.var], v.prop, kmin)
                for _, lst in since_by_var.get(v.var, ()):
                    for aggs in lst:
                        alg.add_into(aggs, v.prop, kmin)
                if v.var in lists:
                    lists[v.var].append(v)
            if forward_ids and any(e.type in neg_types for e in group):
                for n in forward_ids:
                    b = best[n]
                    nvars = neg_vars[n]
                    for j in range(len(b) - 1, -1, -1):  # descending: b[j-1] is still the old value
                        cand = t if j == 0 else b[j - 1]
                        if cand is None or (b[j] is not None and b[j] >= cand):
                            continue
                        var_j = nvars[j]
                        if not any(var_j.matches(e.type, e.attrs) for e in group):
                            continue
                        b[j] = cand
                        for (sv, sn), lst in since.items():
                            if sn != n:
                                continue
                            if j == 0:
                                fresh: Aggs = {}
                                for v in new:
                                    if v.var == sv:
                                        alg.add_into(fresh, v.prop, kmin)
                                lst[0] = fresh
                            else:
                                lst[j] = copy_aggs(alg, lst[j - 1])
        return results_of(alg, results)

