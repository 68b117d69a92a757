"""COGRA's kernel input: per relevant event its variable code, time stamp and attributes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from trendlake.engine.columns import Event, clean
from trendlake.engine.layout import Layout
from trendlake.engine.query import CompiledQuery


class Prepared:
    """Relevant events of a partition (matching at least one positive variable)."""

    __slots__ = ("ts", "code", "multi", "cols")

    def __init__(
        self, ts: np.ndarray, code: np.ndarray, multi: dict[int, list[int]], cols: dict[str, Any]
    ) -> None:
        self.ts = ts  # int64, time order
        self.code = code  # int64: variable index, or -1 when several variables match
        self.multi = multi  # event index -> variable indexes (code -1)
        self.cols = cols  # attribute -> numpy array (int64 / float64) or list of Python values


def prepare_events(query: CompiledQuery, layout: Layout, events: list[Event]) -> Prepared:
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
    return Prepared(
        np.asarray(ts_l, dtype=np.int64),
        np.asarray(code_l, dtype=np.int64),
        multi,
        {a: numeric_column(v) for a, v in cols.items()},
    )


def numeric_column(values: list[Any]) -> Any:
    """A numpy column when that is exact (all ints, or all floats), else the list."""
    present = [v for v in values if v is not None]
    if present and all(type(v) is int for v in present):
        if max(abs(v) for v in present) < 2**53:
            return np.asarray([0 if v is None else v for v in values], dtype=np.int64)
    elif present and all(type(v) is float for v in present):
        return np.asarray([math.nan if v is None else v for v in values], dtype=np.float64)
    return values


def prepared_from_masks(
    query: CompiledQuery,
    layout: Layout,
    masks: list[np.ndarray],
    idx: np.ndarray,
    ts: np.ndarray,
    attrs: dict[str, Any],
) -> Prepared:
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
            cols[a] = numeric_column([clean(x) for x in sub.tolist()])
    return Prepared(ts[idx], code, multi, cols)


