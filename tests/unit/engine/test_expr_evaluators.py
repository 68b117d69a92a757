"""The plan expression semantics (docs/plan-format.md §Expressions) checked on every
in-process evaluator against one fixture, ``tests/fixtures/expr/*.jsonl``.

Each fixture line is a case: ``expr`` (plan IR), ``event`` (attributes; ``NaN`` is
allowed, as Python's json reads it), optional ``next`` (the next trend event's
attributes), and the expected ``value`` (null = missing) and/or ``holds`` (whether the
expression holds as a predicate). The expected answers come from the documented rules,
not from running the code. The Spark pushdown runs the same fixture in
``tests/integration/spark/test_pushdown_conformance.py``; ``expr_text`` is checked here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.columns import as_column, clean
from trendlake.engine.expr import compile_adjacent, compile_local, compile_value

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "expr"


def load_cases() -> list[dict[str, Any]]:
    cases = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                case = json.loads(line)
                case["_where"] = f"{path.name}:{n}"
                cases.append(case)
    return cases


CASES = load_cases()
VALUE_CASES = [c for c in CASES if "value" in c]
HOLDS_CASES = [c for c in CASES if "holds" in c]


def vector_backend() -> ModuleType:
    """The numpy evaluator (the one place that names its module)."""
    from trendlake.engine.expr import vector

    return vector


def row(attrs: dict[str, Any]) -> dict[str, Any]:
    """An event's attributes as the engine hands them to the Python evaluator (the NULL rule applied)."""
    return {k: clean(v) for k, v in attrs.items()}


def same_value(got: Any, want: Any) -> bool:
    if want is None:
        return got is None
    if isinstance(want, bool):  # the value of a comparison
        return got is want
    if got is None or isinstance(got, bool) or isinstance(got, str) != isinstance(want, str):
        return False
    if isinstance(want, int) and not isinstance(want, bool):
        return got == want and (isinstance(got, int) or float(got).is_integer() and abs(want) < 2**53)
    if isinstance(want, float) and math.isnan(want):  # a NaN made by arithmetic is a value
        return isinstance(got, float) and math.isnan(got)
    return got == want


