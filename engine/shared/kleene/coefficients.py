"""The shared coefficients of an event-grained Kleene graph, as matrices.

``shared.graph`` keeps, for each vertex ``e`` of the shared type and each
snapshot ``s``, the coefficients ``M[e,s]`` (trends from ``s`` ending at
``e``), ``C[e,s]`` (events of the shared type over those trends), ``A_a[e,s]``
(the sum of attribute ``a`` over them) and ``N_a``/``X_a`` (its minimum and
maximum over them, meaningful where ``M[e,s] > 0``). Here they are the rows of
matrices whose columns are the live snapshots: a new vertex sums the rows
of its predecessors in one numpy reduction instead of a Python loop per
predecessor and snapshot.

Exactness: ``M``, ``C`` and integer sums are int64 while a bound on every
reduction (computed in Python integers, ``magnitude``) stays below 2**62, then
Python integers (object arrays); float sums are exact ``FSum`` values in object
arrays (``engine.numbers.FSum``), so they equal a single query's sums
exactly whatever the order of additions. Saturation (not in exact mode):
a count past ``CAP`` is kept at ``CAP + 1`` and the sums it carries become
NaN, as in GRETA.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from trendlake.engine.numbers import CAP, NAN, scale, scale_exact

__all__ = ["Coefficients", "column_dtype", "magnitude"]

SAT = CAP + 1
SAFE = 1 << 62
Key = tuple[str, str]  # (kind, attribute): ("M", ""), ("C", ""), ("A", a), ("N", a), ("X", a)


class _Top:
    """Greater than every value: the neutral element of a minimum over object arrays."""

    def __lt__(self, other: Any) -> bool:
        return False

    __le__ = __lt__

    def __gt__(self, other: Any) -> bool:
        return True

    __ge__ = __gt__


class _Bottom:
    """Less than every value: the neutral element of a maximum over object arrays."""

    def __lt__(self, other: Any) -> bool:
        return True

    __le__ = __lt__

    def __gt__(self, other: Any) -> bool:
        return False

    __ge__ = __gt__


def _neutral(dtype: Any, kind: str) -> Any:
    """What a minimum (``N``) or maximum (``X``) starts from; 0 for the sums."""
    if kind not in "NX":
        return 0
    if dtype == np.float64:
        return np.inf if kind == "N" else -np.inf
    if dtype == np.int64:
        info = np.iinfo(np.int64)
        return info.max if kind == "N" else info.min
    return _Top() if kind == "N" else _Bottom()


def magnitude(values: np.ndarray) -> int:
    """The largest magnitude in an integer array, as a Python int (0 when empty): never
    numpy's ``abs``, which leaves the int64 minimum negative."""
    if not len(values):
        return 0
    return max(-int(values.min()), int(values.max()), 0)


