"""The three event selection semantics (DESIGN §5), one class each, as plug-ins of the
time-stamp driver (``engine.timestamps``).

The driver builds the vertices of each time-stamp group from the aggregates of their
predecessors. Which earlier vertices a transition ``src -> dst`` reads, and what a
group leaves behind for the groups after it, is what the semantics decide:

- skip-till-any-match (:class:`AnyMatch`, Def. 2.2): every earlier vertex of ``src``
  in a common window is a predecessor. A transition without adjacent predicate or
  negation reads a running total per window of the ``src`` vertices (every one of
  them qualifies, so only their sum matters); otherwise it reads the kept vertices
  of ``src`` (a ``VarList``) from its negation bound on, testing the adjacent
  predicate on each.
- skip-till-next-match (:class:`NextMatch`, Def. 2.7): the ``src`` vertices not yet
  extended ("open"). An event extending one closes it once its whole time-stamp
  group is done (events of one time stamp are never adjacent, so they all see the
  same open vertices).
- contiguous (:class:`Contiguous`, Def. 2.4): the ``src`` vertices of the previous
  time stamp only; an event sharing its time stamp with another can be no middle
  event of a trend (another event of the partition would lie between its
  neighbours), so it passes on only the trends it starts.

Negation (``engine.negation``) bounds the vertices a negated transition may read:
those at or after the latest start ``L(t)`` of a match of one of its negations.

A semantics object is made once per query (``__init__``: which transitions read
what) and copied per partition (:meth:`Semantics.start`: the per-run state). The
driver calls, per group, :meth:`~Semantics.begin_group`, per event and transition
the transition's running total (:meth:`~Semantics.total`) or reader
(:meth:`~Semantics.reader`), both chosen once per run, per new
vertex at a shared time stamp :meth:`~Semantics.passed_on` (``middle_alone``), then :meth:`~Semantics.end_group` and
:meth:`~Semantics.negations_advanced`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from itertools import islice
from typing import Any, ClassVar

from trendlake.engine.aggregates import Aggs, Algebra
from trendlake.engine.negation import Negations, max_bound
from trendlake.engine.query import ANY, CONTIGUOUS, NEXT, CompiledQuery, Transition
from trendlake.engine.vertices import VarList, Vertex

__all__ = ["SEMANTICS", "AnyMatch", "Contiguous", "NextMatch", "Reader", "Semantics"]

# (acc, transition, the new event's attributes, kmin): adds the transition's predecessors'
# aggregates, in the windows k >= kmin, into acc
Reader = Callable[[Aggs, Transition, dict[str, Any], int], None]
Starts = Callable[[int], bool]


class Semantics:
    """What one semantics keeps of a partition's vertices between time stamps (see the
    module docstring). Subclasses set ``name`` (the plan's ``semantics`` value)."""

    name: ClassVar[str]
    # whether an event sharing its time stamp with another can be no middle event of a
    # trend (``passed_on`` decides what such a vertex hands on)
    middle_alone: ClassVar[bool] = False

    def __init__(self, query: CompiledQuery, alg: Algebra) -> None:
        self.q = query
        self.alg = alg
        self.negs: Negations | None = None
        self.bounds: dict[tuple[str, str], int | None] = {}
        # the negated transitions that read vertices, each bounded by its negations
        self.bounded = [t for t in query.transitions if t.negations and self.reads_vertices(t)]

    def reads_vertices(self, t: Transition) -> bool:
        """Whether transition ``t`` reads vertices one by one (not an aggregate)."""
        return True

    def start(self, negs: Negations) -> Semantics:
        """A copy with fresh per-run state, for one partition (``negs``: its negations)."""
        run = copy.copy(self)
        run.negs = negs
        run.bounds = {}
        run.reset()
        return run

    def reset(self) -> None:
        """Set up the per-run state."""

    def begin_group(self, kmin: int, latest: dict[int, int | None]) -> None:
        """Before a group: drop what expired (windows below ``kmin``, vertices a negation
        match invalidated; ``latest``: ``L(t)`` per negation) and take the bounds of the
        negated transitions."""
        if self.bounded:
            self.bounds = {(t.src, t.dst): max_bound([latest[n] for n in t.negations]) for t in self.bounded}

    def reader(self, t: Transition) -> Reader:
        """How transition ``t`` reads its predecessors in this run."""
        raise NotImplementedError

    def total(self, t: Transition) -> Aggs | None:
        """The running total transition ``t`` reads in this run, when every earlier vertex of
        its source qualifies (kept up to date in place; the driver adds it without a
        reader), else None."""
        return None

    def passed_on(
        self, var: str, aggs: Aggs, windows: range, starts: Starts, attrs: dict[str, Any]
    ) -> Aggs | None:
        """With ``middle_alone``: the aggregates a new vertex of ``var`` at a time stamp of
        several events hands to its successors (None: no vertex)."""
        return aggs

    def end_group(self, new: list[Vertex], kmin: int) -> None:
        """After a group: its vertices ``new`` become predecessors of later time stamps."""
        raise NotImplementedError

    def negations_advanced(self, advanced: dict[int, list[int]], new: list[Vertex], kmin: int) -> None:
        """After a group moved negation prefixes (``Negations.advance``)."""


class AnyMatch(Semantics):
    """skip-till-any-match: running totals where every earlier vertex qualifies, kept
    vertices (``VarList``) where an adjacent predicate or a negation decides."""

    name = ANY

    def __init__(self, query: CompiledQuery, alg: Algebra) -> None:
        super().__init__(query, alg)
        trs = query.transitions
        self.total_vars = sorted({t.src for t in trs if not self.reads_vertices(t)})
        self.list_trs: dict[str, list[Transition]] = {}
        for t in trs:
            if self.reads_vertices(t):
                self.list_trs.setdefault(t.src, []).append(t)

    def reads_vertices(self, t: Transition) -> bool:
        return t.adjacent is not None or bool(t.negations)

    def reset(self) -> None:
        self.lists = {v: VarList() for v in self.list_trs}
        self.totals: dict[str, Aggs] = {v: {} for v in self.total_vars}

    def begin_group(self, kmin: int, latest: dict[int, int | None]) -> None:
        if self.bounded:  # Semantics.begin_group, inlined (once per time stamp)
            self.bounds = {(t.src, t.dst): max_bound([latest[n] for n in t.negations]) for t in self.bounded}
        for aggs in self.totals.values():
            if aggs and min(aggs) < kmin:
                drop_before(aggs, kmin)
        if self.lists:
            blocked_before = self.negs.blocked_before  # type: ignore[union-attr]
            for v, vl in self.lists.items():
                vl.prune(kmin, blocked_before(self.list_trs[v], latest))

    def reader(self, t: Transition) -> Reader:
        return self.read_list if self.reads_vertices(t) else self.read_total

    def total(self, t: Transition) -> Aggs | None:
        return None if self.reads_vertices(t) else self.totals[t.src]

    def read_total(self, acc: Aggs, t: Transition, attrs: dict[str, Any], kmin: int) -> None:
        self.alg.add_into(acc, self.totals[t.src], kmin)

    def read_list(self, acc: Aggs, t: Transition, attrs: dict[str, Any], kmin: int) -> None:
        vl = self.lists[t.src]
        bound = self.bounds.get((t.src, t.dst)) if self.bounds else None
        cands = islice(vl.vertices, vl.from_time(bound), None)
        adjacent, alg = t.adjacent, self.alg
        if alg.scalar:  # add_into inlined for COUNT(*) only
            for p in cands:
                if adjacent is not None and not adjacent(p.attrs, attrs):
                    continue
                for k, a in p.prop.items():
                    if k >= kmin:
                        acc[k] = acc.get(k, 0) + a
            return
        for p in cands:
            if adjacent is None or adjacent(p.attrs, attrs):
                alg.add_into(acc, p.prop, kmin)

    def end_group(self, new: list[Vertex], kmin: int) -> None:
        lists, totals, alg = self.lists, self.totals, self.alg
        for v in new:
            if v.var in lists:
                lists[v.var].append(v)
            if v.var in totals:
                alg.add_into(totals[v.var], v.prop, kmin)


class _Selective(Semantics):
    """Next-match and contiguous: a transition reads a short list of candidate vertices
    (``store``: per variable), each checked for its windows, its negation bound and the
    adjacent predicate; next-match closes the ones it extends (``closes``)."""

    closes: ClassVar[bool] = False

    def reset(self) -> None:
        self.store: dict[str, list[Vertex]] = {}
        self.any_closed = False

    def reader(self, t: Transition) -> Reader:
        return self.read

    def read(self, acc: Aggs, t: Transition, attrs: dict[str, Any], kmin: int) -> None:
        cands = self.store.get(t.src)
        if not cands:
            return
        bound = self.bounds.get((t.src, t.dst)) if self.bounds else None
        adjacent, alg, closes = t.adjacent, self.alg, self.closes
        for p in cands:
            if adjacent is not None and not adjacent(p.attrs, attrs):
                continue
            if p.last_window < kmin or (bound is not None and bound > p.ts):
                continue
            if closes:
                p.closed = True
                self.any_closed = True
            if alg.scalar:  # add_into inlined for COUNT(*) only
                for k, a in p.prop.items():
                    if k >= kmin:
                        acc[k] = acc.get(k, 0) + a
            else:
                alg.add_into(acc, p.prop, kmin)


class NextMatch(_Selective):
    """skip-till-next-match: the open vertices of each variable; one extended by an event
    of a group closes when the group is done."""

    name = NEXT
    closes = True

    def reset(self) -> None:
        super().reset()
        self.store = {v: [] for v in self.q.positive if self.q.successors[v]}

    def begin_group(self, kmin: int, latest: dict[int, int | None]) -> None:
        if self.bounded:  # Semantics.begin_group, inlined (once per time stamp)
            self.bounds = {(t.src, t.dst): max_bound([latest[n] for n in t.negations]) for t in self.bounded}
        store = self.store
        for v, ol in store.items():
            if ol and ol[0].last_window < kmin:
                store[v] = [p for p in ol if p.last_window >= kmin]

    def end_group(self, new: list[Vertex], kmin: int) -> None:
        store = self.store
        if self.any_closed:
            for var, ol in store.items():
                store[var] = [p for p in ol if not p.closed]
            self.any_closed = False
        for v in new:
            store[v.var].append(v)


class Contiguous(_Selective):
    """contiguous: the vertices of the previous time stamp; a middle event must be alone
    at its time stamp."""

    name = CONTIGUOUS
    middle_alone = True

    def passed_on(
        self, var: str, aggs: Aggs, windows: range, starts: Starts, attrs: dict[str, Any]
    ) -> Aggs | None:
        # not alone at its time stamp: pass on only the trends this vertex starts
        if var not in self.q.start:
            return None
        return self.alg.finish({}, windows, starts, var, attrs) or None

    def end_group(self, new: list[Vertex], kmin: int) -> None:
        store: dict[str, list[Vertex]] = {}
        for v in new:
            store.setdefault(v.var, []).append(v)
        self.store = store


SEMANTICS: dict[str, type[Semantics]] = {cls.name: cls for cls in (AnyMatch, NextMatch, Contiguous)}


def drop_before(aggs: Aggs, kmin: int) -> None:
    """Drop the windows below ``kmin`` from per-window aggregates."""
    for k in [k for k in aggs if k < kmin]:
        del aggs[k]