def test_fixture_is_well_formed() -> None:
    ids = [(c["_where"].split(":")[0], c["id"]) for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids within a fixture file"
    assert len(CASES) >= 50
    for c in CASES:
        assert "value" in c or "holds" in c, c["_where"]


# ------------------------------------------------------------------ Python evaluator

@pytest.mark.parametrize("case", VALUE_CASES, ids=[c["id"] for c in VALUE_CASES])
def test_python_value(case: dict[str, Any]) -> None:
    nxt = row(case["next"]) if "next" in case else None
    got = compile_value(case["expr"])(row(case["event"]), nxt)
    assert same_value(got, case["value"]), f"{case['_where']}: got {got!r}, want {case['value']!r}"


@pytest.mark.parametrize("case", HOLDS_CASES, ids=[c["id"] for c in HOLDS_CASES])
def test_python_holds(case: dict[str, Any]) -> None:
    cur = row(case["event"])
    if "next" in case:
        got = compile_adjacent([case["expr"]])(cur, row(case["next"]))
    else:
        local = compile_local([case["expr"]], [])
        assert local is not None
        got = local(cur)
    assert got is case["holds"], f"{case['_where']}: got {got!r}"


# ------------------------------------------------------------------ numpy evaluator

def columns(attrs: dict[str, Any]) -> dict[str, np.ndarray]:
    """One-row columns built the way the engine builds them."""
    return {k: as_column([v]) for k, v in attrs.items()}


def vector_value(expr: dict[str, Any], attrs: dict[str, Any]) -> tuple[bool, Any]:
    """(vectorized?, value of the single row or None)."""
    vec = vector_backend()
    try:
        v, ok = vec.vec_value(expr, columns(attrs), {}, 1)
    except vec.NoVector:
        return False, None
    ok = bool(np.broadcast_to(ok, (1,))[0])
    if not ok:
        return True, None
    item = np.broadcast_to(v, (1,))[0]
    item = item.item() if isinstance(item, np.generic) else item
    return True, item


def vector_holds(expr: dict[str, Any], attrs: dict[str, Any]) -> tuple[bool, bool | None]:
    vec = vector_backend()
    try:
        mask = vec.vec_predicate(expr, columns(attrs), {}, 1)
    except vec.NoVector:
        return False, None
    assert mask.dtype == bool and mask.shape == (1,)
    return True, bool(mask[0])


NUMPY_VALUE = [c for c in VALUE_CASES if "next" not in c]
NUMPY_HOLDS = [c for c in HOLDS_CASES if "next" not in c]


@pytest.mark.parametrize("case", NUMPY_VALUE, ids=[c["id"] for c in NUMPY_VALUE])
def test_numpy_value(case: dict[str, Any]) -> None:
    vectorized, got = vector_value(case["expr"], case["event"])
    if vectorized:  # otherwise the engine evaluates row by row with the Python evaluator
        assert same_value(got, case["value"]), f"{case['_where']}: got {got!r}, want {case['value']!r}"


@pytest.mark.parametrize("case", NUMPY_HOLDS, ids=[c["id"] for c in NUMPY_HOLDS])
def test_numpy_holds(case: dict[str, Any]) -> None:
    vectorized, got = vector_holds(case["expr"], case["event"])
    if vectorized:
        assert got is case["holds"], f"{case['_where']}: got {got!r}"


def test_numpy_vectorizes_most_numeric_cases() -> None:
    """The fallback is allowed, but the fixture must exercise the vectorized path."""
    done = sum(vector_holds(c["expr"], c["event"])[0] for c in NUMPY_HOLDS)
    assert done >= len(NUMPY_HOLDS) // 2


# ------------------------------------------------------------------ random expressions

_ATTRS = ["a", "b", "c"]  # a and c hold integers, b floats (a column has one kind)
_EDGE_INTS = [0, 1, -1, 2**31 - 1, -(2**31), 2**31, 2**52, 2**53, 2**53 + 1, -(2**53) - 1, 2**62,
              2**63 - 1, -(2**63), -(2**63) + 1, 5 * 10**18]
_EDGE_FLOATS = [float("nan"), 0.0, -0.0, float("inf"), -float("inf"), 1.7e308, -1.7e308, 5e-324,
                -5e-324, 2.2250738585072014e-308, 9.223372036854776e18, 9007199254740992.0,
                4611686014132420608.0, 1e19]


def _exprs() -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(
        st.sampled_from([{"attr": a, "var": "E"} for a in _ATTRS]),
        st.integers(-(2**40), 2**40).map(lambda v: {"lit": v}),
        st.sampled_from([*_EDGE_INTS, 10**19, 2**64, -(2**64)]).map(lambda v: {"lit": v}),
        st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: {"lit": v}),
        st.sampled_from([f for f in _EDGE_FLOATS if f == f and abs(f) != float("inf")]).map(lambda v: {"lit": v}),
    )
    arith = st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "/", "%"]), inner, inner).map(
                lambda t: {"op": t[0], "args": [t[1], t[2]]}
            ),
            inner.map(lambda e: {"op": "neg", "args": [e]}),
        ),
        max_leaves=5,
    )
    return st.one_of(
        st.tuples(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), arith, arith).map(
            lambda t: {"op": t[0], "args": [t[1], t[2]]}
        ),
        st.tuples(arith, st.lists(st.integers(-5, 5) | st.sampled_from([0.0, -0.0, 2**63 - 1, 9.223372036854776e18]),
                                  max_size=4)).map(
            lambda t: {"op": "in", "args": [t[0]], "values": t[1]}
        ),
    )


_INTS = st.one_of(st.none(), st.integers(-100, 100), st.sampled_from(_EDGE_INTS))
_FLOATS = st.one_of(st.none(), st.floats(-1e3, 1e3), st.sampled_from(_EDGE_FLOATS))
_ROW = st.fixed_dictionaries({"a": _INTS, "b": _FLOATS, "c": _INTS})


