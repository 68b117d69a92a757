"""COGRA: coarse-grained trend aggregation (dissertation ch. 14-19, Table 14.1).

COGRA computes exactly what the two-step reference computes (DESIGN §5,
``engine.reference``) but keeps intermediate aggregates at the coarsest
granularity the query allows, chosen from the query's semantics and
predicates the way the optimizer's granularity selector does (Table 14.1):

* **type-grained** (skip-till-any-match, no adjacent predicates, §15.1,
  Theorem 15.1, Table 18.1): one aggregate per (variable, window) -- the sum of
  the intermediate aggregates of all events matched to that variable so far.
  An event matched to variable V creates trends ``start(V) + sum of the
  aggregates of V's predecessor variables`` and folds them into V's aggregate;
  events are discarded afterwards. COUNT(E), SUM, MIN, MAX follow Table 18.1;
  AVG = SUM / COUNT(E) at finalization. A type occurring under several aliases
  and nested Kleene are just more variables and template transitions.
  Without negation this runs on a compiled *kernel* (below); with negation it
  runs on the coarse interpreter (see "negation").
* **mixed-grained** (skip-till-any-match with adjacent predicates, §15.2,
  Theorem 15.3, Algorithm 8): a variable whose outgoing transition carries an
  adjacent predicate keeps its events (each with its per-window aggregate), so
  the predicate can be evaluated against a new event; every other variable
  keeps one type-grained aggregate per window. A transition without adjacent
  predicate reads the type-grained aggregate even when its source variable
  also keeps events for another transition.
* **pattern-grained** (skip-till-next-match and contiguous without adjacent
  predicates and negation, §16.2): which event may follow a trend's last event
  then depends only on the last event's variable, so all *open* trend ends of a
  variable share their fate: they are all extended by, and closed at, the first
  later time stamp holding an event of a successor variable (next-match), or
  they live exactly one time stamp (contiguous). One aggregate per (variable,
  window) is kept for the open ends. Algorithm 9 keeps a single "last event",
  which undercounts patterns like ``SEQ(A, B+, C)`` over ``a1 a2 b3 c4`` (it
  gives 1); DESIGN §5 fixes the definition (2 trends), which per-variable open
  aggregates reproduce. Next-match and contiguous queries *with* adjacent
  predicates or negation are event-grained (the optimizer marks them
  ``event``): ``run`` raises :class:`~engine.query.Unsupported` so ``auto``
  uses GRETA.

**Negation** (skip-till-any-match). A transition ``P1 -> P2`` carrying ``NOT N``
may only connect a P1 event at time s to a P2 event at t if no match of N lies
strictly between; with ``L(t)`` the latest start of a complete match of N
before t (GRETA's invalidation state, ``engine.greta._Negation``), the valid
P1 events are those with ``ts >= L(t)``. Type-grained, COGRA keeps for such a
transition, per prefix j of N's sequence, the aggregate of the P1 events at or
after the latest start of a match of that prefix ("since" aggregates): when a
new match of the prefix starts at t, the aggregate restarts from the events of
time t; when prefix j inherits prefix j-1's start, it inherits its aggregate.
So a negated transition costs m aggregates per window (m = length of N), never
a list of events. Leading and trailing NOTs depend on the window only
(``start_negations`` block the +1 of a START event in the windows starting at
or before ``L(t)``; ``end_negations`` drop an END event's trends from the
windows ending after the earliest end ``C(t)`` of a match after it, computed by
one backward pass), exactly as in GRETA.

**Windows.** Windows ``[k*slide, k*slide + within)`` are handled per window
start: every open window has its own type-grained state; a window's state
starts at zero at the first pane holding an event of a START variable (before
that every aggregate of the window stays zero, so panes without a START event
skip windows still at zero, and panes after every open window closed are not
visited) and its result is read off when it closes. The stream is cut into *panes* at every window start and end.
Everything per event (type and predicate matching, burst detection, attribute
statistics) happens once; only the arithmetic of a step repeats for each of
the ``ceil(within / slide)`` open windows, pane by pane as a block (the kernel
never looks up window membership per event) -- the same per-window additions
GRETA repeats, but per burst instead of per event.

**Kernel** (type-grained, no negation). The partition becomes columns: for
each event the variable it matches (local predicates evaluated vectorized with
numpy when the plan's expressions are available, see :func:`run_columns`),
its time stamp and the attributes the aggregates need. Consecutive events of
the same variable (a *burst*) are collapsed, vectorized, into one step whose
effect has a closed form. For a variable V with a self-loop, constant
predecessor sum s (START adds 1) and k events at distinct time stamps, with
``u = count(V) + s``::

    count(V)    <- u * 2^k - s
    count_E(V)  <- (count_E(V) + s_E) * 2^k - s_E  [+ k * 2^(k-1) * u   if V = E]
    sum(V)      <- (sum(V) + s_sum) * 2^k - s_sum  [+ 2^(k-1) * u * sum(a)  if V = E]
    min(V)      <- min(min(V), s_min, min(a) if V = E)      (if u != 0)

and without a self-loop the k events are independent (``count(V) += k*s``,
...), equal time stamps included. Events sharing a time stamp with events of
another variable (or matching several aliases, or a self-loop variable twice)
form a *group step* evaluated from the state before the group, because events
with equal time stamps are never adjacent. The per-step code is generated
once per query (straight-line Python specialised to its template), so a step
costs a handful of integer operations whatever its length. Bursts longer
than 120 events are cut so that 2^k stays below 2^120.

The interpreters. Type-grained queries with negation and mixed-grained queries
run on a per-time-stamp-group interpreter (``_Coarse``) over per-window
aggregates (GRETA's intermediate-aggregate algebra, ``engine.greta._Algebra``);
pattern-grained queries on ``_run_pattern``. Type-grained partitions of fewer
than ``SMALL_PARTITION`` events also use ``_Coarse``: there the kernel's fixed
numpy cost would dominate.

**Exactness.** Counts and integer sums are Python ints kept exact however
large (as in GRETA); the OVERFLOW rule is applied at output
(``engine.results.finalize``), so AVG is the exact sum over the exact count.
A float sum whose product leaves the float range is NaN (sticky). A window
whose state is all NaN (no MIN/MAX) cannot change any more; the kernel skips
the rest of its events (``SKIP_SATURATED``).

Entry points: :func:`run` (one time-ordered partition of ``Event`` objects,
the engine's strategy interface) and :func:`run_columns` / :func:`run_table`
(columnar input: numpy arrays or a pyarrow Table), which avoid building one
Python object per event. ``engine.table`` runs the kernel over many partitions
in one call (``_run_kernel`` with a partition id per event).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from trendlake.engine.events import Event
from trendlake.engine.greta import _Algebra, _earliest_ends, _groups, _max_bound, _VarList, _Vertex
from trendlake.engine.query import ANY, CONTIGUOUS, CompiledQuery, Unsupported
from trendlake.engine.results import CAP, NAN, WindowResult, sat, scale

__all__ = ["granularity_of", "run", "run_columns", "run_table"]

SUM_BOUND = CAP * CAP  # as engine.greta: a partial sum beyond it is NaN (overflow)
LIMIT = 120  # longest burst collapsed into one step (2**LIMIT * CAP**2 stays far below float range)
CHUNK = 2048  # steps between checks whether a window's state saturated completely
# skip the rest of a window whose state saturated completely (benchmarks switch it off)
SKIP_SATURATED = True
# below this many events, the kernel's fixed numpy cost (~0.1 ms) exceeds the per-group
# interpreter's whole run; such partitions use the interpreter (same type-grained state)
SMALL_PARTITION = 16
POW = [1 << k for k in range(LIMIT + 1)]
HALF = [0] + [1 << (k - 1) for k in range(1, LIMIT + 1)]

Aggs = dict[int, Any]


# ---------------------------------------------------------------------------
# entry points


def granularity_of(query: CompiledQuery) -> str:
    """How COGRA evaluates ``query``: ``type`` (kernel), ``type+negation``, ``mixed`` or
    ``pattern``; raises Unsupported for event-grained next-match / contiguous queries."""
    if query.semantics == ANY:
        if query.has_adjacent:
            return "mixed"
        if query.negations or not _Layout.of(query).ok:
            return "type+negation" if query.negations else "mixed"
        return "type"
    if query.has_adjacent or query.negations:
        raise Unsupported(
            f"query {query.name}: {query.semantics} with "
            + ("adjacent predicates" if query.has_adjacent else "negation")
            + " is event-grained (the last event's attributes or the negation matches after it"
            " decide which event may follow), not pattern-grained; use greta"
        )
    return "pattern"


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    mode = granularity_of(query)
    if not events:
        return {}
    if mode == "type" and len(events) >= SMALL_PARTITION:
        layout = _Layout.of(query)
        return _run_kernel(query, layout, _prepare_events(query, layout, events))
    if mode == "pattern":
        return _run_pattern(query, events)
    return _Coarse.of(query).run(events)


def run_columns(
    query: CompiledQuery,
    types: Any,
    ts: Any,
    attrs: dict[str, Any] | None = None,
    *,
    type_names: Sequence[str] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[int, WindowResult]:
    """Results per window index for one partition given as columns.

    ``types``: event type names (array-like of str), or integer codes into
    ``type_names``; ``ts``: µs timestamps (int64), in time order (sorted
    stably otherwise); ``attrs``: attribute name -> array-like (missing values
    None or NaN). ``spec`` is the plan's entry for this query
    (``plan["queries"][i]``): with it, local predicates are evaluated
    vectorized with numpy; without it (or for expressions numpy cannot
    evaluate with the engine's exact semantics) they are evaluated row by
    row. Queries that are not type-grained without negation are evaluated
    on the equivalent ``Event`` list.
    """
    mode = granularity_of(query)
    attrs = dict(attrs or {})
    ts_arr = np.asarray(ts, dtype=np.int64)
    n = len(ts_arr)
    type_col = _Types(types, type_names, n)
    if n and np.any(ts_arr[1:] < ts_arr[:-1]):
        order = np.argsort(ts_arr, kind="stable")
        ts_arr = ts_arr[order]
        type_col = type_col.take(order)
        attrs = {a: _as_column(v)[order] for a, v in attrs.items()}
    if n == 0:
        return {}
    if mode != "type":
        return run(query, _events_from_columns(type_col, ts_arr, attrs))
    layout = _Layout.of(query)
    return _run_kernel(
        query, layout, _prepare_columns(query, layout, type_col, ts_arr, attrs, spec)
    )


def run_table(
    query: CompiledQuery, table: Any, spec: dict[str, Any] | None = None
) -> dict[int, WindowResult]:
    """:func:`run_columns` over a pyarrow Table with ``type``, ``ts`` (µs integers or an
    Arrow timestamp) and attribute columns (one partition)."""
    from trendlake.engine.table import _Columns

    cols = _Columns(table)
    attrs = {name: cols.array(name) for name in cols.attr_names}
    return run_columns(
        query, cols.type_codes, cols.ts, attrs, type_names=cols.type_names, spec=spec
    )


# ---------------------------------------------------------------------------
# kernel layout: the type-grained state of one window and its generated step code


class _Layout:
    """Type-grained state layout of a query and its compiled kernel.

    The state of one window is a flat tuple: per positive variable V (in
    pattern order) ``count(V)``, then ``count_E(V)`` per COUNT(E) variable,
    ``sum(V)`` per SUM key, ``min(V)`` per MIN key, ``max(V)`` per MAX key.
    """

    _cache: dict[int, _Layout] = {}

    @classmethod
    def of(cls, query: CompiledQuery) -> _Layout:
        layout = cls._cache.get(id(query))
        if layout is None or layout.query is not query:
            layout = cls(query)
            if len(cls._cache) > 256:
                cls._cache.clear()
            cls._cache[id(query)] = layout
        return layout

    def __init__(self, query: CompiledQuery) -> None:
        self.query = query
        q = query
        self.vars = list(q.positive)
        self.index = {v: i for i, v in enumerate(self.vars)}
        needs = q.needs
        self.cvars = sorted(needs.counts)
        self.skeys = sorted(needs.sums)
        self.nkeys = sorted(needs.mins)
        self.xkeys = sorted(needs.maxs)
        nv = len(self.vars)
        self.stride = 1 + len(self.cvars) + len(self.skeys) + len(self.nkeys) + len(self.xkeys)
        self.o_w = 1
        self.o_z = self.o_w + len(self.cvars)
        self.o_n = self.o_z + len(self.skeys)
        self.o_x = self.o_n + len(self.nkeys)
        self.start = [v in q.start for v in self.vars]
        self.end = [i for i, v in enumerate(self.vars) if v in q.end]
        self.preds: list[list[int]] = []
        self.ok = True
        for v in self.vars:
            srcs = [self.index[t.src] for t in q.predecessors[v]]
            if len(set(srcs)) != len(srcs):
                self.ok = False  # a repeated transition: not a Glushkov template
            self.preds.append(srcs)
        self.selfloop = [i in self.preds[i] for i in range(nv)]
        self.others = [[p for p in self.preds[i] if p != i] for i in range(nv)]
        # per variable: the attributes its own events contribute (sum / min / max)
        self.attrs = sorted({a for _, a in self.skeys + self.nkeys + self.xkeys})
        self.own: list[list[str]] = [
            sorted({a for v, a in self.skeys + self.nkeys + self.xkeys if v == var})
            for var in self.vars
        ]
        # per-step statistics the kernel reads: (kind, attribute index), kind S / MN / MX
        self.stat_cols = [
            (kind, a)
            for a, attr in enumerate(self.attrs)
            for kind, keys in (("S", self.skeys), ("MN", self.nkeys), ("MX", self.xkeys))
            if any(k_attr == attr for _, k_attr in keys)
        ]
        self.size = nv * self.stride
        zero: list[Any] = []
        for _ in range(nv):
            zero += [0] * (self.o_n) + [None] * (self.stride - self.o_n)
        self.zero = tuple(zero)
        self.frozen_ok = not (self.nkeys or self.xkeys)
        self._make: Callable[..., Any] | None = None
        self._result: Callable[[tuple], WindowResult | None] | None = None

    # -- generated step code ------------------------------------------------

    def source(self) -> str:
        """Python source of ``make(code, kk, <stat columns>, G, grp)`` returning ``(rows, kernel)``:
        ``rows(lo, hi)`` iterates steps lo..hi, ``kernel(state, rows)`` applies them to a state."""
        nv = len(self.vars)
        state = ", ".join(self.state_names()) + ","
        cols = [f"{kind}{a}" for kind, a in self.stat_cols]
        params = ", ".join(["code", "kk", *cols, "G", "grp"])
        loop_vars = ", ".join(["v_", "k", *[c.lower() + "_" for c in cols]])
        slices = ", ".join(f"{c}[lo:hi]" for c in ["code", "kk", *cols])
        out = [
            f"def make({params}):",
            "    def rows(lo, hi):",
            f"        return zip({slices})",
            "    def kernel(st, block):",
            f"        {state} = st",
            f"        for {loop_vars} in block:",
        ]
        first = True
        for i in range(nv):
            body = self._branch(i)
            out.append(f"            {'if' if first else 'elif'} v_ == {i}:")
            first = False
            out += ["                " + line for line in body]
        out.append("            else:")
        out.append(f"                {state} = grp(G[k], ({state}))")
        out.append(f"        return ({state})")
        out.append("    return rows, kernel")
        return "\n".join(out) + "\n"

    def _branch(self, i: int) -> list[str]:
        others = self.others[i]
        var = self.vars[i]
        terms = (["1"] if self.start[i] else []) + [f"c{p}" for p in others]
        if not terms:
            return ["pass"]  # never reached by a trend
        lines = [f"s = {' + '.join(terms)}"]
        loop = self.selfloop[i]
        if loop:
            lines += [f"u = c{i} + s", "if u:"]
            body = ["P = POW[k]", f"c{i} = u * P - s"]
        else:
            lines += ["if s:"]
            body = [f"c{i} = c{i} + k * s"]
        for j, e in enumerate(self.cvars):
            sw = " + ".join(f"w{p}_{j}" for p in others) or "0"
            own = e == var
            if loop:
                expr = f"(w{i}_{j} + sw) * P - sw" + (" + k * HALF[k] * u" if own else "")
            else:
                expr = f"w{i}_{j} + k * sw" + (" + k * s" if own else "")
            body += [f"sw = {sw}", f"w{i}_{j} = {expr}"]
        for j, (e, attr) in enumerate(self.skeys):
            sz = " + ".join(f"z{p}_{j}" for p in others) or "0"
            own = e == var
            a = self.attrs.index(attr)
            if loop:
                body += [f"sz = {sz}", f"t = (z{i}_{j} + sz) * P - sz"]
                if own:
                    body += [f"if s{a}_: t = t + _fmul(HALF[k] * u, s{a}_)"]
            else:
                body += [f"sz = {sz}", f"t = z{i}_{j} + k * sz" if sz != "0" else f"t = z{i}_{j}"]
                if own:
                    body += [f"if s{a}_: t = t + _fmul(s, s{a}_)"]
            body += [f"z{i}_{j} = t"]
        for prefix, keys, col, fn in (
            ("n", self.nkeys, "mn", "_mn"),
            ("x", self.xkeys, "mx", "_mx"),
        ):
            for j, (e, attr) in enumerate(keys):
                own = e == var
                a = self.attrs.index(attr)
                body.append(f"m = {prefix}{i}_{j}")
                for p in others:
                    body.append(f"m = {fn}(m, {prefix}{p}_{j})")
                if own:
                    body.append(f"m = {fn}(m, {col}{a}_)")
                body.append(f"{prefix}{i}_{j} = m")
        lines += ["    " + b for b in body]
        return lines

    def _compile(self) -> None:
        namespace: dict[str, Any] = {
            "POW": POW,
            "HALF": HALF,
            "CAP": CAP,
            "NAN": NAN,
            "SB": SUM_BOUND,
            "WR": WindowResult,
            "sat": sat,
            "_sum_sat": _sum_sat,
            "_fmul": _fmul,
            "_mn": _mn,
            "_mx": _mx,
        }
        source = self.source() + "\n\n" + self.result_source()
        exec(compile(source, f"<cogra kernel {self.query.name}>", "exec"), namespace)
        self._make = namespace["make"]
        self._result = namespace["result"]

    def instantiate(
        self, code: list, kk: list, stats: list[list], groups: list
    ) -> tuple[Callable[..., Any], Callable[..., tuple]]:
        if self._make is None:
            self._compile()
        assert self._make is not None
        return self._make(code, kk, *stats, groups, self.group_step)

    # -- a group of simultaneous events (generic, from the state before the group) --

    def group_step(self, infos: list[tuple[int, dict[str, Any]]], st: tuple) -> tuple:
        stride, o_w, o_z, o_n, o_x = self.stride, self.o_w, self.o_z, self.o_n, self.o_x
        out = list(st)
        for v, values in infos:
            preds = self.preds[v]
            n: Any = 1 if self.start[v] else 0
            for p in preds:
                n += st[p * stride]
            if not n:
                continue
            var = self.vars[v]
            base = v * stride
            out[base] += n
            for j, e in enumerate(self.cvars):
                w = n if e == var else 0
                for p in preds:
                    w += st[p * stride + o_w + j]
                out[base + o_w + j] += w
            for j, (e, attr) in enumerate(self.skeys):
                z: Any = scale(values[attr], n) if e == var else 0
                for p in preds:
                    z += st[p * stride + o_z + j]
                out[base + o_z + j] += z
            for j, (e, attr) in enumerate(self.nkeys):
                m = out[base + o_n + j]
                for p in preds:
                    m = _mn(m, st[p * stride + o_n + j])
                if e == var:
                    m = _mn(m, values[attr])
                out[base + o_n + j] = m
            for j, (e, attr) in enumerate(self.xkeys):
                m = out[base + o_x + j]
                for p in preds:
                    m = _mx(m, st[p * stride + o_x + j])
                if e == var:
                    m = _mx(m, values[attr])
                out[base + o_x + j] = m
        for v in range(len(self.vars)):
            base = v * stride
            for i in range(base, base + o_z):
                out[i] = sat(out[i])
            for i in range(base + o_z, base + o_n):
                out[i] = _sum_sat(out[i])
        return tuple(out)

    # -- reading a window's result --------------------------------------------

    def state_names(self) -> list[str]:
        names = []
        for i in range(len(self.vars)):
            names.append(f"c{i}")
            names += [f"w{i}_{j}" for j in range(len(self.cvars))]
            names += [f"z{i}_{j}" for j in range(len(self.skeys))]
            names += [f"n{i}_{j}" for j in range(len(self.nkeys))]
            names += [f"x{i}_{j}" for j in range(len(self.xkeys))]
        return names

    def result_source(self) -> str:
        """Python source of ``result(state) -> WindowResult | None`` (sums over the END variables)."""
        state = ", ".join(self.state_names()) + ","
        ends = self.end
        total = " + ".join(f"c{v}" for v in ends) or "0"
        out = [
            "def result(st):",
            f"    {state} = st",
            f"    t = {total}",
            "    if not t: return None",
            "    counts = {"
            + ", ".join(
                f"{e!r}: sat({' + '.join(f'w{v}_{j}' for v in ends)})"
                for j, e in enumerate(self.cvars)
            )
            + "}",
            "    sums = {"
            + ", ".join(
                f"{key!r}: _sum_sat({' + '.join(f'z{v}_{j}' for v in ends)})"
                for j, key in enumerate(self.skeys)
            )
            + "}",
            "    mins = {}",
            "    maxs = {}",
        ]
        for prefix, keys, fn, target in (
            ("n", self.nkeys, "_mn", "mins"),
            ("x", self.xkeys, "_mx", "maxs"),
        ):
            for j, key in enumerate(keys):
                out.append("    m = None")
                out += [f"    m = {fn}(m, {prefix}{v}_{j})" for v in ends]
                out.append(f"    if m is not None: {target}[{key!r}] = m")
        out.append("    return WR(t, counts, sums, mins, maxs)")
        return "\n".join(out) + "\n"

    def result(self, st: tuple) -> WindowResult | None:
        if self._result is None:
            self._compile()
        return self._result(st)


def _mn(a: Any, b: Any) -> Any:
    if b is None:
        return a
    if a is None or b < a:
        return b
    return a


def _mx(a: Any, b: Any) -> Any:
    if b is None:
        return a
    if a is None or b > a:
        return b
    return a


def _sum_sat(value: Any) -> Any:
    """A state sum as kept: exact (the OVERFLOW rule is applied at output, engine.results)."""
    return value


def _fmul(count: Any, value: Any) -> Any:
    """``count * value``; NAN when a float value times a count leaves the float range."""
    try:
        return count * value
    except OverflowError:
        return NAN


def _frozen(st: tuple) -> bool:
    """Every value saturated: no later event can change the state."""
    for x in st:
        if x == x:
            return False
    return True


# ---------------------------------------------------------------------------
# columns of one partition: the matched variable per event, time stamps, attributes


class _Prepared:
    """Relevant events of a partition (matching at least one positive variable)."""

    __slots__ = ("ts", "code", "multi", "cols")

    def __init__(
        self, ts: np.ndarray, code: np.ndarray, multi: dict[int, list[int]], cols: dict[str, Any]
    ) -> None:
        self.ts = ts  # int64, time order
        self.code = code  # int64: variable index, or -1 when several variables match
        self.multi = multi  # event index -> variable indexes (code -1)
        self.cols = cols  # attribute -> numpy array (int64 / float64) or list of Python values


def _prepare_events(query: CompiledQuery, layout: _Layout, events: list[Event]) -> _Prepared:
    index = layout.index
    by_type = {
        t: [(index[v], query.variables[v].local) for v in vs]
        for t, vs in query.vars_by_type.items()
    }
    attrs = layout.attrs
    ts_l: list[int] = []
    code_l: list[int] = []
    multi: dict[int, list[int]] = {}
    cols: dict[str, list[Any]] = {a: [] for a in attrs}
    col_lists = [cols[a] for a in attrs]
    for e in events:
        cand = by_type.get(e.type)
        if cand is None:
            continue
        if len(cand) == 1:
            vi, local = cand[0]
            if local is not None and not local(e.attrs):
                continue
            c = vi
        else:
            ms = [vi for vi, local in cand if local is None or local(e.attrs)]
            if not ms:
                continue
            if len(ms) == 1:
                c = ms[0]
            else:
                c = -1
                multi[len(ts_l)] = ms
        ts_l.append(e.ts)
        code_l.append(c)
        if col_lists:
            get = e.attrs.get
            for a, lst in zip(attrs, col_lists, strict=True):
                lst.append(get(a))
    return _Prepared(
        np.asarray(ts_l, dtype=np.int64),
        np.asarray(code_l, dtype=np.int64),
        multi,
        {a: _numeric(v) for a, v in cols.items()},
    )


def _numeric(values: list[Any]) -> Any:
    """A numpy column when that is exact (all ints, or all floats), else the list."""
    present = [v for v in values if v is not None]
    if present and all(type(v) is int for v in present):
        if max(abs(v) for v in present) < 2**53:
            return np.asarray([0 if v is None else v for v in values], dtype=np.int64)
    elif present and all(type(v) is float for v in present):
        return np.asarray([math.nan if v is None else v for v in values], dtype=np.float64)
    return values


def _as_column(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    arr = np.asarray(values)
    return arr if arr.dtype.kind in "iuf" else np.asarray(values, dtype=object)


class _Types:
    """The type column: names, or integer codes into a list of names."""

    def __init__(self, types: Any, names: Sequence[str] | None, n: int) -> None:
        arr = np.asarray(types)
        if len(arr) != n:
            raise ValueError(f"types has {len(arr)} entries, ts has {n}")
        self.names = None if names is None else list(names)
        self.arr = arr.astype(np.int64) if names is not None else arr

    def take(self, order: np.ndarray) -> _Types:
        out = _Types.__new__(_Types)
        out.names, out.arr = self.names, self.arr[order]
        return out

    def mask(self, name: str) -> np.ndarray:
        if self.names is None:
            return np.asarray(self.arr == name, dtype=bool)
        codes = [i for i, t in enumerate(self.names) if t == name]
        if len(codes) == 1:
            return self.arr == codes[0]
        return np.isin(self.arr, codes)

    def strings(self) -> list[str]:
        if self.names is None:
            return [str(t) for t in self.arr.tolist()]
        return [str(self.names[c]) for c in self.arr.tolist()]


def _prepare_columns(
    query: CompiledQuery,
    layout: _Layout,
    types: _Types,
    ts: np.ndarray,
    attrs: dict[str, Any],
    spec: dict[str, Any] | None,
) -> _Prepared:
    nv = len(layout.vars)
    masks = []
    type_masks: dict[str, np.ndarray] = {}
    cache: dict[str, tuple[np.ndarray, Any]] = {}  # numeric columns shared by the predicates
    for v in layout.vars:
        var = query.variables[v]
        tm = type_masks.get(var.type)
        if tm is None:
            tm = type_masks[var.type] = types.mask(var.type)
        masks.append(_local_mask(query, v, tm, attrs, spec, cache))
    keep = masks[0] if nv == 1 else np.logical_or.reduce(masks)
    return prepared_from_masks(query, layout, masks, np.flatnonzero(keep), ts, attrs)


def prepared_from_masks(
    query: CompiledQuery,
    layout: _Layout,
    masks: list[np.ndarray],
    idx: np.ndarray,
    ts: np.ndarray,
    attrs: dict[str, Any],
) -> _Prepared:
    """The kernel's input from one match mask per positive variable (``layout.vars``
    order), keeping the events at ``idx`` (each matching at least one variable)."""
    nv = len(layout.vars)
    sub = [m[idx] for m in masks]
    code = np.full(len(idx), -1, dtype=np.int64)
    for i, m in enumerate(sub):
        code[m] = i
    multi: dict[int, list[int]] = {}
    # aliases: an event may match several variables of its type
    if len({query.variables[v].type for v in layout.vars}) < nv:
        hits = np.sum(sub, axis=0)
        for pos in np.flatnonzero(hits > 1).tolist():
            multi[pos] = [i for i in range(nv) if sub[i][pos]]
            code[pos] = -1
    cols: dict[str, Any] = {}
    for a in layout.attrs:
        col = attrs.get(a)
        if col is None:
            cols[a] = [None] * len(idx)
            continue
        arr = col if isinstance(col, np.ndarray) else np.asarray(col, dtype=object)
        sub = arr[idx]
        if sub.dtype.kind in "iu" and (not len(sub) or int(sub.max()) < 2**63):
            cols[a] = sub.astype(np.int64)
        elif sub.dtype.kind == "f":
            cols[a] = sub.astype(np.float64)
        else:
            cols[a] = _numeric([_clean(x) for x in sub.tolist()])
    return _Prepared(ts[idx], code, multi, cols)


def _clean(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def _events_from_columns(types: _Types, ts: np.ndarray, attrs: dict[str, Any]) -> list[Event]:
    names = list(attrs)
    columns = [
        attrs[a].tolist() if isinstance(attrs[a], np.ndarray) else list(attrs[a]) for a in names
    ]
    events = []
    for i, (t, et) in enumerate(zip(ts.tolist(), types.strings(), strict=True)):
        row = {a: _clean(col[i]) for a, col in zip(names, columns, strict=True)}
        events.append(Event(t, i, et, row))
    return events


# ---------------------------------------------------------------------------
# vectorized local predicates (plan expressions, docs/plan-format.md), engine semantics


class _NoVector(Exception):
    """numpy cannot evaluate this expression with the engine's exact semantics."""


