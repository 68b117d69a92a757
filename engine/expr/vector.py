"""Plan expressions evaluated vectorized with numpy, with the engine's exact semantics
(``engine.expr.python``); ``NoVector`` where numpy cannot be exact, so callers fall back
to the row-by-row evaluator.

What numpy evaluates, and why it is exact there:

* integer columns and literals within ``±2**53`` (an int64 array), float columns
  (NaN in the data is missing: the validity, never a value);
* integer arithmetic only on operands strictly within ``±2**31``: every sum,
  difference and product stays far inside int64 (no wrap-around), and ``/``
  converts both operands to doubles exactly before one correctly rounded division;
* a comparison (or ``IN``) between an integer array and a float only while the
  integers are within ``±2**53``, where the int-to-double conversion numpy makes is
  exact (a product up to ``2**62`` against a float is left to Python, which
  compares exactly);
* float arithmetic is IEEE in both; a NaN it makes stays a NaN value (false in
  every comparison but ``!=``), as in Python;
* booleans are not numbers: a boolean column or literal is left to Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from trendlake.engine.columns import clean

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
_SAFE_INT = 2**31  # integer arithmetic operands strictly inside (-_SAFE_INT, _SAFE_INT)
_EXACT = 2**53  # integers converted to float64 exactly strictly inside (-_EXACT, _EXACT)


def _int_within(values: Any, bound: int) -> bool:
    """Whether every value of an integer array (or scalar) lies strictly inside ±bound.
    Compared as Python ints, bound by bound: never ``abs`` of a signed minimum."""
    arr = np.asarray(values)
    if not arr.size:
        return True
    return -bound < int(arr.min()) and int(arr.max()) < bound


def _is_int(values: Any) -> bool:
    return np.asarray(values).dtype.kind in "iu"


def _is_float(values: Any) -> bool:
    return np.asarray(values).dtype.kind == "f"


def local_mask(
    local: Callable[[dict[str, Any]], bool] | None,
    exprs: Sequence[dict[str, Any]] | None,
    required: Sequence[str],
    type_mask: np.ndarray,
    attrs: dict[str, Any],
    cache: dict[str, tuple[np.ndarray, Any]],
) -> np.ndarray:
    """Which rows of ``type_mask`` (the rows of a variable's type) pass the variable's
    local predicates: ``local``, their compiled callable (None: no predicate), ``exprs``,
    the same as plan expressions (``local_predicates``; None: not at hand) over the
    ``required`` attributes (``required_attributes``: each must be present). With numpy
    where it is exact (``exprs`` given), else row by row with ``local``. ``attrs``: the
    columns; ``cache``: numeric columns shared by the predicates (``column``)."""
    if local is None:
        return type_mask
    if exprs is not None:
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
            if not _int_within(arr, _EXACT):  # checked before the cast: a uint64 would wrap
                raise NoVector
            out = (arr.astype(np.int64, copy=False), True)
        elif kind == "f":
            vals = arr.astype(np.float64, copy=False)
            out = (vals, ~np.isnan(vals))  # NaN (missing) only ever meets a False validity
        elif kind == "O":
            items = arr.tolist()
            present = np.fromiter((clean(x) is not None for x in items), dtype=bool, count=n)
            vals_l = [x for x in items if clean(x) is not None]
            if all(type(x) is int for x in vals_l):
                if vals_l and not -_EXACT < min(vals_l) <= max(vals_l) < _EXACT:
                    raise NoVector
                out = (
                    np.asarray(
                        [x if p else 0 for x, p in zip(items, present.tolist(), strict=True)],
                        dtype=np.int64,
                    ),
                    present,
                )
            elif all(type(x) in (int, float) for x in vals_l):
                if any(type(x) is int and not -_EXACT < x < _EXACT for x in vals_l):
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
        if isinstance(lit, bool) or not isinstance(lit, (int, float)):
            raise NoVector  # a boolean is not a number; text is compared row by row
        if isinstance(lit, int) and not -_EXACT < lit < _EXACT:
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
            if isinstance(value, int) and not -_EXACT < value < _EXACT:
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
            if _is_int(x) and not _int_within(x, _SAFE_INT):
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
        return v, ok  # a NaN made here (inf - inf) is a value, as in engine.expr.python
    raise NoVector


def vec_predicate(expr: dict[str, Any], attrs: dict[str, Any], cache: dict, n: int) -> np.ndarray:
    op = expr.get("op")
    if op in _CMP:
        (a, oka), (b, okb) = (vec_value(x, attrs, cache, n) for x in expr["args"])
        _exact_comparison(a, b)
        with np.errstate(all="ignore"):
            res = _CMP[op](a, b)
        return _valid_and(res, _and(oka, okb), n)
    if op == "in":
        ((a, ok),) = [vec_value(x, attrs, cache, n) for x in expr["args"]]
        res = np.zeros(n, dtype=bool)
        for value in expr["values"]:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue  # a string or a boolean never equals a number
            if isinstance(value, int) and not -_EXACT < value < _EXACT:
                raise NoVector
            _exact_comparison(a, value)
            res |= np.broadcast_to(np.equal(a, value), (n,))
        return _valid_and(res, ok, n)
    raise NoVector


def _exact_comparison(a: Any, b: Any) -> None:
    """NoVector unless numpy compares ``a`` and ``b`` exactly: an integer side against a
    float side must lie within ±2**53, where numpy's conversion to float64 is exact."""
    for x, y in ((a, b), (b, a)):
        if _is_int(x) and _is_float(y) and not _int_within(x, _EXACT):
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
