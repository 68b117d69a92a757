"""COGRA's type-grained kernel driver: bursts collapsed into steps, panes, open windows per pane.

A partition's relevant events (``prepare.Prepared``) become steps (:class:`Steps`:
bursts of one variable, simultaneous steps, group steps), the steps of a pane run
once for all the windows open in it (:class:`Panes`), and each window keeps one
state of the layout's generated step code (``engine.layout``). :class:`Kernel` is
one run; ``run_compiled`` the same over states of counts only in C (``_steps.c``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from trendlake.engine.layout import LIMIT, Layout, frozen
from trendlake.engine.numbers import FSum, exact_sum
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult, count_results
from trendlake.engine.strategies.cogra.prepare import Prepared
from trendlake.engine.timeline import panes, window_range

try:  # the compiled count kernel (setup.py builds it where a C compiler is at hand)
    from trendlake.engine.strategies.cogra import _steps
except ImportError:  # pragma: no cover - exercised by installs without a compiler
    _steps = None

CHUNK = 2048  # steps between checks whether a window's state saturated completely
# run count states on the compiled kernel when it is built (tests and benchmarks switch it off)
COMPILED = True


@dataclass
class Steps:
    """A partition's events cut into kernel steps: a burst (a run of time stamps, one
    event each, of one variable in one pane, at most ``LIMIT`` long), a simultaneous step
    (k events of one Kleene variable at one time stamp), or a group step (a time stamp
    whose events the generated code evaluates one by one from the state before it)."""

    lo: np.ndarray  # first event of each step
    hi: np.ndarray  # its end (the next step's first event)
    code: np.ndarray  # variable index; nv + i for a simultaneous step of i; -1 for a group step
    special: np.ndarray  # group step
    size: np.ndarray  # events of a burst or simultaneous step; the group's index for a group step
    pane: np.ndarray  # the pane (``timeline.panes``) of each step
    kid: np.ndarray | None  # the partition of each step (keyed runs)


@dataclass
class Panes:
    """Runs of steps in one pane: steps ``lo[i]:hi[i]`` at time ``ts[i]`` (the first
    event's), of partition ``kid[i]``, ``start[i]`` when one of them may start a trend;
    ``visit``: the panes some open window still needs."""

    lo: list[int]
    hi: list[int]
    ts: list[int]
    kid: list[int] | None
    start: list[bool]
    visit: list[int]


class Kernel:
    """One run of the type-grained kernel (the generated step code of ``engine.layout``)
    over the prepared events of one partition; with ``kid`` (a non-decreasing partition
    id per event) of many partitions at once, keyed ``(kid, window index)``: no
    time-stamp group, step or pane spans two partitions, and every open window closes
    where the next partition starts."""

    def __init__(self, query: CompiledQuery, layout: Layout, prep: Prepared, kid: np.ndarray | None = None) -> None:
        self.query = query
        self.layout = layout
        self.prep = prep
        self.kid = kid
        self.nv = len(layout.vars)
        self.code = prep.code  # reordered within time stamps by ``simultaneous``
        self.cols = prep.cols

    def run(self) -> dict[Any, WindowResult]:
        """Results per window index (per ``(kid, window index)`` with ``kid``)."""
        query, layout, prep = self.query, self.layout, self.prep
        if len(prep.ts) == 0:
            return {}
        if self.kid is None and compiled_for(layout) and not prep.multi:
            masks = [prep.code == i for i in range(self.nv)]
            got = run_compiled(query, layout, prep.ts, masks, None, None)
            if got is not None:
                return got
        steps = self.steps()
        groups = self.group_steps(steps)  # numbers the group steps in ``steps.size``
        rows, kernel = layout.instantiate(steps.code.tolist(), steps.size.tolist(), self.statistics(steps), groups)
        return self.windows(self.panes(steps), rows, kernel)

    def time_stamp_groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """The groups of events of one time stamp (and partition): their first events,
        their step codes, whether each is a group step, and whether simultaneous events
        were ordered into steps of one variable each."""
        ts, kid, layout, nv = self.prep.ts, self.kid, self.layout, self.nv
        n = len(ts)
        newg = np.ones(n, dtype=bool)
        newg[1:] = ts[1:] != ts[:-1]
        if kid is not None:
            newg[1:] |= kid[1:] != kid[:-1]
        if layout.rank is not None and not self.prep.multi and int(np.count_nonzero(newg)) < n:
            # Simultaneous events without aliases: within a time stamp, order the events by
            # variable (a variable before its predecessors), so that applying one step per
            # variable, each reading the state its predecessors had before the time stamp, is
            # exactly the time stamp's effect; k events of one Kleene variable become one
            # "simultaneous" step (code nv + i). No event leaves the generated kernel.
            self.code, self.cols, newg = _simultaneous_steps(layout, self.code, self.cols, newg, nv)
            gstart = np.flatnonzero(newg)
            gcode = self.code[gstart]
            gsize = np.diff(np.append(gstart, n))
            simultaneous = (gsize > 1) & np.asarray(layout.selfloop, dtype=bool)[gcode]
            return gstart, np.where(simultaneous, gcode + nv, gcode), np.zeros(len(gstart), dtype=bool), True
        gstart = np.flatnonzero(newg)
        ng = len(gstart)
        gcode = self.code[gstart]
        impure = np.zeros(ng, dtype=bool)  # a group of events of several variables
        if ng < n:
            gid = np.cumsum(newg) - 1
            diff = self.code != gcode[gid]
            if diff.any():
                impure[gid[diff]] = True
            gsize = np.diff(np.append(gstart, n))
        else:
            gsize = np.ones(ng, dtype=np.int64)
        selfloop = np.asarray(layout.selfloop + [False], dtype=bool)  # index -1 -> False
        return gstart, gcode, impure | (gcode < 0) | ((gsize > 1) & selfloop[gcode]), False

    def steps(self) -> Steps:
        """Time-stamp groups merged into bursts: consecutive groups of one variable in one
        pane (and partition), none special, cut every ``LIMIT`` groups."""
        ts, n, nv = self.prep.ts, len(self.prep.ts), self.nv
        gstart, gcode, special, simultaneous = self.time_stamp_groups()
        ng = len(gstart)
        gseg = panes(ts[gstart], self.query.within, self.query.slide)
        gkid = self.kid[gstart] if self.kid is not None else None
        brk = np.ones(ng, dtype=bool)
        if ng > 1:
            brk[1:] = special[1:] | special[:-1] | (gcode[1:] != gcode[:-1]) | (gseg[1:] != gseg[:-1])
            if simultaneous:  # a simultaneous step never merges with the next time stamp's
                brk[1:] |= gcode[:-1] >= nv
            if gkid is not None:
                brk[1:] |= gkid[1:] != gkid[:-1]
        sstart = np.flatnonzero(brk)
        if len(sstart) < ng:  # cut bursts longer than LIMIT
            sid = np.cumsum(brk) - 1
            pos = np.arange(ng) - sstart[sid]
            brk |= pos % LIMIT == 0
            sstart = np.flatnonzero(brk)
        ev_lo = gstart[sstart]
        ev_hi = np.append(ev_lo[1:], n)
        scode = gcode[sstart].copy()
        sspecial = special[sstart]
        scode[sspecial] = -1
        size = (ev_hi - ev_lo).astype(np.int64)
        skid = gkid[sstart] if gkid is not None else None
        return Steps(ev_lo, ev_hi, scode, sspecial, size, gseg[sstart], skid)

    def group_steps(self, steps: Steps) -> list[Any]:
        """Per group step, its vertices: (variable, attribute values) per event and variable
        it matches, evaluated from the state before the group; the step's ``size`` becomes
        its index here."""
        groups: list[Any] = []
        if not steps.special.any():
            return groups
        attrs, code, cols, multi = self.layout.attrs, self.code, self.cols, self.prep.multi
        for s in np.flatnonzero(steps.special).tolist():
            infos = []
            for e in range(int(steps.lo[s]), int(steps.hi[s])):
                c = int(code[e])
                vs = multi[e] if c < 0 else [c]
                values = {a: _item(cols[a][e]) for a in attrs}
                infos.extend((v, values) for v in vs)
            steps.size[s] = len(groups)
            groups.append(infos)
        return groups

    def statistics(self, steps: Steps) -> list[list[Any]]:
        """Per statistic column of the layout (``layout.stat_cols``): per step the sum,
        minimum or maximum of an attribute over the step's events (for a variable's own
        sums, minima, maxima)."""
        layout, nv = self.layout, self.nv
        code_list = steps.code.tolist()
        per_attr = {}
        for a_index, a in enumerate(layout.attrs):
            kinds = {kind for kind, i in layout.stat_cols if i == a_index}
            owners = {i for i in range(nv) if a in layout.own[i]}
            owners |= {nv + i for i in owners}
            per_attr[a_index] = _step_stats(
                self.cols[a], steps.lo, steps.hi, code_list, owners, kinds, len(code_list)
            )
        return [per_attr[a][kind] for kind, a in layout.stat_cols]

    def panes(self, steps: Steps) -> Panes:
        """The runs of steps in one pane, and which of them an open window needs: a pane
        with no step of a START variable (group steps may hold one) leaves an all-zero
        window state all-zero, so windows open at the first such pane, and the panes after
        every window an earlier START pane (same partition) opened closed are skipped."""
        query, layout = self.query, self.layout
        newseg = steps.pane[1:] != steps.pane[:-1]
        if steps.kid is not None:
            newseg |= steps.kid[1:] != steps.kid[:-1]
        cut = np.flatnonzero(newseg) + 1
        seg_lo = np.concatenate(([0], cut)).tolist()
        seg_hi = np.concatenate((cut, [len(steps.code)])).tolist()
        seg_ts = self.prep.ts[steps.lo[seg_lo]]
        seg_kid = steps.kid[seg_lo] if steps.kid is not None else None
        # index nv + i (simultaneous step of variable i) -> start of i; -1 (group step) -> True
        starts = np.asarray(layout.start + layout.start + [True], dtype=bool)
        seg_start = np.logical_or.reduceat(starts[steps.code], seg_lo)
        last = np.maximum.accumulate(np.where(seg_start, np.arange(len(seg_lo)), -1))
        since = np.maximum(last, 0)
        alive = (last >= 0) & ((seg_ts[since] // query.slide) * query.slide + query.within > seg_ts)
        if seg_kid is not None:
            alive &= seg_kid[since] == seg_kid
        return Panes(
            seg_lo,
            seg_hi,
            seg_ts.tolist(),
            seg_kid.tolist() if seg_kid is not None else None,
            seg_start.tolist(),
            np.flatnonzero(alive).tolist(),
        )

    def windows(self, p: Panes, rows: Any, kernel: Any) -> dict[Any, WindowResult]:
        """The pane loop: open windows (each a state of the layout) take the steps of every
        pane they cover, shared by all of them; a window closes when its last pane passed
        (or its partition ended). A window whose state saturated completely (``frozen``)
        skips its remaining steps, checked every ``CHUNK`` steps."""
        within, slide = self.query.within, self.query.slide
        zero, result, frozen_ok = self.layout.zero, self.layout.result, self.layout.frozen_ok
        states: dict[int, tuple] = {}  # open windows, in increasing order
        out: dict[Any, WindowResult] = {}
        part: Any = None  # the partition of the open windows (keyed runs)

        def close(k: int) -> None:
            st = states.pop(k)
            if st is zero:
                return
            r = result(st)
            if r is not None:
                out[k if p.kid is None else (part, k)] = r

        for i in p.visit:
            lo, hi, t = p.lo[i], p.hi[i], p.ts[i]
            if p.kid is not None and p.kid[i] != part:
                for k in list(states):
                    close(k)
                part = p.kid[i]
            windows = window_range(t, within, slide)
            kmin = windows.start
            while states:
                k = next(iter(states))
                if k >= kmin:
                    break
                close(k)
            if p.start[i]:
                for k in windows:
                    if k not in states:
                        states[k] = zero
            step = CHUNK if frozen_ok else hi - lo
            for c in range(lo, hi, step):
                live = [
                    k
                    for k, st in states.items()
                    if (st is not zero or p.start[i]) and not (frozen_ok and frozen(st))
                ]
                if not live:
                    break
                block = rows(c, min(hi, c + step))
                if len(live) > 1:
                    block = list(block)  # the pane's steps, shared by its open windows
                for k in live:
                    states[k] = kernel(states[k], block)
        for k in list(states):
            close(k)
        return out


def compiled_for(layout: Layout) -> bool:
    """Whether the compiled kernel evaluates ``layout``'s queries: states of counts only
    (COUNT(*), COUNT(E); no sums, minima, maxima, not exact mode)."""
    return _steps is not None and COMPILED and layout.counts_only


def run_compiled(
    query: CompiledQuery,
    layout: Layout,
    ts: np.ndarray,
    masks: list[np.ndarray],
    idx: np.ndarray | None,
    starts: np.ndarray | None,
) -> dict[Any, WindowResult] | None:
    """Results of the compiled kernel (``_steps.c``), per window index, or with ``starts``
    per (partition index, window index); None where it leaves the run to the Python
    kernel (a visited row matching several variables, several events at one time stamp of
    a template with no simultaneous order, a window spanning millions of slides).

    ``ts``: time stamps of the rows; ``masks``: per variable of ``layout.vars`` whether a
    row matches it; ``idx``: the increasing rows to visit (None: all); ``starts``: the rows
    where the partitions start (None: one partition), rows in time order within each."""
    index = layout.index
    owners = tuple(index[e] if e in index else -1 for e in layout.cvars)
    got = _steps.run(
        np.ascontiguousarray(ts, dtype=np.int64),
        None if idx is None else np.ascontiguousarray(idx),
        tuple(np.ascontiguousarray(m, dtype=bool) for m in masks),
        None if starts is None else np.ascontiguousarray(starts),
        len(layout.vars),
        None if layout.rank is None else tuple(layout.rank),
        tuple(int(x) for x in layout.selfloop),
        tuple(int(x) for x in layout.start),
        tuple(tuple(p) for p in layout.preds),
        owners,
        tuple(layout.end),
        int(query.within),
        int(query.slide),
    )
    if got is None:
        return None
    kids_b, ks_b, vals_b = got
    ks = np.frombuffer(ks_b, dtype=np.int64).tolist()
    if not ks:
        return {}
    # per window: the trends, then COUNT(E) per key, summed over the END variables
    results = count_results(vals_b, len(ks), list(layout.cvars))
    if starts is None:
        return dict(zip(ks, results, strict=True))
    kids = np.frombuffer(kids_b, dtype=np.int64).tolist()
    return dict(zip(zip(kids, ks, strict=True), results, strict=True))


def _simultaneous_steps(
    layout: Layout, code: np.ndarray, cols: dict[str, Any], newg: np.ndarray, nv: int
) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
    """Events of each time-stamp group ordered by ``layout.rank`` of their variable, and
    the group starts refined to runs of one variable."""
    key = (np.cumsum(newg) - 1) * nv + np.asarray(layout.rank, dtype=np.int64)[code]
    if not bool(np.all(key[1:] >= key[:-1])):
        order = np.argsort(key, kind="stable")
        code = code[order]
        cols = {
            a: (c[order] if isinstance(c, np.ndarray) else [c[i] for i in order.tolist()])
            for a, c in cols.items()
        }
    runs = newg.copy()
    runs[1:] |= code[1:] != code[:-1]
    return code, cols, runs


def _item(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _step_stats(
    col: Any,
    ev_lo: np.ndarray,
    ev_hi: np.ndarray,
    code_list: list[int],
    owners: set[int],
    kinds: set[str],
    nsteps: int,
) -> dict[str, list[Any]]:
    """Per step: sum (S), min (MN) and max (MX) of the attribute over the step's events;
    only meaningful for steps of the variables in ``owners``. Sums are exact: of ints as
    Python ints (numpy's int64 only where a bound in Python ints shows it cannot wrap), of
    floats as exact ``FSum`` values (never numpy's order-dependent float sums)."""
    out: dict[str, list[Any]] = {}
    if isinstance(col, np.ndarray) and nsteps and len(col):
        kind_of = col.dtype.kind
        ufunc = {"S": np.add, "MN": np.minimum, "MX": np.maximum}
        vector = {"MN", "MX"} & kinds if kind_of in "iuf" else set()
        if "S" in kinds and kind_of in "iu":
            # |a sum of a step| <= the longest step times the largest magnitude, both exact
            bound = max(-int(col.min()), int(col.max())) * int((ev_hi - ev_lo).max())
            if col.dtype.kind == "i" and bound < 2**63:
                vector.add("S")
        elif "S" in kinds and kind_of == "f":
            out["S"] = float_step_sums(col, ev_lo)
        with np.errstate(invalid="ignore"):
            for kind in vector:
                out[kind] = ufunc[kind].reduceat(col, ev_lo).tolist()
        if len(out) == len(kinds):
            return out
        col = col.tolist()
    rest = kinds - out.keys()
    for kind in rest:
        out[kind] = [0] * nsteps
    fns = {"S": exact_sum, "MN": min, "MX": max}
    for s, (lo, hi, c) in enumerate(zip(ev_lo.tolist(), ev_hi.tolist(), code_list, strict=True)):
        if c not in owners:
            continue
        values = [_item(x) for x in col[lo:hi]]
        for kind in rest:
            out[kind][s] = fns[kind](values)
    return out


def float_step_sums(col: np.ndarray, ev_lo: np.ndarray) -> list[Any]:
    """The exact sum (an ``FSum``) of a float column over each step ``ev_lo[i]`` up to the
    next step's start; NaN (missing) values count as 0.

    Each finite value is ``m * 2**(e - 53)`` with an integer ``m`` (``np.frexp``). Relative
    to the smallest such exponent ``b`` of the column every value is the integer
    ``m << (e - 53 - b)``; the steps sum those integers (in int64 where a bound shows they
    cannot wrap, else as Python ints), and each step's sum times ``2**b`` is its multiple
    of 2**-1074, exact. Infinities are counted apart."""
    col = np.asarray(col, dtype=np.float64)
    finite = np.isfinite(col)
    vals = np.where(finite, col, 0.0)
    mant, exp = np.frexp(vals)
    m = (mant * 2.0**53).astype(np.int64)
    nonzero = m != 0
    if not nonzero.any():
        sums = [0] * len(ev_lo)
        to_units = 0
    else:
        e = exp.astype(np.int64) - 53
        base = int(e[nonzero].min())
        shift = np.where(nonzero, e - base, 0)
        longest = int(np.diff(np.append(ev_lo, len(col))).max()) if len(ev_lo) else 0
        if int(shift.max()) + 53 + longest.bit_length() < 63:
            sums = np.add.reduceat(m << shift, ev_lo).tolist()
        else:
            scaled = np.empty(len(m), dtype=object)
            scaled[:] = [x << k for x, k in zip(m.tolist(), shift.tolist(), strict=True)]
            sums = np.add.reduceat(scaled, ev_lo).tolist()
        to_units = base + 1074  # the sums times 2**base, in units of 2**-1074
    if to_units >= 0:
        ns = [n << to_units for n in sums]
    else:  # subnormal values: every sum is still a multiple of 2**-1074
        ns = [n >> -to_units for n in sums]
    if finite.all():
        return [FSum(n) for n in ns]
    pinf = np.add.reduceat((col == np.inf).astype(np.int64), ev_lo).tolist()
    ninf = np.add.reduceat((col == -np.inf).astype(np.int64), ev_lo).tolist()
    return [FSum(n, p, q) for n, p, q in zip(ns, pinf, ninf, strict=True)]
