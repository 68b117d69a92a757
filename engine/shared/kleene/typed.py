"""Shared Kleene execution (Hamlet): one pass over the events of a sharable set.

A sharing group of kind ``kleene`` names queries that contain the same Kleene
sub-pattern ``K+`` (same event type, same local predicates and required
attributes on ``K``, same partitioning and windows, skip-till-any-match,
type-grained, no negation). Each query keeps COGRA's type-grained window
state (``strategies/cogra/layout.py``); the events of ``K`` are processed
once for the whole group instead of once per query.

Why that is exact (docs/engine.md, "Shared Kleene execution"). Let ``s`` be
what a query's ``K`` events extend from (1 when ``K`` starts the pattern,
plus the trend counts of ``K``'s other predecessors) and ``u = count(K) + s``.
A time stamp with ``k`` events of ``K`` multiplies ``u`` by ``f = 1 + k``
(each event extends every trend before its time stamp, or starts one), and
the sums ``W = count_K(K) + Σ count_K(others)`` and ``Z = sum_a(K) + Σ
sum_a(others)`` become ``f·W + k·u`` and ``f·Z + S·u`` (``S``: the sum of
``a`` over the ``k`` events). As long as ``s`` does not change, a run of such
time stamps is therefore the same affine map for every query of the group:

    u' = F·u,   W' = F·W + G·u,   Z' = F·Z + H_a·u

with ``F = Π f_j``, ``G = Σ_j k_j Π_{i≠j} f_i``, ``H_a = Σ_j S_j Π_{i≠j} f_i``.
The graphlet (the run of ``K`` time stamps) keeps these *shared
coefficients* per window; each query keeps a *snapshot* of them taken when
its own state was last brought up to date. A query's state is brought up to
date (``F``/``G``/``H`` since its snapshot, exact integer arithmetic) only
when one of its own non-``K`` events arrives or its window closes: between
two such events ``s`` is constant, so the affine map applies. Events of the
other types of a query go through that query's own generated step code.

Within one time stamp every event sees the state before it: per query, the
steps of variables ranked before ``K`` (its successors) run before the
shared ``K`` update, the others after it (``Layout.rank``).

The module follows that derivation: ``run_coefficients`` (``F``, ``G``, ``H``
of a run, ``single_event_run`` its closed form for one event per time
stamp), ``SharedWindow`` (a window's coefficients, composed run after run),
``Member.catch_up`` (a query's state brought up to date from them),
``share_burst`` (the per-burst decision), ``VisitedRows`` (the rows as the
pass reads them) and ``TypedPass`` (the pass, one method per step of a time
stamp); ``run_group`` is the entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
from trendlake.engine.aggregates import (
    CAP,
    NAN,
    FSum,
    contribution,
    exact_sum,
    float_terms,
    max_present,
    min_present,
    norm,
    sat,
    sum_sat,
)
from trendlake.engine.layout import Layout
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.shared.kleene import compiled, graph
from trendlake.engine.shared.kleene.graph import visited_column
from trendlake.engine.timeline import panes, window_range

__all__ = [
    "Member", "MemberState", "SharedStats", "SharedWindow", "Step", "TypedPass", "VisitedRows",
    "run_coefficients", "run_group", "share_burst", "single_event_run", "supports",
]

REBASE_BITS = 2048  # shared coefficients are rebased (every query brought up to date) beyond this size


def supports(queries: Sequence[CompiledQuery], shared: Mapping[str, str]) -> str | None:
    """None when the type-grained shared executor evaluates the group, else why not."""
    first = queries[0]
    ktype = None
    for q in queries:
        var = shared.get(q.name)
        problem = graph.member_problem(q, var, first)
        if problem is not None:
            return problem
        assert var is not None
        layout = Layout.of(q)
        i = layout.index[var]
        if not layout.ok or layout.rank is None or not layout.selfloop[i]:
            return f"query {q.name}: {var} is not a flat Kleene sub-pattern"
        if ktype is None:
            ktype = q.variables[var].type
        elif q.variables[var].type != ktype:
            return f"query {q.name}: shared variables of different types"
    return None


@dataclass
class SharedStats:
    """What the shared executor did (per group, summed over partitions)."""

    windows: int = 0
    graphlets: int = 0  # runs of shared-type time stamps with no other event of the group between
    bursts: int = 0  # time stamps holding events of the shared type, per open window
    shared_events: int = 0  # events of the shared type, once per window they are in
    snapshots: int = 0  # states brought up to date from the shared coefficients
    rebases: int = 0
    shared_bursts: int = 0  # shared-type time stamps (per window) propagated through the graphlet
    split_bursts: int = 0  # ... applied to each matching query on its own (predicates differ)
    event_snapshots: int = 0  # queries kept out of a shared update because they do not match it
    # with a dict: (partition, window) -> [bursts, shared, split, event snapshots, snapshots]
    # (the executor replaces its partition ids by the partition's key values)
    per_window: dict[tuple[Any, int], list[int]] | None = None
    # with a list: (partition id, window, query, events of K applied, u) per snapshot,
    # u = count(K) + s before the graphlet's time stamps were applied
    trace: list[tuple[Any, int, str, int, Any]] | None = None


class Step(NamedTuple):
    """A graphlet run applied to a window: its ``F`` and what its events of ``K`` hold."""

    F: int
    events: int
    sums: dict[str, Any]  # per attribute of K: the exact sum of its values over the run
    mins: dict[str, Any]
    maxs: dict[str, Any]
    H: dict[str, Any]  # the run's own H_a, from those exact sums


_MINS, _MAXS = attrgetter("mins"), attrgetter("maxs")


@dataclass
class MemberState:
    """One query's state in one window and its snapshot of the shared coefficients."""

    st: tuple
    epoch: int  # index of the first graphlet step not yet applied
    F: int
    G: int
    H: dict[str, int]