@settings(max_examples=300, deadline=None)
@given(expr=_exprs(), rows=st.lists(_ROW, min_size=1, max_size=6))
def test_numpy_and_the_oracle_agree_with_python_on_random_expressions(
    expr: dict[str, Any], rows: list[dict[str, Any]]
) -> None:
    """Random expressions over values drawn from the edges (int64 limits, 2**53, 2**62, ±inf,
    NaN, ±0.0, 1.7e308, subnormals): the oracle's evaluator (written from the format
    description) and numpy, where it does not refuse, give the Python evaluator's answers."""
    from tests.oracle import expr as oracle

    local = compile_local([expr], [])
    assert local is not None
    want = [local(row(r)) for r in rows]
    assert [oracle.holds(expr, r) for r in rows] == want
    vec = vector_backend()
    cols = {a: as_column([r[a] for r in rows]) for a in _ATTRS}
    try:
        mask = vec.vec_predicate(expr, cols, {}, len(rows))
    except vec.NoVector:
        return
    assert mask.tolist() == want


_INT31 = st.one_of(st.integers(-(2**31) + 1, 2**31 - 1), st.sampled_from([2**31 - 1, -(2**31) + 1, 2**26 + 1]))


@settings(max_examples=200, deadline=None)
@given(xs=st.lists(st.tuples(_INT31, _INT31), min_size=1, max_size=5), delta=st.integers(-2, 2),
       op=st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), via=st.sampled_from(["lit", "attr", "in"]))
def test_numpy_compares_integer_products_with_doubles_exactly(
    xs: list[tuple[int, int]], delta: int, op: str, via: str
) -> None:
    """``a * c`` (exact integers up to 2**62) against a double next to the first product, as a
    literal, a float column or an IN list: numpy must compare exactly as Python does (a
    product beyond 2**53 rounded to a double first would make ``=`` hold)."""
    near = float(xs[0][0] * xs[0][1] + delta)
    prod = {"op": "*", "args": [{"attr": "a", "var": "E"}, {"attr": "c", "var": "E"}]}
    if via == "in":
        expr = {"op": "in", "args": [prod], "values": [near]}
    else:
        other = {"lit": near} if via == "lit" else {"attr": "b", "var": "E"}
        expr = {"op": op, "args": [prod, other]}
    rows = [{"a": a, "c": c, "b": near} for a, c in xs]
    local = compile_local([expr], [])
    assert local is not None
    want = [local(row(r)) for r in rows]
    vec = vector_backend()
    cols = {k: as_column([r[k] for r in rows]) for k in ("a", "b", "c")}
    try:
        mask = vec.vec_predicate(expr, cols, {}, len(rows))
    except vec.NoVector:
        assert any(abs(a * c) >= 2**53 for a, c in xs), "numpy refused exact small products"
        return
    assert mask.tolist() == want


# ------------------------------------------------------------------ text

def test_expr_text_keeps_precedence() -> None:
    from trendlake.jobs.statistics import expr_text

    a, b = {"attr": "a", "var": "E"}, {"attr": "b", "var": "E"}
    s = {"op": "+", "args": [a, b]}
    assert expr_text({"op": "*", "args": [s, {"lit": 2}]}) == "(a + b) * 2"
    assert expr_text({"op": "-", "args": [a, s]}) == "a - (a + b)"
    assert expr_text({"op": ">", "args": [{"op": "*", "args": [a, {"lit": 1000}]}, {"lit": 5}]}) == "a * 1000 > 5"
    assert expr_text({"op": "neg", "args": [a]}) == "-a"
    assert expr_text({"op": "neg", "args": [s]}) == "-(a + b)"
    assert expr_text({"op": "in", "args": [a], "values": [1, "x"]}) == "a IN (1, 'x')"
    assert expr_text({"attr": "a", "var": "E", "next": True}) == "NEXT(E).a"
