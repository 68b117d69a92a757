"""The per-time-stamp driver of the row-based strategies (GRETA, COGRA's interpreter).

One pass over a partition's time-stamp groups (``timeline.time_groups``: events of
one time stamp are never adjacent in a trend, so each group reads the state from
before it). Per group:

1. its windows ``window_range(t)``, ``kmin`` the first; the semantics drop what
   expired (windows below ``kmin``, vertices a negation match invalidated);
2. per event and variable it matches, a vertex: the sum over its predecessors'
   aggregates (each transition read as the semantics chose, ``engine.semantics``),
   +1 trend in the windows it may start (after a leading ``NOT``'s latest match:
   windows starting after ``L(t)``), then its own event (``Algebra.finish``);
3. an END vertex adds its aggregates to the results, in the windows ending before
   the earliest match of a trailing ``NOT`` after it (``C(t)``);
4. the vertices the semantics pass on become predecessors of later groups, and the
   negation matches advance by the group.

GRETA runs it as it is; COGRA's interpreter runs it with a semantics that keeps
"since" aggregates (``strategies.cogra.mixed``). Design notes: docs/engine.md,
"GRETA" and "COGRA".
"""

from __future__ import annotations

from trendlake.engine.aggregates import Aggs, Algebra, merge_aggs, results_of
from trendlake.engine.columns import Event
from trendlake.engine.negation import Negations
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.semantics import SEMANTICS, Semantics, Starts
from trendlake.engine.timeline import time_groups, window_range
from trendlake.engine.vertices import Vertex

__all__ = ["TimeStampDriver"]


class TimeStampDriver:
    """The driver of one query under one semantics class (by default the query's own:
    ``engine.semantics.SEMANTICS``). Keeps no state between runs."""

    _cache: dict[tuple[int, type[Semantics]], tuple[CompiledQuery, TimeStampDriver]] = {}

    @classmethod
    def of(cls, query: CompiledQuery, semantics: type[Semantics] | None = None) -> TimeStampDriver:
        """The driver of ``query``, built once."""
        kind = semantics or SEMANTICS[query.semantics]
        hit = cls._cache.get((id(query), kind))
        if hit is None or hit[0] is not query:
            if len(cls._cache) > 256:
                cls._cache.clear()
            hit = (query, cls(query, kind))
            cls._cache[(id(query), kind)] = hit
        return hit[1]

    def __init__(self, query: CompiledQuery, semantics: type[Semantics] | None = None) -> None:
        kind = semantics or SEMANTICS[query.semantics]
        if kind.name != query.semantics:
            raise ValueError(f"{kind.__name__} evaluates {kind.name}, not {query.semantics}")
        self.q = query
        self.alg = Algebra(query)
        self.semantics = kind(query, self.alg)
        self.has_succ = {v for v in query.positive if query.successors[v]}

    def run(self, events: list[Event]) -> dict[int, WindowResult]:
        """Results per window index of one time-ordered partition (steps 1-4 of the module
        docstring, per time-stamp group)."""
        q, alg = self.q, self.alg
        within, slide = q.within, q.slide
        groups = time_groups(events)
        negs = Negations(q, groups)
        sem = self.semantics.start(negs)
        # per variable, its incoming transitions and how each reads (chosen once per run)
        preds = {v: [(tr, sem.total(tr), sem.reader(tr)) for tr in q.predecessors[v]] for v in q.positive}
        add_into = alg.add_into
        begin, end, follow, passed_on = sem.begin_group, sem.end_group, sem.negations_advanced, sem.passed_on
        middle_alone = sem.middle_alone
        starts_vars, end_vars, has_succ = q.start, q.end, self.has_succ
        variables, vars_by_type = q.variables, q.vars_by_type
        results: Aggs = {}
        for gi, (t, group) in enumerate(groups):
            windows = window_range(t, within, slide)
            kmin, kmax = windows.start, windows.stop - 1
            latest = negs.latest()
            begin(kmin, latest)
            starts = self.starts_after(negs.start_bound(latest))
            end_bound = negs.end_bound(gi)
            shared = middle_alone and len(group) > 1
            new: list[Vertex] = []
            for e in group:
                attrs = e.attrs
                for var in vars_by_type.get(e.type, ()):
                    if not variables[var].matches(e.type, attrs):
                        continue
                    acc: Aggs = {}
                    for tr, total, read in preds[var]:
                        if total is None:
                            read(acc, tr, attrs, kmin)
                        else:
                            add_into(acc, total, kmin)
                    aggs = alg.finish(acc, windows, starts if var in starts_vars else None, var, attrs)
                    if not aggs:
                        continue
                    if var in end_vars:
                        self.add_results(results, aggs, end_bound)
                    if var not in has_succ:
                        continue
                    prop = passed_on(var, aggs, windows, starts, attrs) if shared else aggs
                    if prop is not None:
                        new.append(Vertex(t, attrs, var, prop, kmax))
            end(new, kmin)
            follow(negs.advance(t, group), new, kmin)
        return results_of(alg, results)

    def starts_after(self, sb: int | None) -> Starts:
        """Whether a START vertex starts a trend in window k: only in windows starting
        after ``sb``, the latest match of a leading ``NOT`` (None: every window)."""
        if sb is None:
            return _every_window
        slide = self.q.slide

        def starts(k: int) -> bool:
            return sb is None or sb < k * slide

        return starts

    def add_results(self, results: Aggs, aggs: Aggs, end_bound: int | None) -> None:
        """An END vertex's aggregates added to ``results``, in the windows ending at or
        before ``end_bound``, the earliest match of a trailing ``NOT`` after it (``C(t)``;
        None: every window)."""
        if end_bound is not None:
            q = self.q
            aggs = {k: a for k, a in aggs.items() if not end_bound < k * q.slide + q.within}
        merge_aggs(self.alg, results, aggs)


def _every_window(k: int) -> bool:
    return True