@dataclass
class SharedWindow:
    """The shared coefficients ``F``, ``G``, ``H`` of one window since its last rebase, the
    steps composed into them, and the states of the queries with a state in the window."""

    k: int = 0
    F: int = 1
    G: int = 0
    H: dict[str, int] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    entries: dict[int, MemberState] = field(default_factory=dict)

    def compose(self, step: Step, g_run: int, h_scaled: Mapping[str, int]) -> None:
        """Follow the window's affine map by a run's: ``G' = G·F_run + G_run·F``,
        ``H' = H·F_run + H_run·F``, ``F' = F·F_run``."""
        f_run, F = step.F, self.F
        self.G = self.G * f_run + g_run * F
        H = self.H
        for a in H:
            H[a] = H[a] * f_run + h_scaled[a] * F
        self.F = F * f_run
        self.steps.append(step)

    def snapshot(self, e: MemberState) -> None:
        """``e`` is up to date: it snapshots the coefficients as they are now."""
        e.epoch = len(self.steps)
        e.F = self.F
        e.G = self.G
        e.H = dict(self.H)

    def h_since(self, e: MemberState, a: str, f_rel: int, exact: bool) -> Any:
        """``H_a`` of the steps since the snapshot ``e``: from the window's exact ``H`` when
        ``exact`` (``(H - H_e·F_rel) / F_e``), else composed from the steps' own ``H``."""
        if exact:
            return (self.H[a] - e.H[a] * f_rel) // e.F
        h: Any = 0
        big = 1
        for step in self.steps[e.epoch:]:
            h = h * step.F + step.H[a] * big
            big *= step.F
        return h

    def restart(self) -> None:
        """Restart the coefficients at the identity (every state already up to date)."""
        self.F, self.G = 1, 0
        self.H = {a: 0 for a in self.H}
        self.steps = []
        for e in self.entries.values():
            self.snapshot(e)


def run_coefficients(ks: Sequence[int], sums: Mapping[str, Sequence[Any]]) -> tuple[int, int, dict[str, Any]]:
    """``F``, ``G`` and ``H_a`` of a run of time stamps, the ``j``-th with ``ks[j]`` events of ``K``
    whose values of ``a`` sum to ``sums[a][j]``: ``F = Π f_j``, ``G = Σ_j k_j Π_{i≠j} f_i``,
    ``H_a = Σ_j S_j Π_{i≠j} f_i`` with ``f_j = 1 + k_j``, composed time stamp by time stamp."""
    f_run, g_run = 1, 0
    h_run: dict[str, Any] = {a: 0 for a in sums}
    for j, kx in enumerate(ks):
        fx = 1 + kx
        g_run = g_run * fx + kx * f_run
        for a, s in sums.items():
            h_run[a] = h_run[a] * fx + s[j] * f_run
        f_run *= fx
    return f_run, g_run, h_run


def single_event_run(n: int, totals: Mapping[str, Any]) -> tuple[int, int, dict[str, Any]]:
    """``run_coefficients`` of ``n`` time stamps of one event each, in closed form:
    ``F = 2**n``, ``G = n·2**(n-1)``, ``H_a = 2**(n-1)·S_a`` (``S_a`` the sum over the run)."""
    half = 1 << (n - 1)
    return 1 << n, n * half, {a: s * half for a, s in totals.items()}


def share_burst(size: int, kept_out: int, snapshot_cost: float, dynamic: bool) -> bool:
    """Hamlet's per-burst decision: share the burst with its largest class of ``size``
    queries, ``kept_out`` queries brought up to date around it, when ``1 + c·kept_out <
    (1 + c)·size``; always when the decision is static."""
    return not dynamic or 1 + snapshot_cost * kept_out < (1 + snapshot_cost) * size


