"""COGRA's type-grained window state: its flat layout and the generated step code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import CodeType
from typing import Any

from trendlake.engine.aggregates import Algebra
from trendlake.engine.numbers import (
    BIG,
    CAP,
    FLOAT_BIG,
    NAN,
    SUM_BOUND,
    max_present,
    min_present,
    norm,
    sat,
    scale_exact,
    sum_sat,
)
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult

# longest burst collapsed into one step (2**LIMIT * CAP**2, and in exact mode
# 2**LIMIT * FLOAT_BIG, stay below the float range)
LIMIT = 120
POW = [1 << k for k in range(LIMIT + 1)]
HALF = [0] + [1 << (k - 1) for k in range(1, LIMIT + 1)]


@functools.lru_cache(maxsize=256)
def _code(source: str, name: str) -> CodeType:
    """The compiled kernel source: queries whose kernels have the same source (the same
    query compiled again, similar queries of a workload) share one compile; each runs in
    its own namespace."""
    return compile(source, f"<cogra kernel {name}>", "exec")


class Layout:
    """Type-grained state layout of a query and its compiled kernel.

    The state of one window is a flat tuple: per positive variable V (in
    pattern order) its aggregate in the one layout of ``engine.aggregates.Algebra``:
    ``count(V)``, then ``count_E(V)`` per COUNT(E) variable, ``sum(V)`` per SUM
    key, ``min(V)`` per MIN key, ``max(V)`` per MAX key. Counts and sums saturate
    as in ``Algebra``, or in its exact mode (a query with AVG) are kept exact
    (``aggregates.norm``).
    """

    _cache: dict[int, Layout] = {}

    @classmethod
    def of(cls, query: CompiledQuery) -> Layout:
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
        alg = Algebra(q)
        self.alg = alg
        self.exact = alg.exact
        self.cvars = alg.count_vars
        self.skeys = alg.sum_keys
        self.nkeys = alg.min_keys
        self.xkeys = alg.max_keys
        nv = len(self.vars)
        self.stride = alg.size
        self.o_w = 1
        self.o_z = alg.n_counts
        self.o_n = alg.n_additive
        self.o_x = alg.n_min
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
            zero += alg.zero
        self.zero = tuple(zero)
        # an all-NaN state never changes again (exact mode has no NaN, it never freezes)
        self.frozen_ok = not (self.nkeys or self.xkeys or self.exact)
        # a state of counts only (the compiled kernel's, ``kernel.compiled_for``)
        self.counts_only = not (self.skeys or self.nkeys or self.xkeys or self.exact)
        self.rank = self._simultaneous_order()
        self._make: Callable[..., Any] | None = None
        self._result: Callable[[tuple], WindowResult | None] | None = None

    def _simultaneous_order(self) -> list[int] | None:
        """A rank per variable such that a variable comes before each of its (other)
        predecessors: events of one time stamp applied in this order each see the state
        before the time stamp. None when the template has a cycle through several variables."""
        nv = len(self.vars)
        rank: list[int | None] = [None] * nv
        state = [0] * nv  # 0 new, 1 on the path, 2 done
        order: list[int] = []

        def visit(i: int) -> bool:
            # i must come before others[i]: emit every variable that has i as a predecessor first
            state[i] = 1
            for j in range(nv):
                if i in self.others[j]:
                    if state[j] == 1:
                        return False
                    if state[j] == 0 and not visit(j):
                        return False
            state[i] = 2
            order.append(i)
            return True

        for i in range(nv):
            if state[i] == 0 and not visit(i):
                return None
        for r, i in enumerate(order):
            rank[i] = r
        return [int(r) for r in rank]  # type: ignore[arg-type]

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
        for i in range(nv):
            if self.selfloop[i]:  # k simultaneous events of a Kleene variable: no chaining
                out.append(f"            elif v_ == {nv + i}:")
                out += ["                " + line for line in self._branch(i, simultaneous=True)]
        out.append("            else:")
        out.append(f"                {state} = grp(G[k], ({state}))")
        out.append(f"        return ({state})")
        out.append("    return rows, kernel")
        return "\n".join(out) + "\n"

    def _branch(self, i: int, simultaneous: bool = False) -> list[str]:
        """Step code of ``k`` events of variable ``i``: a burst (each event after the one
        before), or with ``simultaneous`` k events of one time stamp, each extending only
        the trends before it (code ``nv + i``, for a Kleene variable)."""
        others = self.preds[i] if simultaneous else self.others[i]
        var = self.vars[i]
        terms = (["1"] if self.start[i] else []) + [f"c{p}" for p in others]
        if not terms:
            return ["pass"]  # never reached by a trend
        lines = [f"s = {' + '.join(terms)}"]
        loop = self.selfloop[i] and not simultaneous
        if loop:
            lines += [f"u = c{i} + s", "if u:"]
            body = ["P = POW[k]", f"c{i} = u * P - s", self._keep_count(f"c{i}")]
        else:
            lines += ["if s:"]
            body = [f"c{i} = c{i} + k * s", self._keep_count(f"c{i}")]
        for j, e in enumerate(self.cvars):
            sw = " + ".join(f"w{p}_{j}" for p in others) or "0"
            own = e == var
            if loop:
                expr = f"(w{i}_{j} + sw) * P - sw" + (" + k * HALF[k] * u" if own else "")
            else:
                expr = f"w{i}_{j} + k * sw" + (" + k * s" if own else "")
            body += [f"sw = {sw}", f"w{i}_{j} = {expr}", self._keep_count(f"w{i}_{j}")]
        for j, (e, attr) in enumerate(self.skeys):
            sz = " + ".join(f"z{p}_{j}" for p in others) or "0"
            own = e == var
            a = self.attrs.index(attr)
            if loop:
                body += [f"sz = {sz}", f"t = (z{i}_{j} + sz) * P - sz"]
                if own:
                    body += [f"if s{a}_: t = t + {self._times('HALF[k] * u', f's{a}_')}"]
            else:
                body += [f"sz = {sz}", f"t = z{i}_{j} + k * sz" if sz != "0" else f"t = z{i}_{j}"]
                if own:
                    body += [f"if s{a}_: t = t + {self._times('s', f's{a}_')}"]
            body += [f"z{i}_{j} = {self._keep_sum('t')}"]
        for prefix, keys, col, fn in (
            ("n", self.nkeys, "mn", "min_present"),
            ("x", self.xkeys, "mx", "max_present"),
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

    def _keep_count(self, name: str) -> str:
        """Step code bounding a count: saturated to NaN past CAP, or in exact mode kept
        exact (an int up to BIG, else a Far number)."""
        if self.exact:
            return f"if {name} > BIG: {name} = NORM({name})"
        return f"if {name} > CAP: {name} = NAN"

    def _keep_sum(self, name: str) -> str:
        """An expression of a sum as kept (see ``_keep_count``; floats up to FLOAT_BIG)."""
        if self.exact:
            return f"{name} if {name}.__class__ is int and -FB <= {name} <= FB else NORM({name})"
        return f"{name} if {name}.__class__ is int and -SB <= {name} <= SB else sum_sat({name})"

    def _times(self, count: str, value: str) -> str:
        """An expression of a sum contribution ``count * value`` (a float value times a
        count past the float range is a Far number in exact mode)."""
        if self.exact:  # an int value cannot leave a range: multiplied inline
            return f"({count} * {value} if {value}.__class__ is int else SCX({value}, {count}))"
        return f"{count} * {value}"  # ints, or an exact float sum (FSum) of the step

    def _compile(self) -> None:
        namespace: dict[str, Any] = {
            "POW": POW,
            "HALF": HALF,
            "CAP": CAP,
            "NAN": NAN,
            "SB": SUM_BOUND,
            "BIG": BIG,
            "FB": FLOAT_BIG,
            "NORM": norm,
            "SCX": scale_exact,
            "WR": WindowResult,
            "sat": sat,
            "sum_sat": sum_sat,
            "min_present": min_present,
            "max_present": max_present,
        }
        source = self.source() + "\n\n" + self.result_source()
        exec(_code(source, self.query.name), namespace)
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
        keep_count, keep_sum, times = self.alg.sat, self.alg.sum_sat, self.alg.scale
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
                z: Any = times(values[attr], n) if e == var else 0
                for p in preds:
                    z += st[p * stride + o_z + j]
                out[base + o_z + j] += z
            for j, (e, attr) in enumerate(self.nkeys):
                m = out[base + o_n + j]
                for p in preds:
                    m = min_present(m, st[p * stride + o_n + j])
                if e == var:
                    m = min_present(m, values[attr])
                out[base + o_n + j] = m
            for j, (e, attr) in enumerate(self.xkeys):
                m = out[base + o_x + j]
                for p in preds:
                    m = max_present(m, st[p * stride + o_x + j])
                if e == var:
                    m = max_present(m, values[attr])
                out[base + o_x + j] = m
        for v in range(len(self.vars)):
            base = v * stride
            for i in range(base, base + o_z):
                out[i] = keep_count(out[i])
            for i in range(base + o_z, base + o_n):
                out[i] = keep_sum(out[i])
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
        keep_count, keep_sum = ("NORM", "NORM") if self.exact else ("sat", "sum_sat")
        out = [
            "def result(st):",
            f"    {state} = st",
            f"    t = {total}",
            "    t = NORM(t)" if self.exact else "    if t > CAP: t = NAN",
            "    if not t: return None",
            "    counts = {"
            + ", ".join(
                f"{e!r}: {keep_count}({' + '.join(f'w{v}_{j}' for v in ends)})"
                for j, e in enumerate(self.cvars)
            )
            + "}",
            "    sums = {"
            + ", ".join(
                f"{key!r}: {keep_sum}({' + '.join(f'z{v}_{j}' for v in ends)})"
                for j, key in enumerate(self.skeys)
            )
            + "}",
            "    mins = {}",
            "    maxs = {}",
        ]
        for prefix, keys, fn, target in (
            ("n", self.nkeys, "min_present", "mins"),
            ("x", self.xkeys, "max_present", "maxs"),
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


def frozen(st: tuple) -> bool:
    """Every value saturated: no later event can change the state."""
    for x in st:
        if x == x:
            return False
    return True


