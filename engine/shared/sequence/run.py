"""Shared execution of a ``sequence`` group (GLORIA): symbolic propagation per Q-set.

The type-grained state of a query holds, per event type ``T``, the record of
the trends ending at an event of ``T`` (``records``). Here the record of
``(q, T)`` is the sum of

- its *start piece*: the trends that begin at ``T`` (kept per query), and
- per space holding ``T`` for ``q`` (``body.Space``), that space's symbolic
  *expression* of ``T`` evaluated for ``q``: a linear combination of
  *snapshots* (records kept per query) with coefficients (``records.Rec``)
  that are the same for every query of the Q-set.

At a time stamp with ``k`` events of type ``V`` matched by every query of a
space's Q-set into ``V``, the space's expression of ``V`` is extended once
for the Q-set from the expressions of its sources (or the latest snapshot of
the snapshot type): one *shared propagation* per source instead of one per
query. When the queries match different events (different local predicates),
each matching query's increment is evaluated on its own and kept as a new
snapshot of the space (an event-level snapshot, zero for the others), so the
expression stays shared afterwards. All increments of a time stamp are
computed from the state before it (simultaneous events see the state before
them), then applied; then every space whose snapshot type had events takes a
snapshot of each query's new value of it. A window opens at the first time
stamp of it where some query's trend starts (before that, every value in it
is zero, as COGRA skips such windows).

Exactness (docs/engine.md, "Shared sequence execution"): values are exact
ints and ``FSum`` sums; at a window's end they are bounded as the query's own
state is (``sat``/``sum_sat``, or ``norm`` with AVG). Counts only grow, so the
bounded counts equal the query's own; sums that a query alone would have
saturated through an overflowed count (total past ``CAP``), and exact-mode
values near ``BIG``, are recomputed for that window by the query alone
(``Layout.group_step`` per time stamp).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from trendlake.engine.layout import Layout
from trendlake.engine.numbers import BIG, CAP, exact_sum, norm, sat, sum_sat
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.shared.base import GroupInput
from trendlake.engine.shared.kleene.graph import visited_column
from trendlake.engine.shared.sequence.body import Space
from trendlake.engine.shared.sequence.records import ONE, Rec, add, compose, extend, total
from trendlake.engine.timeline import window_bounds, window_range

__all__ = ["SequenceStats", "run_group"]

Expr = tuple[str, frozenset[str]]  # an expression of a space: (type, Q-set)
# exact-mode totals beyond this are recomputed alone: below it no count, and no sum of values
# up to the float maximum over a window's trends, reaches BIG or FSum's exact range
EXACT_LIMIT = BIG >> 1000
# an expression of more snapshots is replaced by one snapshot of its queries' values
REBASE_LENGTH = 8


@dataclass
class SequenceStats:
    """What a ``sequence`` group's executor did (summed over partitions and windows).

    A *propagation* is one source type's value carried into the events of one time stamp
    of a target type (GLORIA's arrows, type-grained): ``shared`` once for a Q-set, ``alone``
    what its queries would have done each on their own, ``own`` done per query (a Q-set of
    one query, or an event matched differently by the queries of a Q-set)."""

    windows: int = 0
    shared: int = 0
    alone: int = 0
    own: int = 0
    split: int = 0  # time stamps at which a Q-set's queries matched different events
    snapshots: int = 0  # snapshots of a snapshot type's values (per space and time stamp)
    evaluations: int = 0  # expressions evaluated for one query
    rebases: int = 0  # expressions longer than REBASE_LENGTH replaced by a snapshot of their values
    recomputed: int = 0  # windows of a query recomputed alone (saturation, see the module)
    executor: str = ""  # the pass that ran the group: compiled, python (or the prefix pass of subsequence)
    # per target type: [shared, alone, own]
    by_type: dict[str, list[int]] = field(default_factory=dict)
    # with a dict: (partition, window) -> [shared, alone, own]
    per_window: dict[tuple[Any, int], list[int]] | None = None


class _Member:
    """A query of the group: its layout and which records its state reads."""

    def __init__(self, query: CompiledQuery) -> None:
        self.query = query
        self.name = query.name
        self.layout = Layout.of(query)
        self.type_of = {v: query.variables[v].type for v in query.positive}
        self.var_of = {t: v for v, t in self.type_of.items()}
        self.start = frozenset(self.type_of[v] for v in query.start)
        lay = self.layout
        self.counted = [self.type_of[v] for v in lay.cvars]
        self.skeys = [(self.type_of[v], a) for v, a in lay.skeys]
        self.nkeys = [(self.type_of[v], a) for v, a in lay.nkeys]
        self.xkeys = [(self.type_of[v], a) for v, a in lay.xkeys]

    def state(self, values: Mapping[int, Rec | None]) -> tuple:
        """The layout state whose variables ``i`` hold ``values[i]`` (bounded as the query's
        own state is), zero elsewhere."""
        lay = self.layout
        st = list(lay.zero)
        keep_count = norm if lay.exact else sat
        keep_sum = norm if lay.exact else sum_sat
        for i, rec in values.items():
            if rec is None:
                continue
            base = i * lay.stride
            st[base] = keep_count(rec.c)
            for j, t in enumerate(self.counted):
                st[base + lay.o_w + j] = keep_count(rec.w.get(t, 0))
            for j, key in enumerate(self.skeys):
                st[base + lay.o_z + j] = keep_sum(rec.z.get(key, 0))
            for j, key in enumerate(self.nkeys):
                st[base + lay.o_n + j] = rec.n.get(key)
            for j, key in enumerate(self.xkeys):
                st[base + lay.o_x + j] = rec.x.get(key)
        return tuple(st)


@dataclass
class _Window:
    k: int
    start: dict[tuple[str, str], Rec] = field(default_factory=dict)  # (query, type) -> start piece
    # (space, (type, Q-set)) -> expression: snapshot id -> coefficient
    exprs: dict[tuple[int, Expr], dict[int, Rec]] = field(default_factory=dict)
    snaps: dict[int, dict[str, Rec]] = field(default_factory=dict)  # snapshot id -> query -> value
    latest: dict[int, int] = field(default_factory=dict)  # space -> its latest snapshot of the snapshot type
    next_id: int = 0

    def snapshot(self, values: dict[str, Rec]) -> int:
        sid = self.next_id
        self.next_id += 1
        self.snaps[sid] = values
        return sid


def run_group(spaces: Sequence[Space], data: GroupInput, stats: SequenceStats) -> dict[str, dict[tuple[int, int], WindowResult]]:
    """Results per query and (partition id, window index) of a ``sequence`` group over
    ``data`` (its spaces resolved for ``data.queries``)."""
    return _Run(spaces, data, stats).run()


class _Run:
    """One run of a group over one key set's rows (see the module docstring)."""

    def __init__(self, spaces: Sequence[Space], data: GroupInput, stats: SequenceStats) -> None:
        self.spaces = list(spaces)
        self.stats = stats
        self.members = {q.name: _Member(q) for q in data.queries}
        first = data.queries[0]
        self.within, self.slide = first.within, first.slide
        idx = data.idx
        self.ts = data.ts[idx].tolist()
        self.kid = data.kid.tolist()
        # masks[(query, type)]: which visited rows the query's variable of the type matches
        # (unpruned: in a partition where the query has no trend, nothing reaches its end)
        self.masks = {(m.name, t): data.masks[m.name][v][idx].tolist() for m in self.members.values()
                      for t, v in m.var_of.items()}
        self.of_type: dict[str, list[tuple[str, list[bool]]]] = {}  # type -> (query, mask) per query of it
        for (q, t), mask in self.masks.items():
            self.of_type.setdefault(t, []).append((q, mask))
        self.row_type = self._row_types(len(idx))
        self.attrs = self._attributes(data, idx)
        self.counted = {t for m in self.members.values() for t in m.counted}
        # (query, type) -> the expressions holding (part of) the query's value of it
        self.holders: dict[tuple[str, str], list[tuple[int, Expr]]] = {}
        for i, sp in enumerate(self.spaces):
            for key in sp.sources:
                for q in key[1]:
                    self.holders.setdefault((q, key[0]), []).append((i, key))
        self.into: dict[str, list[tuple[int, Expr]]] = {}  # type -> the expressions into it
        for i, sp in enumerate(self.spaces):
            for key in sp.sources:
                self.into.setdefault(key[0], []).append((i, key))
        self.by_snapshot: dict[str, list[int]] = {}
        for i, sp in enumerate(self.spaces):
            self.by_snapshot.setdefault(sp.snapshot, []).append(i)
        self.out: dict[str, dict[tuple[int, int], WindowResult]] = {q: {} for q in self.members}
        self.part: Any = None
        self.groups: list[tuple[int, int]] = []  # the partition's time-stamp groups so far

    def _row_types(self, n: int) -> list[str | None]:
        """The event type of each visited row some query matches (None: none does)."""
        row_type: list[str | None] = [None] * n
        for (_, t), mask in self.masks.items():
            for r in np.flatnonzero(mask).tolist():
                row_type[r] = t
        return row_type

    def _attributes(self, data: GroupInput, idx: np.ndarray) -> dict[str, dict[str, list[Any]]]:
        """Per type: the visited values of each attribute some query aggregates over it."""
        wanted: dict[str, set[str]] = {}
        for m in self.members.values():
            for t, a in m.skeys + m.nkeys + m.xkeys:
                wanted.setdefault(t, set()).add(a)
        cols: dict[str, list[Any]] = {}
        for a in sorted({a for attrs in wanted.values() for a in attrs}):
            col = visited_column(data.attrs, a, idx)
            cols[a] = col.tolist() if isinstance(col, np.ndarray) else list(col)
        return {t: {a: cols[a] for a in sorted(attrs)} for t, attrs in wanted.items()}

    # -- the pass --------------------------------------------------------------

    def run(self) -> dict[str, dict[tuple[int, int], WindowResult]]:
        windows: dict[int, _Window] = {}
        n = len(self.ts)
        lo = 0
        while lo < n:
            hi = lo + 1
            while hi < n and self.ts[hi] == self.ts[lo] and self.kid[hi] == self.kid[lo]:
                hi += 1
            if self.kid[lo] != self.part:
                self._close_all(windows)
                self.part = self.kid[lo]
                self.groups = []
            self.groups.append((lo, hi))
            live = window_range(self.ts[lo], self.within, self.slide)
            for k in [k for k in windows if k < live.start]:
                self._close(windows.pop(k))
            matched, starts = self._events(lo, hi)
            for k in live:
                win = windows.get(k)
                if win is None:
                    if not starts:  # no trend starts in the window yet: its state stays zero
                        continue
                    win = windows[k] = _Window(k)
                    self.stats.windows += 1
                self._time_stamp(win, matched, starts)
            lo = hi
        self._close_all(windows)
        return self.out

    def _close_all(self, windows: dict[int, _Window]) -> None:
        for k in sorted(windows):
            self._close(windows[k])
        windows.clear()

    def _events(self, lo: int, hi: int) -> tuple[dict[str, dict[str, list[int]]], list[tuple[tuple[str, str], Rec]]]:
        """The events of rows lo..hi (one time stamp): per type, the rows each query matches,
        and the start pieces they add (the same in every window)."""
        by_type: dict[str, list[int]] = {}
        for r in range(lo, hi):
            t = self.row_type[r]
            if t is not None:
                by_type.setdefault(t, []).append(r)
        matched = {t: {q: [r for r in rows if mask[r]] for q, mask in self.of_type.get(t, [])}
                   for t, rows in by_type.items()}
        starts = [((q, t), self._extend(ONE, t, mine)) for t, per in matched.items() for q, mine in per.items()
                  if mine and t in self.members[q].start]
        return matched, starts

    def _time_stamp(self, win: _Window, matched: Mapping[str, Mapping[str, list[int]]],
                    starts: list[tuple[tuple[str, str], Rec]]) -> None:
        """Apply the events of one time stamp to a window: every increment from the state
        before the time stamp, then applied, then the snapshots taken."""
        exprs: list[tuple[tuple[int, Expr], dict[int, Rec]]] = []
        for t, per in matched.items():
            for i, key in self.into.get(t, []):
                inc = self._propagate(win, i, key, per)
                if inc:
                    exprs.append(((i, key), inc))
        for key, rec in starts:
            win.start[key] = add(win.start.get(key), rec)  # type: ignore[assignment]
        for key, inc in exprs:
            win.exprs[key] = _plus(win.exprs.get(key, {}), inc)
        for t in matched:
            for i in self.by_snapshot.get(t, []):
                self._take_snapshot(win, i)
        for key, _ in exprs:
            if len(win.exprs[key]) > REBASE_LENGTH:
                self._rebase(win, key)

    def _rebase(self, win: _Window, where: tuple[int, Expr]) -> None:
        """Replace a long expression by one snapshot of its value for each query of its Q-set
        (a local snapshot): later extensions of it cost one coefficient again."""
        values = {}
        for q in sorted(where[1][1]):
            if q in self.members:
                rec = self._evaluate(win, win.exprs[where], q)
                if rec is not None:
                    values[q] = rec
        self.stats.rebases += 1
        win.exprs[where] = {win.snapshot(values): ONE} if values else {}

    def _extend(self, rec: Rec, t: str, rows: list[int]) -> Rec:
        """``rec`` extended by the events ``rows`` of type ``t`` (one time stamp)."""
        own: dict[str, tuple[Any, Any, Any]] = {}
        for a, col in self.attrs.get(t, {}).items():
            values = [x for x in (col[r] for r in rows) if x is not None and x == x]  # NaN: missing
            own[a] = (exact_sum(values), min(values), max(values)) if values else (None, None, None)
        return extend(rec, t, len(rows), own, t in self.counted)

    def _sources(self, win: _Window, i: int, key: Expr) -> list[dict[int, Rec]]:
        """The expressions the expression ``key`` of space ``i`` extends from (the latest
        snapshot of the snapshot type, or the space's expressions of a source), the empty ones
        left out."""
        out = []
        for p, qset in self.spaces[i].sources[key]:
            if qset is None:
                sid = win.latest.get(i)
                expr = {sid: ONE} if sid is not None else {}
            else:
                expr = win.exprs.get((i, (p, qset)), {})
            if expr:
                out.append(expr)
        return out

    def _propagate(self, win: _Window, i: int, key: Expr, matched: Mapping[str, list[int]]) -> dict[int, Rec]:
        """The increment of expression ``key`` (type ``t``, Q-set) of space ``i`` by this time
        stamp's events of ``t``."""
        t, qset = key
        queries = [q for q in sorted(qset) if q in self.members]
        rows = [matched[q] for q in queries]
        if not any(rows):
            return {}
        sources = self._sources(win, i, key)
        if not sources:
            return {}
        if all(r == rows[0] for r in rows):  # one propagation per source for the Q-set
            if len(queries) > 1:
                self._note(win.k, t, len(sources), len(sources) * len(queries), 0)
            else:
                self._note(win.k, t, 0, 0, len(sources))
            inc: dict[int, Rec] = {}
            for expr in sources:
                for sid, coef in expr.items():
                    inc[sid] = add(inc.get(sid), coef)  # type: ignore[assignment]
            return {sid: self._extend(coef, t, rows[0]) for sid, coef in inc.items()}
        # the queries match different events: each matching query's increment on its own,
        # kept as an event-level snapshot of the space
        self.stats.split += 1
        values: dict[str, Rec] = {}
        for q, mine in zip(queries, rows, strict=True):
            if not mine:
                continue
            self._note(win.k, t, 0, 0, len(sources))
            rec = total([self._evaluate(win, expr, q) for expr in sources])
            if rec is not None:
                values[q] = self._extend(rec, t, mine)
        return {win.snapshot(values): ONE} if values else {}

    def _note(self, k: int, t: str, shared: int, alone: int, own: int) -> None:
        """Count propagations into type ``t`` in window ``k``."""
        self.stats.shared += shared
        self.stats.alone += alone
        self.stats.own += own
        lists = [self.stats.by_type.setdefault(t, [0, 0, 0])]
        if self.stats.per_window is not None:
            lists.append(self.stats.per_window.setdefault((self.part, k), [0, 0, 0]))
        for counts in lists:
            counts[0] += shared
            counts[1] += alone
            counts[2] += own

    def _take_snapshot(self, win: _Window, i: int) -> None:
        """A snapshot of every query's value of the space's snapshot type."""
        sp = self.spaces[i]
        values = {}
        for q in sorted(sp.queries):
            if q in self.members:
                rec = self.value(win, q, sp.snapshot)
                if rec is not None:
                    values[q] = rec
        self.stats.snapshots += 1
        win.latest[i] = win.snapshot(values)

    def _evaluate(self, win: _Window, expr: Mapping[int, Rec], q: str) -> Rec | None:
        """An expression's value for query ``q``."""
        self.stats.evaluations += 1
        out: Rec | None = None
        for sid, coef in expr.items():
            rec = win.snaps[sid].get(q)
            if rec is not None:
                out = add(out, compose(coef, rec))
        return out

    def value(self, win: _Window, q: str, t: str) -> Rec | None:
        """Query ``q``'s record of type ``t`` in a window."""
        out = win.start.get((q, t))
        for where in self.holders.get((q, t), []):
            expr = win.exprs.get(where)
            if expr:
                out = add(out, self._evaluate(win, expr, q))
        return out

    # -- results ----------------------------------------------------------------

    def _close(self, win: _Window) -> None:
        for q, m in self.members.items():
            lay = m.layout
            ends = {i: self.value(win, q, m.type_of[lay.vars[i]]) for i in lay.end}
            t = sum(rec.c for rec in ends.values() if rec is not None)
            if not t:
                continue
            if (lay.exact and t > EXACT_LIMIT) or (not lay.exact and m.skeys and t > CAP):
                self.stats.recomputed += 1
                st = self._alone(m, win.k)
            else:
                st = m.state(ends)
            result = lay.result(st)
            if result is not None:
                self.out[q][(self.part, win.k)] = result

    def _alone(self, m: _Member, k: int) -> tuple:
        """The query's own state of window ``k`` of the current partition, step by step."""
        lay = m.layout
        begin, end = window_bounds(k, self.within, self.slide)
        st = lay.zero
        for lo, hi in self.groups:
            if not begin <= self.ts[lo] < end:
                continue
            infos = []
            for r in range(lo, hi):
                t = self.row_type[r]
                if t is not None and t in m.var_of and self.masks[(m.name, t)][r]:
                    values = {a: col[r] for a, col in self.attrs.get(t, {}).items()}
                    infos.append((lay.index[m.var_of[t]], values))
            if infos:
                st = lay.group_step(infos, st)
        return st


def _plus(a: dict[int, Rec], b: dict[int, Rec]) -> dict[int, Rec]:
    out = dict(a)
    for sid, coef in b.items():
        out[sid] = add(out.get(sid), coef)  # type: ignore[assignment]
    return out