class Member:
    """A query of the group: its layout, compiled step code and shared variable, and how its
    state is brought up to date from the shared coefficients."""

    def __init__(self, query: CompiledQuery, var: str) -> None:
        self.query = query
        self.layout = layout = Layout.of(query)
        self.i = i = layout.index[var]
        self.var = var
        self.nv = len(layout.vars)
        self.base = i * layout.stride
        self.start = 1 if layout.start[i] else 0
        self.others = layout.others[i]
        self.rank = layout.rank
        assert self.rank is not None
        self.before = [self.rank[v] < self.rank[i] for v in range(self.nv)]
        # the generated kernel applies a block of (code, k, stats...) rows to a state
        _, self.kernel = layout.instantiate([], [], [[] for _ in layout.stat_cols], [])
        # how the member's own step code bounds values: saturation, or exact (queries with AVG)
        self.keep_count = norm if layout.exact else sat
        self.keep_sum = norm if layout.exact else sum_sat

    def extends_from(self, st: tuple) -> Any:
        """``s``: 1 when ``K`` starts the pattern, plus the counts of ``K``'s other predecessors."""
        s = self.start
        stride = self.layout.stride
        for p in self.others:
            s += st[p * stride]
        return s

    def catch_up(self, st: tuple, win: SharedWindow, e: MemberState, u: Any, s: Any, int_attrs: set[str]) -> tuple:
        """The state ``st`` (snapshot ``e``, ``u = count(K) + s``) after the window's steps since
        the snapshot: ``count(K) = u·F - s``, ``W = W0·F + G·u`` (W0 with the others' counts
        of K), ``Z = Z0·F + H_a·u``, extrema over the steps' events. Saturated (not exact):
        ``u·F > CAP`` once ``F > CAP + 1``."""
        lay = self.layout
        nan = u != u
        f_rel = win.F // e.F
        past = not lay.exact and (nan or f_rel > CAP + 1)  # then u F - s >= F - 1 > CAP
        new = list(st)
        new[self.base] = NAN if past else self.keep_count(u * f_rel - s)
        if lay.cvars:
            g_rel = 0 if past else (win.G - e.G * f_rel) // e.F
            self._counts_of_k(new, st, u, f_rel, g_rel, past)
        self._sums(new, st, win, e, u, f_rel, nan, int_attrs)
        self._extrema(new, st, win.steps[e.epoch:])
        return tuple(new)

    def _counts_of_k(self, new: list, st: tuple, u: Any, f_rel: int, g_rel: int, past: bool) -> None:
        """``W' = W0·F + u·G`` for ``COUNT(K)``, ``W0·F`` for the other COUNT(E)."""
        lay = self.layout
        stride, o_w, base = lay.stride, lay.o_w, self.base
        for jj, ev in enumerate(lay.cvars):
            sw = 0
            for p in self.others:
                sw += st[p * stride + o_w + jj]
            w0 = st[base + o_w + jj] + sw
            if past:  # W = W0 F + (u G if own): saturated unless nothing is counted
                new[base + o_w + jj] = NAN if (w0 or ev == self.var) else st[base + o_w + jj]
                continue
            w = w0 * f_rel + (u * g_rel if ev == self.var else 0)
            new[base + o_w + jj] = self.keep_count(w - sw)

    def _sums(self, new: list, st: tuple, win: SharedWindow, e: MemberState, u: Any, f_rel: int,
              nan: bool, int_attrs: set[str]) -> None:
        """``Z' = Z0·F + u·H_a`` for ``SUM(K.a)``, ``Z0·F`` for the other sums."""
        lay = self.layout
        stride, o_z, base = lay.stride, lay.o_z, self.base
        for jj, (ev, a) in enumerate(lay.skeys):
            sz = 0
            for p in self.others:
                sz += st[p * stride + o_z + jj]
            z = (st[base + o_z + jj] + sz) * f_rel
            if ev == self.var:
                h_rel = win.h_since(e, a, f_rel, a in int_attrs)
                if nan:
                    if any(_nonzero(step.sums[a]) for step in win.steps[e.epoch:]):
                        z = NAN
                elif h_rel:  # exact: ints, or FSum values for a float column
                    z = z + u * h_rel
            new[base + o_z + jj] = self.keep_sum(z - sz)

    def _extrema(self, new: list, st: tuple, steps: list[Step]) -> None:
        """MIN/MAX: over the predecessors' and, for ``K``'s attributes, over the steps' events."""
        lay = self.layout
        stride, base = lay.stride, self.base
        extrema = ((lay.nkeys, lay.o_n, min_present, _MINS), (lay.xkeys, lay.o_x, max_present, _MAXS))
        for keys, off, fn, of_step in extrema:
            for jj, (ev, a) in enumerate(keys):
                mm = st[base + off + jj]
                for p in self.others:
                    mm = fn(mm, st[p * stride + off + jj])
                if ev == self.var:
                    for step in steps:
                        mm = fn(mm, of_step(step)[a])
                new[base + off + jj] = mm

    def step_row(self, v: int, rows: list[int], col_lists: Mapping[str, list]) -> tuple:
        """The step of variable v over the events ``rows`` of one time stamp: (code, k, S/MN/MX
        of each statistics column), as the generated kernel reads it."""
        k = len(rows)
        code = self.nv + v if (k > 1 and self.layout.selfloop[v]) else v
        row: list[Any] = [code, k]
        for kind, a_index in self.layout.stat_cols:
            values = [x for x in (col_lists[self.layout.attrs[a_index]][r] for r in rows) if x is not None] or [0]
            row.append(exact_sum(values) if kind == "S" else min(values) if kind == "MN" else max(values))
        return tuple(row)

    def steps_of(self, rows: list[int], codes: list[int], before: bool, col_lists: Mapping[str, list]) -> list[tuple]:
        """The rank-ordered steps of the member's rows of one time stamp (one per variable; ``codes``
        its variable per row), of the variables ranked before K (``before``) or after it."""
        by_var: dict[int, list[int]] = {}
        for r in rows:
            v = codes[r]
            if self.before[v] == before:
                by_var.setdefault(v, []).append(r)
        return [self.step_row(v, by_var[v], col_lists) for v in sorted(by_var, key=lambda x: self.rank[x])]