_CMP = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
_SAFE_INT = 2**31


def _local_mask(
    query: CompiledQuery,
    var: str,
    type_mask: np.ndarray,
    attrs: dict[str, Any],
    spec: dict[str, Any] | None,
    cache: dict[str, tuple[np.ndarray, Any]],
) -> np.ndarray:
    local = query.variables[var].local
    if local is None:
        return type_mask
    if spec is not None:
        exprs = spec.get("local_predicates", {}).get(var, [])
        required = spec.get("required_attributes", {}).get(var, [])
        try:
            mask = type_mask.copy()
            for name in required:
                mask &= _column(attrs, name, cache, len(type_mask))[1]  # present
            for expr in exprs:
                mask &= _vec_predicate(expr, attrs, cache, len(type_mask))
            return mask
        except _NoVector:
            pass
    # row by row with the compiled predicate (exact, slower)
    idx = np.flatnonzero(type_mask)
    names = list(attrs)
    columns = {
        a: (
            attrs[a][idx].tolist()
            if isinstance(attrs[a], np.ndarray)
            else [attrs[a][i] for i in idx.tolist()]
        )
        for a in names
    }
    mask = np.zeros(len(type_mask), dtype=bool)
    for pos, i in enumerate(idx.tolist()):
        row = {a: _clean(columns[a][pos]) for a in names}
        if local(row):
            mask[i] = True
    return mask