def column_dtype(values: Any) -> Any:
    """The matrix dtype for an attribute column: int64, float64, else object."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return np.int64
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        return np.float64
    return object


class Coefficients:
    """Rows: the live vertices of the shared type in time order; columns: live snapshots."""

    def __init__(
        self, need_c: bool, sum_attrs: dict[str, Any], min_attrs: dict[str, Any], max_attrs: dict[str, Any],
        exact: bool, val_dtypes: dict[str, Any] | None = None,
    ) -> None:
        self.exact = exact
        self.keys: list[Key] = [("M", "")] + ([("C", "")] if need_c else [])
        self.keys += [("A", a) for a in sum_attrs] + [("N", a) for a in min_attrs] + [("X", a) for a in max_attrs]
        dtypes = {("M", ""): np.int64, ("C", ""): np.int64}
        # float sums: exact FSum values in object arrays
        dtypes.update({("A", a): (np.int64 if dt == np.int64 else object) for a, dt in sum_attrs.items()})
        dtypes.update({("N", a): dt for a, dt in min_attrs.items()})
        dtypes.update({("X", a): dt for a, dt in max_attrs.items()})
        self.rows_cap, self.cols_cap = 16, 8
        self.mat = {k: np.full((16, 8), _neutral(dtypes[k], k[0]), dtype=dtypes[k]) for k in self.keys}
        self.tot = {k: np.full(8, _neutral(dtypes[k], k[0]), dtype=dtypes[k]) for k in self.keys}
        self.big = {k: 0 for k in self.keys}  # the largest magnitude in a row (sums), for the int64 bound
        self.r_off = 0  # first live row
        self.rows = 0
        self.c_base = 0  # snapshot id of column 0
        self.c_off = 0  # first live column
        self.cols = 0
        self.attrs: list[dict[str, Any]] = []  # per row: the vertex's attributes
        self.last_window: list[int] = []
        # per row: the values of the attributes the adjacent predicate on K -> K reads
        self.val_dtypes = dict(val_dtypes or {})
        self.vals: dict[str, list[Any]] = {a: [] for a in self.val_dtypes}
        self._live_cols: tuple[tuple[int, int], dict[str, np.ndarray]] | None = None

    # ---- shape ---------------------------------------------------------------------------
    def _reshape(self, rows: slice, cols: slice, cap_r: int, cap_c: int) -> None:
        for k in self.keys:
            old, old_t = self.mat[k], self.tot[k]
            fill = _neutral(old.dtype, k[0])
            new = np.full((cap_r, cap_c), fill, dtype=old.dtype)
            part = old[rows, cols]
            new[: part.shape[0], : part.shape[1]] = part
            self.mat[k] = new
            new_t = np.full(cap_c, fill, dtype=old_t.dtype)
            part_t = old_t[cols]
            new_t[: len(part_t)] = part_t
            self.tot[k] = new_t
        self.rows_cap, self.cols_cap = cap_r, cap_c

    def add_column(self) -> int:
        """A new snapshot; its id."""
        if self.cols == self.cols_cap:
            dead = self.c_off
            if dead * 2 >= self.cols_cap:  # shift the live columns left
                self._reshape(slice(0, self.rows_cap), slice(dead, self.cols), self.rows_cap, self.cols_cap)
                self.c_base += dead
                self.cols -= dead
                self.c_off = 0
            else:
                self._reshape(slice(0, self.rows_cap), slice(0, self.cols), self.rows_cap, self.cols_cap * 2)
        self.cols += 1
        return self.c_base + self.cols - 1

    def drop_columns_before(self, sid: int) -> None:
        self.c_off = max(self.c_off, min(sid - self.c_base, self.cols))

    def prune(self, kmin: int) -> None:
        """Drop the rows of vertices whose windows all ended."""
        lw = self.last_window
        off = self.r_off
        while off < self.rows and lw[off] < kmin:
            off += 1
        self.r_off = off

    def _room_for_row(self) -> None:
        if self.rows < self.rows_cap:
            return
        dead = self.r_off
        if dead * 2 >= self.rows_cap:
            self._reshape(slice(dead, self.rows), slice(0, self.cols_cap), self.rows_cap, self.cols_cap)
            self.rows -= dead
            self.r_off = 0
            del self.attrs[:dead]
            del self.last_window[:dead]
            for vals in self.vals.values():
                del vals[:dead]
            self._live_cols = None  # row numbers now name other vertices
        else:
            self._reshape(slice(0, self.rows), slice(0, self.cols_cap), self.rows_cap * 2, self.cols_cap)

    def live_attrs(self) -> list[dict[str, Any]]:
        return self.attrs[self.r_off : self.rows]

    def live_columns(self) -> dict[str, np.ndarray]:
        """The adjacent predicate's attributes of the live rows, as arrays (kept until the rows
        change)."""
        key = (self.r_off, self.rows)
        if self._live_cols is None or self._live_cols[0] != key:
            cols = {a: np.array(vals[self.r_off : self.rows], dtype=self.val_dtypes[a]) for a, vals in self.vals.items()}
            self._live_cols = (key, cols)
        return self._live_cols[1]

    def _to_object(self, k: Key) -> None:
        if self.mat[k].dtype != object:
            self.mat[k] = self.mat[k].astype(object)
            self.tot[k] = self.tot[k].astype(object)

    # ---- a vertex --------------------------------------------------------------------------
    def vertex(self, sid: int, mask: np.ndarray | None, attrs: dict[str, Any]) -> dict[Key, np.ndarray]:
        """The coefficient rows of a new vertex in snapshot ``sid``: the sum of the rows of its
        predecessors (``mask`` over the live rows; None: every vertex so far, the totals),
        plus the vertex itself. Reads the rows before this time stamp; ``commit`` adds it."""
        lo, hi = self.c_off, self.cols
        src: dict[Key, np.ndarray] = {}
        if mask is None:
            for k in self.keys:
                src[k] = self.tot[k][lo:hi].copy()
        else:
            rows = np.flatnonzero(mask) + self.r_off
            n = len(rows)
            for k in self.keys:
                if k[0] in "MCA" and self.mat[k].dtype == np.int64 and (n + 1) * (self.big[k] + 1) >= SAFE:
                    self._to_object(k)
            m_sel = self.mat[("M", "")][rows, lo:hi]
            present = m_sel > 0
            for k in self.keys:
                mat = self.mat[k]
                if not n:
                    src[k] = np.full(hi - lo, _neutral(mat.dtype, k[0]), dtype=mat.dtype)
                elif k[0] in "MCA":
                    src[k] = m_sel.sum(axis=0) if k[0] == "M" else mat[rows, lo:hi].sum(axis=0)
                else:
                    fill = _neutral(mat.dtype, k[0])
                    sel = np.where(present, mat[rows, lo:hi], fill)
                    if mat.dtype == object:
                        sel = sel.astype(object)
                    src[k] = sel.min(axis=0) if k[0] == "N" else sel.max(axis=0)
        out: dict[Key, np.ndarray] = {}
        m = src[("M", "")]
        m[sid - self.c_base - lo] += 1
        if m.dtype == object and not self.exact:
            m = np.minimum(m, SAT)
        out[("M", "")] = m
        saturated = None if (self.exact or m.dtype != object) else (m == SAT)
        reached = m > 0
        for k in self.keys[1:]:
            s = src[k]
            if k[0] == "C":
                c = s + m
                out[k] = np.minimum(c, SAT) if (c.dtype == object and not self.exact) else c
            elif k[0] == "A":
                value = attrs[k[1]]
                exact_ints = s.dtype == np.int64 and m.dtype == np.int64 and isinstance(value, (int, np.integer))
                if exact_ints and abs(int(value)) * magnitude(m) + magnitude(s) < SAFE:
                    out[k] = s + m * value
                else:  # Python numbers: exact integers, saturated counts, huge path counts
                    times = scale_exact if self.exact else scale
                    a = np.array([x + times(value, y) for x, y in zip(s.tolist(), m.tolist(), strict=True)],
                                 dtype=object)
                    if saturated is not None and saturated.any():
                        a[saturated] = NAN
                    out[k] = a
            else:
                value = attrs[k[1]]
                if s.dtype == object:
                    pick = min if k[0] == "N" else max
                    out[k] = np.array([pick(x, value) if r else x for x, r in zip(s, reached, strict=True)], dtype=object)
                else:
                    fn = np.minimum if k[0] == "N" else np.maximum
                    out[k] = np.where(reached, fn(s, value), s)
        return out

    def commit(self, row: dict[Key, np.ndarray], attrs: dict[str, Any], last_window: int, keep_row: bool) -> None:
        """Add a vertex's rows to the totals and, with ``keep_row``, as a live row."""
        lo, hi = self.c_off, self.cols
        if keep_row:
            self._room_for_row()
        reached = row[("M", "")] > 0
        for k in self.keys:
            values = row[k]
            if values.dtype == object:
                self._to_object(k)
            tot = self.tot[k]
            if k[0] in "MCA":
                if tot.dtype == np.int64 and magnitude(tot[lo:hi]) + magnitude(values) >= SAFE:
                    self._to_object(k)
                    tot = self.tot[k]
                new = tot[lo:hi] + values
                if k[0] in "MC" and new.dtype == object and not self.exact:
                    new = np.minimum(new, SAT)
                tot[lo:hi] = new
                if values.dtype == np.int64 and len(values):
                    self.big[k] = max(self.big[k], magnitude(values))
            else:
                cur = tot[lo:hi]
                if tot.dtype == object:
                    pick = min if k[0] == "N" else max
                    tot[lo:hi] = [pick(x, y) if r else x for x, y, r in zip(cur, values, reached, strict=True)]
                else:
                    fn = np.minimum if k[0] == "N" else np.maximum
                    tot[lo:hi] = np.where(reached, fn(cur, values), cur)
            if keep_row:
                self.mat[k][self.rows, lo:hi] = values
        if keep_row:
            self.rows += 1
            self.attrs.append(attrs)
            self.last_window.append(last_window)
            for a, vals in self.vals.items():
                vals.append(attrs.get(a))

    def range_total(self, k: Key, lo_sid: int, hi_sid: int) -> Any:
        """The total of one coefficient over every vertex so far and the snapshots ``lo_sid`` to
        ``hi_sid - 1`` (a minimum or maximum over those where the total of ``M`` is not 0)."""
        lo, hi = lo_sid - self.c_base, hi_sid - self.c_base
        tot = self.tot[k][lo:hi]
        if hi - lo == 1:
            x = tot[0]
        elif k[0] in "MCA":
            if tot.dtype == np.int64 and magnitude(tot) * (hi - lo) >= SAFE:
                tot = tot.astype(object)
            x = tot.sum()
        else:
            reached = self.tot[("M", "")][lo:hi] > 0
            if not reached.any():
                return None
            sel = tot[reached]
            x = sel.min() if k[0] == "N" else sel.max()
        return x.item() if isinstance(x, np.generic) else x