class VisitedRows:
    """The group's visited rows as the pass reads them: which events of ``K`` each member
    matches, each member's own events and their one-event steps, the attribute columns, and
    the time-stamp groups (per partition) with the runs of ``K``-only time stamps."""

    def __init__(self, members: list[Member], masks: Mapping[str, Mapping[str, np.ndarray]], idx: np.ndarray,
                 ts: np.ndarray, attrs: Mapping[str, Any], kid: np.ndarray, within: int, slide: int) -> None:
        self._events_of_k(members, masks, idx)
        self._columns(members, attrs, idx)
        self._time_stamps(ts[idx].tolist(), kid, within, slide)
        self._own_events(members, masks, idx)

    def _events_of_k(self, members: list[Member], masks: Mapping[str, Mapping[str, np.ndarray]],
                     idx: np.ndarray) -> None:
        """Per member the events of K it matches (members with other local predicates on K match
        other events; pruned partitions match none); ``uniform``: every member matches every
        event of K it could (the same predicates), one class always."""
        kmasks = np.vstack([masks[m.query.name][m.var][idx] for m in members])
        self.kmask = kmask = np.logical_or.reduce(kmasks, axis=0)
        self.uniform = bool(np.all(kmasks[:, kmask] == kmasks[0, kmask])) if len(members) > 1 else True
        self.km_lists = [km.tolist() for km in kmasks] if not self.uniform else []
        self.kmask_l = kmask.tolist()

    def _columns(self, members: list[Member], attrs: Mapping[str, Any], idx: np.ndarray) -> None:
        """The attribute columns at the visited rows. The shared coefficients H of an attribute
        are exact integers: ints as they are, floats as exact ``FSum`` terms (``scaled``)."""
        names = sorted({a for m in members for a in m.layout.attrs})
        cols = {a: visited_column(attrs, a, idx) for a in names}
        self.k_attrs = sorted({a for m in members for a in m.layout.own[m.i]})
        scale = {a: _scale(cols[a]) for a in self.k_attrs}
        self.int_attrs = {a for a, sc in scale.items() if sc is not None}
        self.col_lists = {a: (c.tolist() if isinstance(c, np.ndarray) else list(c)) for a, c in cols.items()}
        self.scaled = {a: (float_terms(cols[a]) if scale[a] != 1 else self.col_lists[a]) for a in self.int_attrs}

    def _time_stamps(self, ts_l: list[int], kid: np.ndarray, within: int, slide: int) -> None:
        """The time-stamp groups of each partition (``gstart``, ``gend``), their events of K
        (``kcount``) and panes (``gpane``)."""
        n = len(ts_l)
        self.ts_l, self.kid_l = ts_l, kid.tolist()
        newg = np.ones(n, dtype=bool)
        ts_arr = np.asarray(ts_l, dtype=np.int64)
        if n > 1:
            newg[1:] = (ts_arr[1:] != ts_arr[:-1]) | (kid[1:] != kid[:-1])
        gstart = np.flatnonzero(newg)
        self.gstart_np, self.gend_np = gstart, np.append(gstart[1:], n)
        self.gstart, self.gend = gstart.tolist(), self.gend_np.tolist()
        ng = len(self.gstart)
        self.kcount = np.add.reduceat(self.kmask.astype(np.int64), gstart).tolist() if n else []
        self.gpane = panes(ts_arr[gstart], within, slide).tolist() if n > 1 else [0] * ng

    def _own_events(self, members: list[Member], masks: Mapping[str, Mapping[str, np.ndarray]],
                    idx: np.ndarray) -> None:
        """Per member the variable of each visited row (``codes``, -1: not its own, K excluded);
        per time-stamp group the (member, row) pairs of the members' own events in row order
        (``pair_*`` from ``pair_lo[g]`` to ``pair_hi[g]``); per member and row its one-event
        step (``single``); ``k_only``: groups holding events of K only."""
        n = len(self.ts_l)
        codes = []
        for m in members:
            code = np.full(n, -1, dtype=np.int64)
            for v_index, v in enumerate(m.layout.vars):
                if v_index != m.i:
                    code[masks[m.query.name][v][idx]] = v_index
            codes.append(code)
        self.codes = [c.tolist() for c in codes]
        own = np.vstack(codes) >= 0 if codes else np.zeros((0, n), dtype=bool)
        own &= ~self.kmask
        members_of_pairs, rows_of_pairs = np.nonzero(own)  # sorted by member, then row
        by_row = np.argsort(rows_of_pairs, kind="stable")  # by row, then member
        rows_of_pairs, members_of_pairs = rows_of_pairs[by_row], members_of_pairs[by_row]
        self.pair_lo = np.searchsorted(rows_of_pairs, self.gstart_np).tolist()
        self.pair_hi = np.searchsorted(rows_of_pairs, self.gend_np).tolist()
        self.pair_rows, self.pair_members = rows_of_pairs.tolist(), members_of_pairs.tolist()
        self.single = [self._single_steps(m, np.flatnonzero(own[j]).tolist(), self.codes[j])
                       for j, m in enumerate(members)]
        gs, ge, kc, lo, hi = self.gstart, self.gend, self.kcount, self.pair_lo, self.pair_hi
        self.k_only = [kc[g] == ge[g] - gs[g] and lo[g] == hi[g] for g in range(len(gs))] if self.uniform else []

    def _single_steps(self, m: Member, rows: list[int], code: list[int]) -> dict[int, tuple]:
        """Row -> the member's one-event step (code, 1, the event's value per statistics column)."""
        col_lists = self.col_lists
        stat_values = [[0 if x is None else (contribution(x) if kind == "S" else x)
                        for x in (col_lists[m.layout.attrs[a]][r] for r in rows)]
                       for kind, a in m.layout.stat_cols]
        return {r: (code[r], 1, *vals) for r, *vals in zip(rows, *stat_values, strict=True)}

    def run_end(self, g: int) -> int:
        """The last group of the run of K-only time stamps starting at group ``g`` (``g`` when
        there is none): one partition, one pane, one shared update composed in closed form."""
        g_last = g
        if self.uniform and self.k_only[g]:
            k_only, gstart, kid_l, gpane = self.k_only, self.gstart, self.kid_l, self.gpane
            ng, p_id = len(gstart), kid_l[gstart[g]]
            while (g_last + 1 < ng and k_only[g_last + 1] and kid_l[gstart[g_last + 1]] == p_id
                   and gpane[g_last + 1] == gpane[g]):
                g_last += 1
        return g_last