def _column(attrs: dict[str, Any], name: str, cache: dict, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, present) of a numeric attribute column."""
    if name in cache:
        return cache[name]
    col = attrs.get(name)
    if col is None:
        out = (np.zeros(n, dtype=np.int64), False)
    else:
        arr = col if isinstance(col, np.ndarray) else np.asarray(col, dtype=object)
        kind = arr.dtype.kind
        if kind in "iu":
            vals = arr.astype(np.int64, copy=False)
            if len(vals) and max(int(vals.max()), -int(vals.min())) >= 2**53:
                raise _NoVector
            out = (vals, True)
        elif kind == "f":
            vals = arr.astype(np.float64, copy=False)
            out = (vals, ~np.isnan(vals))  # NaN (missing) only ever meets a False validity
        elif kind == "O":
            items = arr.tolist()
            present = np.fromiter((_clean(x) is not None for x in items), dtype=bool, count=n)
            vals_l = [x for x in items if _clean(x) is not None]
            if all(type(x) is int for x in vals_l):
                if vals_l and max(abs(x) for x in vals_l) >= 2**53:
                    raise _NoVector
                out = (
                    np.asarray(
                        [x if p else 0 for x, p in zip(items, present.tolist(), strict=True)],
                        dtype=np.int64,
                    ),
                    present,
                )
            elif all(type(x) in (int, float) for x in vals_l):
                if any(type(x) is int and abs(x) >= 2**53 for x in vals_l):
                    raise _NoVector
                out = (
                    np.asarray(
                        [
                            float(x) if p else 0.0
                            for x, p in zip(items, present.tolist(), strict=True)
                        ],
                        dtype=np.float64,
                    ),
                    present,
                )
            else:
                raise _NoVector
        else:
            raise _NoVector
    cache[name] = out
    return out


def _vec_value(expr: dict[str, Any], attrs: dict[str, Any], cache: dict, n: int) -> tuple[Any, Any]:
    if "lit" in expr:
        lit = expr["lit"]
        if isinstance(lit, bool):
            lit = int(lit)
        if not isinstance(lit, (int, float)) or (isinstance(lit, int) and abs(lit) >= 2**53):
            raise _NoVector
        return lit, True
    if "attr" in expr:
        if expr.get("next"):
            raise _NoVector
        return _column(attrs, expr["attr"], cache, n)
    op = expr["op"]
    args = [_vec_value(a, attrs, cache, n) for a in expr.get("args", [])]
    if op == "neg":
        ((v, ok),) = args
        return -np.asarray(v) if isinstance(v, np.ndarray) else -v, ok
    if op in ("+", "-", "*", "/", "%"):
        (a, oka), (b, okb) = args
        for x in (a, b):
            xs = np.asarray(x)
            if xs.dtype.kind in "iu" and xs.size and np.abs(xs).max() >= _SAFE_INT:
                raise _NoVector
        ok = _and(oka, okb)
        if op in ("/", "%"):
            nz = np.asarray(b) != 0
            ok = _and(ok, nz)
            b = np.where(nz, b, 1)
        with np.errstate(all="ignore"):
            if op == "+":
                v = np.add(a, b)
            elif op == "-":
                v = np.subtract(a, b)
            elif op == "*":
                v = np.multiply(a, b)
            elif op == "/":
                v = np.true_divide(a, b)
            else:
                v = np.remainder(a, b)
        return v, ok
    raise _NoVector


def _vec_predicate(expr: dict[str, Any], attrs: dict[str, Any], cache: dict, n: int) -> np.ndarray:
    op = expr.get("op")
    if op in _CMP:
        (a, oka), (b, okb) = (_vec_value(x, attrs, cache, n) for x in expr["args"])
        with np.errstate(all="ignore"):
            res = _CMP[op](a, b)
        return _valid_and(res, _and(oka, okb), n)
    if op == "in":
        ((a, ok),) = [_vec_value(x, attrs, cache, n) for x in expr["args"]]
        res = np.zeros(n, dtype=bool)
        for value in expr["values"]:
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, (int, float)) and not (
                isinstance(value, int) and abs(value) >= 2**53
            ):
                res |= np.broadcast_to(np.equal(a, value), (n,))
            elif isinstance(value, (int, float)):
                raise _NoVector
            # a string never equals a number
        return _valid_and(res, ok, n)
    raise _NoVector


def _and(a: Any, b: Any) -> Any:
    """Conjunction of validities (True, False or a boolean mask)."""
    if a is True:
        return b
    if b is True:
        return a
    if a is False or b is False:
        return False
    return np.logical_and(a, b)


def _valid_and(res: Any, ok: Any, n: int) -> np.ndarray:
    """``res`` where ``ok`` (a validity: True, False or a mask) holds, as a length-n mask."""
    if ok is True:
        out = res
    elif ok is False:
        out = False
    else:
        out = np.logical_and(ok, res)
    if isinstance(out, np.ndarray) and out.shape == (n,):
        return out
    return np.broadcast_to(np.asarray(out, dtype=bool), (n,)).copy()


# ---------------------------------------------------------------------------
# steps (bursts collapsed) and the kernel driver


def _segments(ts: np.ndarray, within: int, slide: int) -> np.ndarray:
    """Pane number of each time stamp: panes are cut at every window start and end."""
    q, r = np.divmod(ts, slide)
    off = within % slide
    if off == 0:
        return q
    return 2 * q + (r >= off)


def _run_kernel(
    query: CompiledQuery, layout: _Layout, prep: _Prepared, kid: np.ndarray | None = None
) -> dict[Any, WindowResult]:
    """Results per window index of one partition; with ``kid`` (a non-decreasing
    partition id per event) of many partitions at once, keyed ``(kid, window index)``:
    no time-stamp group, step or pane spans two partitions, and every open window
    closes where the next partition starts."""
    ts, code = prep.ts, prep.code
    n = len(ts)
    if n == 0:
        return {}
    within, slide = query.within, query.slide
    nv = len(layout.vars)
    # time-stamp groups
    newg = np.ones(n, dtype=bool)
    newg[1:] = ts[1:] != ts[:-1]
    if kid is not None:
        newg[1:] |= kid[1:] != kid[:-1]
    gstart = np.flatnonzero(newg)
    ng = len(gstart)
    gcode = code[gstart]
    if ng < n:
        gid = np.cumsum(newg) - 1
        impure = np.zeros(ng, dtype=bool)
        diff = code != gcode[gid]
        if diff.any():
            impure[gid[diff]] = True
        gsize = np.diff(np.append(gstart, n))
    else:
        impure = np.zeros(ng, dtype=bool)
        gsize = np.ones(ng, dtype=np.int64)
    selfloop = np.asarray(layout.selfloop + [False], dtype=bool)  # index -1 -> False
    special = impure | (gcode < 0) | ((gsize > 1) & selfloop[gcode])
    gseg = _segments(ts[gstart], within, slide)
    gkid = kid[gstart] if kid is not None else None
    brk = np.ones(ng, dtype=bool)
    if ng > 1:
        brk[1:] = special[1:] | special[:-1] | (gcode[1:] != gcode[:-1]) | (gseg[1:] != gseg[:-1])
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
    kk = (ev_hi - ev_lo).astype(np.int64)
    nsteps = len(scode)
    # group steps: (variable, attribute values) per vertex, evaluated from the state before
    groups: list[Any] = []
    if sspecial.any():
        attrs = layout.attrs
        cols = prep.cols
        for s in np.flatnonzero(sspecial).tolist():
            infos = []
            for e in range(int(ev_lo[s]), int(ev_hi[s])):
                c = int(code[e])
                vs = prep.multi[e] if c < 0 else [c]
                values = {a: _item(cols[a][e]) for a in attrs}
                infos.extend((v, values) for v in vs)
            kk[s] = len(groups)
            groups.append(infos)
    # per-step attribute statistics of the events (for a variable's own sums / min / max)
    lo_list = ev_lo.tolist()
    hi_list = ev_hi.tolist()
    code_list = scode.tolist()
    per_attr = {}
    for a_index, a in enumerate(layout.attrs):
        kinds = {kind for kind, i in layout.stat_cols if i == a_index}
        owners = {i for i in range(nv) if a in layout.own[i]}
        per_attr[a_index] = _step_stats(
            prep.cols[a], ev_lo, lo_list, hi_list, code_list, owners, kinds, nsteps
        )
    stats = [per_attr[a][kind] for kind, a in layout.stat_cols]
    kk_list = kk.tolist()
    rows, kernel = layout.instantiate(code_list, kk_list, stats, groups)
    # panes: runs of steps in the same segment
    sseg = gseg[sstart]
    newseg = sseg[1:] != sseg[:-1]
    if gkid is not None:
        newseg |= gkid[sstart[1:]] != gkid[sstart[:-1]]
    cut = np.flatnonzero(newseg) + 1
    seg_lo = np.concatenate(([0], cut)).tolist()
    seg_hi = np.concatenate((cut, [nsteps])).tolist()
    seg_ts_arr = ts[ev_lo[seg_lo]]
    seg_kid_arr = gkid[sstart[seg_lo]] if gkid is not None else None
    # a pane with no step of a START variable (group steps may hold one) leaves an all-zero
    # window state all-zero: windows open at the first such pane and zero states are skipped
    starts = np.asarray(layout.start + [True], dtype=bool)  # index -1 (group step) -> True
    seg_start_arr = np.logical_or.reduceat(starts[scode], seg_lo)
    # panes after every window opened by an earlier START pane (same partition) closed: skipped
    last = np.maximum.accumulate(np.where(seg_start_arr, np.arange(len(seg_lo)), -1))
    since = np.maximum(last, 0)
    alive = (last >= 0) & ((seg_ts_arr[since] // slide) * slide + within > seg_ts_arr)
    if seg_kid_arr is not None:
        alive &= seg_kid_arr[since] == seg_kid_arr
    visit = np.flatnonzero(alive).tolist()
    seg_ts = seg_ts_arr.tolist()
    seg_kid = seg_kid_arr.tolist() if seg_kid_arr is not None else None
    seg_start = seg_start_arr.tolist()
    zero = layout.zero
    frozen_ok = layout.frozen_ok and SKIP_SATURATED
    result = layout.result
    states: dict[int, tuple] = {}  # open windows, in increasing order
    out: dict[Any, WindowResult] = {}
    part: Any = None  # the partition of the open windows (keyed runs)

    def close(k: int) -> None:
        st = states.pop(k)
        if st is zero:
            return
        r = result(st)
        if r is not None:
            out[k if seg_kid is None else (part, k)] = r

    for i in visit:
        lo, hi, t = seg_lo[i], seg_hi[i], seg_ts[i]
        if seg_kid is not None and seg_kid[i] != part:
            for k in list(states):
                close(k)
            part = seg_kid[i]
        kmin = (t - within) // slide + 1
        while states:
            k = next(iter(states))
            if k >= kmin:
                break
            close(k)
        if seg_start[i]:
            for k in range(kmin, t // slide + 1):
                if k not in states:
                    states[k] = zero
        step = CHUNK if frozen_ok else hi - lo
        for c in range(lo, hi, step):
            live = [
                k
                for k, st in states.items()
                if (st is not zero or seg_start[i]) and not (frozen_ok and _frozen(st))
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


def _item(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _step_stats(
    col: Any,
    ev_lo: np.ndarray,
    lo_list: list[int],
    hi_list: list[int],
    code_list: list[int],
    owners: set[int],
    kinds: set[str],
    nsteps: int,
) -> dict[str, list[Any]]:
    """Per step: sum (S), min (MN) and max (MX) of the attribute over the step's events;
    only meaningful for steps of the variables in ``owners``."""
    if isinstance(col, np.ndarray) and nsteps:
        n = len(col)
        if not (
            col.dtype.kind in "iu" and "S" in kinds and n and int(np.abs(col).max()) * n >= 2**63
        ):
            ufunc = {"S": np.add, "MN": np.minimum, "MX": np.maximum}
            return {kind: ufunc[kind].reduceat(col, ev_lo).tolist() for kind in kinds}
        col = col.tolist()
    out: dict[str, list[Any]] = {kind: [0] * nsteps for kind in kinds}
    fns = {"S": sum, "MN": min, "MX": max}
    for s, (lo, hi, c) in enumerate(zip(lo_list, hi_list, code_list, strict=True)):
        if c not in owners:
            continue
        values = [_item(x) for x in col[lo:hi]]
        for kind in kinds:
            out[kind][s] = fns[kind](values)
    return out


# ---------------------------------------------------------------------------
# pattern-grained: skip-till-next-match and contiguous without adjacent predicates / negation


def _run_pattern(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    q = query
    alg = _Algebra(q)
    within, slide = q.within, q.slide
    contiguous = q.semantics == CONTIGUOUS
    has_succ = {v for v in q.positive if q.successors[v]}
    start_vars, end_vars = q.start, q.end
    variables, vars_by_type, predecessors = q.variables, q.vars_by_type, q.predecessors
    open_: dict[str, Aggs] = {}  # per variable: the open trend ends (per window)
    results: Aggs = {}

    def always(k: int) -> bool:
        return True

    for t, group in _groups(events):
        kmin = (t - within) // slide + 1
        kmax = t // slide
        windows = range(kmin, kmax + 1)
        for aggs in open_.values():
            for k in [k for k in aggs if k < kmin]:
                del aggs[k]
        new: list[tuple[str, Aggs]] = []
        closed: set[str] = set()
        for e in group:
            for var in vars_by_type.get(e.type, ()):
                if not variables[var].matches(e.type, e.attrs):
                    continue
                acc: Aggs = {}
                for tr in predecessors[var]:
                    src = open_.get(tr.src)
                    if src:
                        alg.add_into(acc, src, kmin)
                        closed.add(tr.src)
                aggs = alg.finish(acc, windows, always if var in start_vars else None, var, e.attrs)
                if not aggs:
                    continue
                if var in end_vars:
                    _merge(alg, results, aggs)
                if var not in has_succ:
                    continue
                if contiguous and len(group) > 1:
                    # a middle event must be alone at its time stamp
                    if var not in start_vars:
                        continue
                    aggs = alg.finish({}, windows, always, var, e.attrs)
                new.append((var, aggs))
        if contiguous:
            open_ = {}
        else:
            for v in closed:
                open_[v] = {}
        for var, aggs in new:
            alg.add_into(open_.setdefault(var, {}), aggs, kmin)
    return _results(alg, results)


def _merge(alg: _Algebra, results: Aggs, aggs: Aggs) -> None:
    for k, a in aggs.items():
        cur = results.get(k)
        if cur is None:
            results[k] = a if alg.scalar else a.copy()
        elif alg.scalar:
            results[k] = cur + a
        else:
            alg.merge(cur, a)


def _results(alg: _Algebra, results: Aggs) -> dict[int, WindowResult]:
    out: dict[int, WindowResult] = {}
    for k in sorted(results):
        r = alg.result(results[k])
        if r.trends:
            out[k] = r
    return out


def _copy(alg: _Algebra, aggs: Aggs) -> Aggs:
    if alg.scalar:
        return dict(aggs)
    return {k: a.copy() for k, a in aggs.items()}


# ---------------------------------------------------------------------------
# skip-till-any-match with negation and/or adjacent predicates (type- and mixed-grained)


class _Coarse:
    """Per time-stamp group interpreter: type-grained aggregates per (variable, window),
    "since" aggregates for negated transitions, kept events only for the sources of
    transitions with adjacent predicates (mixed-grained)."""

    _cache: dict[int, tuple[CompiledQuery, _Coarse]] = {}

    @classmethod
    def of(cls, query: CompiledQuery) -> _Coarse:
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
                            _merge(alg, results, aggs)
                        else:
                            _merge(
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
                                lst[j] = _copy(alg, lst[j - 1])
        return _results(alg, results)
