"""Plan expressions evaluated vectorized with numpy, with the engine's exact semantics
(``engine.expr.python``); ``NoVector`` where numpy cannot be exact, so callers fall back
to the row-by-row evaluator."""

from __future__ import annotations

from typing import Any

import numpy as np
from trendlake.engine.columns import clean
from trendlake.engine.query import CompiledQuery

__all__ = ["NEXT", "NoVector", "column", "local_mask", "vec_predicate", "vec_value"]

NEXT = "\x00next."  # attrs key prefix of the NEXT event's scalar values (``vec_value``)


class NoVector(Exception):
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


def local_mask(
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
                mask &= column(attrs, name, cache, len(type_mask))[1]  # present
            for expr in exprs:
                mask &= vec_predicate(expr, attrs, cache, len(type_mask))
            return mask
        except NoVector:
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
        row = {a: clean(columns[a][pos]) for a in names}
        if local(row):
            mask[i] = True
    return mask


def column(attrs: dict[str, Any], name: str, cache: dict, n: int) -> tuple[np.ndarray, np.ndarray]:
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
                raise NoVector
            out = (vals, True)
        elif kind == "f":
            vals = arr.astype(np.float64, copy=False)
            out = (vals, ~np.isnan(vals))  # NaN (missing) only ever meets a False validity
        elif kind == "O":
            items = arr.tolist()
            present = np.fromiter((clean(x) is not None for x in items), dtype=bool, count=n)
            vals_l = [x for x in items if clean(x) is not None]
            if all(type(x) is int for x in vals_l):
                if vals_l and max(abs(x) for x in vals_l) >= 2**53:
                    raise NoVector
                out = (
                    np.asarray(
                        [x if p else 0 for x, p in zip(items, present.tolist(), strict=True)],
                        dtype=np.int64,
                    ),
                    present,
                )
            elif all(type(x) in (int, float) for x in vals_l):
                if any(type(x) is int and abs(x) >= 2**53 for x in vals_l):
                    raise NoVector
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
                raise NoVector
        else:
            raise NoVector
    cache[name] = out
    return out


def vec_value(expr: dict[str, Any], attrs: dict[str, Any], cache: dict, n: int) -> tuple[Any, Any]:
    if "lit" in expr:
        lit = expr["lit"]
        if isinstance(lit, bool):
            lit = int(lit)
        if not isinstance(lit, (int, float)) or (isinstance(lit, int) and abs(lit) >= 2**53):
            raise NoVector
        return lit, True
    if "attr" in expr:
        if expr.get("next"):
            # one event's value against a column (an adjacent predicate over candidate
            # predecessors): given as a scalar under NEXT + name
            key = NEXT + expr["attr"]
            if key not in attrs:
                raise NoVector
            value = clean(attrs[key])
            if value is None:
                return 0, False
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise NoVector
            if isinstance(value, int) and abs(value) >= 2**53:
                raise NoVector
            return value, True
        return column(attrs, expr["attr"], cache, n)
    op = expr["op"]
    args = [vec_value(a, attrs, cache, n) for a in expr.get("args", [])]
    if op == "neg":
        ((v, ok),) = args
        return -np.asarray(v) if isinstance(v, np.ndarray) else -v, ok
    if op in ("+", "-", "*", "/", "%"):
        (a, oka), (b, okb) = args
        for x in (a, b):
            xs = np.asarray(x)
            if xs.dtype.kind in "iu" and xs.size and np.abs(xs).max() >= _SAFE_INT:
                raise NoVector
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
        if np.asarray(v).dtype.kind == "f":  # NaN (inf - inf) is missing, as in engine.expr.python
            ok = _and(ok, ~np.isnan(v))
        return v, ok
    raise NoVector


def vec_predicate(expr: dict[str, Any], attrs: dict[str, Any], cache: dict, n: int) -> np.ndarray:
    op = expr.get("op")
    if op in _CMP:
        (a, oka), (b, okb) = (vec_value(x, attrs, cache, n) for x in expr["args"])
        with np.errstate(all="ignore"):
            res = _CMP[op](a, b)
        return _valid_and(res, _and(oka, okb), n)
    if op == "in":
        ((a, ok),) = [vec_value(x, attrs, cache, n) for x in expr["args"]]
        res = np.zeros(n, dtype=bool)
        for value in expr["values"]:
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, (int, float)) and not (
                isinstance(value, int) and abs(value) >= 2**53
            ):
                res |= np.broadcast_to(np.equal(a, value), (n,))
            elif isinstance(value, (int, float)):
                raise NoVector
            # a string never equals a number
        return _valid_and(res, ok, n)
    raise NoVector


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


# the names these functions had inside COGRA, kept for callers written against them
_NoVector = NoVector
_local_mask = local_mask
_column = column
_vec_value = vec_value
_vec_predicate = vec_predicate