class TypedPass:
    """One pass over a group's visited rows (docs/engine.md, "Shared Kleene execution"): per
    time stamp, each member's steps of the variables ranked before K, the shared update of K
    (a graphlet run, or one burst split into classes of members), the members' own steps of
    K, then their steps ranked after K; a member's state is brought up to date from the
    shared coefficients only when it is read (its own events, its window closing, a rebase)."""

    def __init__(self, members: list[Member], rows: VisitedRows, stats: SharedStats, within: int, slide: int,
                 dynamic: bool, snapshot_cost: float) -> None:
        self.members, self.rows, self.stats = members, rows, stats
        self.within, self.slide = within, slide
        self.dynamic, self.snapshot_cost = dynamic, snapshot_cost
        self.int_attrs = rows.int_attrs
        self.starters = [j for j, m in enumerate(members) if m.start]
        self.windows: dict[int, SharedWindow] = {}  # open windows, in increasing order
        self.part: Any = None
        self.in_graphlet = False
        self.kept_out: dict[int, list[int]] = {}  # window -> members kept out of the shared update
        self.own_k: list[tuple[int, list[tuple]]] = []  # members' own steps of K events
        self.out: dict[str, dict[tuple[int, int], WindowResult]] = {m.query.name: {} for m in members}

    def run(self) -> dict[str, dict[tuple[int, int], WindowResult]]:
        """Results per query and (partition id, window index)."""
        g, ng = 0, len(self.rows.gstart)
        while g < ng:
            g = self.time_stamp(g)
        self.close_all()
        return self.out

    def time_stamp(self, g: int) -> int:
        """Process time-stamp group ``g`` (with the K-only run it starts); the next group."""
        rows = self.rows
        g_last = rows.run_end(g)
        lo = rows.gstart[g]
        live = self.enter(rows.ts_l[lo], rows.kid_l[lo])
        touched, after = self.own_events_before_k(g, live)
        if g_last > g:  # a run of K-only time stamps: all its rows are events of K
            kk = self.graphlet_run(g, g_last, live)
        elif rows.kcount[g]:
            kk = self.burst(g, live)
        else:
            kk = 0
        self.finish(kk, live, after)
        self.in_graphlet = bool(kk) and not touched
        return g_last + 1

    # -- windows -------------------------------------------------------------------------
    def enter(self, t: int, p_id: Any) -> range:
        """The windows of time ``t`` in partition ``p_id``, open; those that ended closed."""
        if p_id != self.part:
            self.close_all()
            self.part = p_id
            self.in_graphlet = False
        live = window_range(t, self.within, self.slide)
        windows = self.windows
        while windows:
            k = next(iter(windows))  # windows open in increasing order
            if k >= live.start:
                break
            self.close(k)
        for k in live:
            if k not in windows:
                self.open(k)
        return live

    def open(self, k: int) -> None:
        """A new window. A member whose K starts its pattern extends from the window's start;
        the others get their state at their first event in the window (before it, u = 0: the
        shared updates leave them unchanged)."""
        zeros = {a: 0 for a in self.int_attrs}
        win = self.windows[k] = SharedWindow(k=k, H=dict(zeros))
        self.stats.windows += 1
        for j in self.starters:
            win.entries[j] = MemberState(self.members[j].layout.zero, 0, 1, 0, dict(zeros))

    def close(self, k: int) -> None:
        win = self.windows.pop(k)
        for j, e in win.entries.items():
            st = self.bring_up_to_date(win, j, e)
            r = self.members[j].layout.result(st)
            if r is not None:
                self.out[self.members[j].query.name][(self.part, k)] = r

    def close_all(self) -> None:
        for k in list(self.windows):
            self.close(k)

    # -- a member's state ----------------------------------------------------------------
    def bring_up_to_date(self, win: SharedWindow, j: int, e: MemberState) -> tuple:
        """Member j's state in ``win`` with the steps since its snapshot applied, re-snapshotted."""
        if e.epoch == len(win.steps):
            return e.st
        m = self.members[j]
        st = e.st
        s = m.extends_from(st)
        u = st[m.base] + s
        if u:
            self.count_snapshot(win, m, e, u)
            st = e.st = m.catch_up(st, win, e, u, s, self.int_attrs)
        win.snapshot(e)
        return st

    def count_snapshot(self, win: SharedWindow, m: Member, e: MemberState, u: Any) -> None:
        stats = self.stats
        stats.snapshots += 1
        if stats.per_window is not None:
            stats.per_window.setdefault((self.part, win.k), [0, 0, 0, 0, 0])[4] += 1
        if stats.trace is not None:
            applied = sum(step.events for step in win.steps[e.epoch:])
            stats.trace.append((self.part, win.k, m.query.name, applied, u))

    def entry(self, win: SharedWindow, j: int) -> MemberState:
        """Member j's state in ``win``, created (zero, snapshotted now) at its first event."""
        e = win.entries.get(j)
        if e is None:
            e = win.entries[j] = MemberState(self.members[j].layout.zero, len(win.steps), win.F, win.G, dict(win.H))
        return e

    def apply_steps(self, j: int, steps: list[tuple], live: range) -> None:
        """Member j's own steps in each live window, on its state brought up to date."""
        kernel = self.members[j].kernel
        for k in live:
            win = self.windows[k]
            e = self.entry(win, j)
            e.st = kernel(self.bring_up_to_date(win, j, e), steps)

    def rebase(self, win: SharedWindow) -> None:
        """Bring every query up to date and restart the shared coefficients at the identity."""
        for j, e in win.entries.items():
            self.bring_up_to_date(win, j, e)
        win.restart()
        self.stats.rebases += 1

    # -- one time stamp ------------------------------------------------------------------
    def own_events_before_k(self, g: int, live: range) -> tuple[dict[int, list[int]], list[tuple[int, list[tuple]]]]:
        """The members' own events of group ``g``: the steps of variables ranked before K
        (successors of K: they see K before this time stamp) applied now; the members' rows,
        and the steps left for after K's update."""
        rows = self.rows
        touched: dict[int, list[int]] = {}
        pair_members, pair_rows = rows.pair_members, rows.pair_rows
        for x in range(rows.pair_lo[g], rows.pair_hi[g]):
            touched.setdefault(pair_members[x], []).append(pair_rows[x])
        after = []
        for j, mine in touched.items():
            m = self.members[j]
            if len(mine) == 1:
                step = rows.single[j][mine[0]]
                if m.before[step[0]]:
                    self.apply_steps(j, [step], live)
                else:
                    after.append((j, [step]))
                continue
            steps = m.steps_of(mine, rows.codes[j], True, rows.col_lists)
            if steps:
                self.apply_steps(j, steps, live)
            steps = m.steps_of(mine, rows.codes[j], False, rows.col_lists)
            if steps:
                after.append((j, steps))
        return touched, after

    def graphlet_run(self, g: int, g_last: int, live: range) -> int:
        """The K-only time stamps of groups ``g`` to ``g_last`` as one shared update; its events."""
        rows = self.rows
        gstart, gend, cols, scaled = rows.gstart, rows.gend, rows.col_lists, rows.scaled
        lo, hi = gstart[g], gend[g_last]
        kk, stamps = hi - lo, g_last - g + 1
        if not self.in_graphlet:
            self.stats.graphlets += 1
        k_attrs = rows.k_attrs
        sums = {a: exact_sum(cols[a][lo:hi]) for a in k_attrs}
        mins = {a: min(cols[a][lo:hi]) for a in k_attrs}
        maxs = {a: max(cols[a][lo:hi]) for a in k_attrs}
        if kk == stamps:  # one event per time stamp: in closed form
            f_run, g_run, h_run = single_event_run(kk, sums)
            _, _, h_scaled = single_event_run(kk, {a: sum(scaled[a][lo:hi]) for a in self.int_attrs})
        else:
            groups = range(g, g_last + 1)
            ks = [gend[x] - gstart[x] for x in groups]
            f_run, g_run, h_run = run_coefficients(
                ks, {a: [exact_sum(cols[a][gstart[x]:gend[x]]) for x in groups] for a in k_attrs})
            _, _, h_scaled = run_coefficients(
                ks, {a: [sum(scaled[a][gstart[x]:gend[x]]) for x in groups] for a in self.int_attrs})
        self.shared_update(live, Step(f_run, kk, sums, mins, maxs, h_run), g_run, h_scaled, stamps)
        return kk

    def burst(self, g: int, live: range) -> int:
        """The events of K of group ``g`` (with events of the members' own): one shared update
        of the class it goes to (``f = 1 + k``, ``G = k``, ``H_a = S_a``); its events."""
        rows = self.rows
        if not self.in_graphlet:
            self.stats.graphlets += 1
        kmask = rows.kmask_l
        krows = [r for r in range(rows.gstart[g], rows.gend[g]) if kmask[r]]
        if not rows.uniform:
            krows = self.classes_of_burst(krows, live)
        kk = len(krows)
        if kk:
            # a member reading an attribute of K requires it: a class holding events
            # without it has no member that reads it (those values are skipped)
            cols = rows.col_lists
            present = {a: [v for v in (cols[a][r] for r in krows) if v is not None] or [0] for a in rows.k_attrs}
            sums = {a: exact_sum(vs) for a, vs in present.items()}
            h_scaled = {a: sum(rows.scaled[a][r] for r in krows) for a in self.int_attrs}
            mins = {a: min(vs) for a, vs in present.items()}
            maxs = {a: max(vs) for a, vs in present.items()}
            self.shared_update(live, Step(1 + kk, kk, sums, mins, maxs, sums), kk, h_scaled, 1)
        return kk

    def classes_of_burst(self, krows: list[int], live: range) -> list[int]:
        """Split the members by the events of K they match at this time stamp; returns the
        events of the shared update (empty: the burst is split), after arranging the rest:
        the other classes apply theirs on their own (``own_k``), and the members with a state
        outside the shared class are brought up to date now and re-snapshotted after it."""
        classes: dict[tuple[int, ...], list[int]] = {}
        for j in range(len(self.members)):
            km = self.rows.km_lists[j]
            classes.setdefault(tuple(r for r in krows if km[r]), []).append(j)
        best = max((c for c in classes if c), key=lambda c: len(classes[c]))
        size = len(classes[best])
        share = share_burst(size, len(self.members) - size, self.snapshot_cost, self.dynamic)
        for rows_c, js in classes.items():
            if rows_c and (not share or rows_c != best):
                for j in js:
                    m = self.members[j]
                    self.own_k.append((j, [m.step_row(m.i, list(rows_c), self.rows.col_lists)]))
        stats = self.stats
        for k in live:
            counts = stats.per_window.setdefault((self.part, k), [0, 0, 0, 0, 0]) if stats.per_window is not None else None
            if share:
                win = self.windows[k]
                chosen = set(classes[best])
                out = [j for j in win.entries if j not in chosen]  # members without state: unaffected
                for j in out:
                    self.bring_up_to_date(win, j, win.entries[j])
                self.kept_out[k] = out
                stats.event_snapshots += len(out)
                if counts is not None:
                    counts[3] += len(out)
            else:
                stats.split_bursts += 1
                stats.bursts += 1
                if counts is not None:
                    counts[0] += 1
                    counts[2] += 1
        return list(best) if share else []

    def shared_update(self, live: range, step: Step, g_run: int, h_scaled: dict[str, int], stamps: int) -> None:
        """Compose each live window's coefficients with those of a graphlet run (F, G, H)."""
        stats = self.stats
        for k in live:
            self.windows[k].compose(step, g_run, h_scaled)
            stats.bursts += stamps
            stats.shared_bursts += stamps
            stats.shared_events += step.events
            if stats.per_window is not None:
                counts = stats.per_window.setdefault((self.part, k), [0, 0, 0, 0, 0])
                counts[0] += stamps
                counts[1] += stamps

    def finish(self, kk: int, live: range, after: list[tuple[int, list[tuple]]]) -> None:
        """After K's update: re-snapshot the members kept out of it, rebase windows whose
        coefficients grew past ``REBASE_BITS``, then the members' own steps of K and the steps
        of the variables ranked after K (predecessors of K, and the rest)."""
        for k, kept in self.kept_out.items():
            win = self.windows[k]
            for j in kept:
                win.snapshot(win.entries[j])
        self.kept_out.clear()
        if kk:
            for k in live:
                win = self.windows[k]
                if win.F.bit_length() > REBASE_BITS:
                    self.rebase(win)
        for j, steps in self.own_k:
            self.apply_steps(j, steps, live)
        self.own_k.clear()
        for j, steps in after:
            self.apply_steps(j, steps, live)


def _nonzero(x: Any) -> bool:
    """Whether a step's sum is not zero (an FSum of 0.0 values is zero)."""
    return not x.is_zero() if x.__class__ is FSum else bool(x)


def _scale(col: Any) -> int | None:
    """How the shared coefficients H of a column are kept exact: 1 for an int column (the
    values as they are), 2 for a float column (its values as exact ``FSum`` terms), None
    for anything else (H composed per step from the steps' exact sums, ``h_since``)."""
    if isinstance(col, np.ndarray) and col.dtype.kind in "iu":
        return 1
    if isinstance(col, np.ndarray) and col.dtype.kind == "f":
        return 2
    return None


def run_group(
    queries: Sequence[CompiledQuery],
    shared: Mapping[str, str],
    masks: Mapping[str, Mapping[str, np.ndarray]],
    idx: np.ndarray,
    ts: np.ndarray,
    attrs: Mapping[str, Any],
    kid: np.ndarray,
    stats: SharedStats | None = None,
    *,
    dynamic: bool,
    snapshot_cost: float,
) -> dict[str, dict[tuple[int, int], WindowResult]]:
    """Results per query and (partition id, window index) of a sharing group.

    ``masks[q][v]``: which rows match variable ``v`` of query ``q`` (over all
    rows, False outside the partitions the query keeps); ``idx``: the rows to
    visit in (partition, ts) order; ``kid``: their partition ids.

    Queries may match different events of the shared type (different local
    predicates): per time stamp the queries are split by the events they match.
    The largest class goes through the shared update, the others are kept out of
    it (brought up to date before and re-snapshotted after: snapshots at event
    level) and apply their events on their own. ``dynamic`` (Hamlet's per-burst
    decision): the burst is shared only when that is cheaper, ``1 + c·|kept out| <
    (1 + c)·|class|`` with ``c`` = ``snapshot_cost``, else split: every matching query
    on its own. Otherwise (static) always shared."""
    stats = stats if stats is not None else SharedStats()
    # count states: one compiled pass, every class of queries on its own coefficients
    fast = compiled.run(queries, shared, masks, idx, ts, kid, stats)
    if fast is not None:
        return fast
    members = [Member(q, shared[q.name]) for q in queries]
    within, slide = queries[0].within, queries[0].slide
    rows = VisitedRows(members, masks, idx, ts, attrs, kid, within, slide)
    return TypedPass(members, rows, stats, within, slide, dynamic, snapshot_cost).run()
