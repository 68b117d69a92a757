"""Expression evaluators (engine/expr/python.py, engine/expr/vector.py) by the plan-format rules.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). The rules (docs/plan-format.md
§Expressions, engine.expr.python's module doc): a missing value (None) makes
arithmetic missing and every comparison false, a number never compares with
text, integers are exact. The vectorized evaluator must agree with them or
refuse (``NoVector``) where numpy cannot be exact: integers from 2**53 on
(float64 loses them), integer arithmetic from 2**31 on (int64 products). Its
fast path must also be taken where it is exact; values are worked out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from trendlake.engine.expr import compile_adjacent, compile_local, compile_value
from trendlake.engine.expr.vector import NoVector, column, vec_predicate, vec_value


def attr(name: str, nxt: bool = False) -> dict:
    return {"attr": name, "var": "E", **({"next": True} if nxt else {})}


def lit(v) -> dict:
    return {"lit": v}


def op(o: str, *args: dict, **extra) -> dict:
    return {"op": o, "args": list(args), **extra}


# ---------------------------------------------------------------- row by row


@pytest.mark.parametrize(
    ("o", "a", "b", "want"),
    [
        ("=", None, 1, False), ("!=", None, 1, False), ("!=", None, "a", False), ("!=", "a", None, False),
        ("=", None, None, False), ("!=", None, None, False), ("<", None, "a", False),
        ("!=", 1, "1", False), ("=", "a", "a", True), ("!=", "a", "b", True), ("<", 1, 2.5, True),
    ],
)
def test_a_comparison_with_a_missing_value_or_across_kinds_is_false(o, a, b, want) -> None:
    f = compile_value(op(o, attr("a"), attr("b")))
    assert f({"a": a, "b": b}, None) is want


def test_negation_of_numbers_only() -> None:
    f = compile_value(op("neg", attr("x")))
    assert f({"x": 3}, None) == -3
    assert f({"x": -2.5}, None) == 2.5
    assert f({"x": None}, None) is None
    assert f({"x": "a"}, None) is None


def test_local_predicate_needs_every_conjunct_and_every_required_attribute() -> None:
    local = compile_local([op(">", attr("x"), lit(1)), op("<", attr("x"), lit(5))], ["y"])
    assert local({"x": 3, "y": 0}) is True
    assert local({"x": 3, "y": None}) is False  # required y missing
    assert local({"x": 3}) is False
    assert local({"x": 5, "y": 1}) is False  # second conjunct false
    assert local({"x": 1, "y": 1}) is False  # first conjunct false
    assert compile_local([], ["y"])({"y": 2}) is True
    assert compile_local([], []) is None


@pytest.mark.parametrize("conjuncts", [1, 2, 3])
def test_adjacent_predicate_is_the_conjunction(conjuncts: int) -> None:
    parts = [op("<", attr("x"), attr("x", nxt=True)),
             op("=", attr("k"), attr("k", nxt=True)),
             op("!=", attr("x", nxt=True), lit(9))][:conjuncts]
    f = compile_adjacent(parts)
    assert f({"x": 1, "k": "a"}, {"x": 2, "k": "a"}) is True
    assert f({"x": 2, "k": "a"}, {"x": 2, "k": "a"}) is False  # x not increasing
    assert f({"x": 1, "k": "a"}, {"x": None, "k": "a"}) is False  # missing
    if conjuncts >= 2:
        assert f({"x": 1, "k": "a"}, {"x": 2, "k": "b"}) is False
    if conjuncts == 3:
        assert f({"x": 1, "k": "a"}, {"x": 9, "k": "a"}) is False


# ---------------------------------------------------------------- vectorized


def test_integer_columns_inside_2_53_are_vectorized_exactly() -> None:
    n = 3
    vals, ok = column({"x": np.array([1, -(2**53 - 1), 2**53 - 1])}, "x", {}, n)
    assert vals.tolist() == [1, -(2**53 - 1), 2**53 - 1] and ok is True
    for big in (2**53, -(2**53), 2**53 + 1):
        with pytest.raises(NoVector):
            column({"x": np.array([1, big, 0])}, "x", {}, n)


def test_unsigned_and_minimum_columns_are_refused_before_any_cast() -> None:
    """A uint64 beyond int64 would wrap to a small negative number in a cast to int64
    (2**64 - 1 to -1); int64's minimum has no positive counterpart (abs(-2**63) < 0)."""
    n = 2
    for arr in (np.array([2**64 - 1, 0], dtype=np.uint64), np.array([2**63, 1], dtype=np.uint64),
                np.array([-(2**63), 0], dtype=np.int64), np.array([0, 2**63 - 1], dtype=np.int64)):
        with pytest.raises(NoVector):
            column({"x": arr}, "x", {}, n)
    vals, ok = column({"x": np.array([2**53 - 1, 7], dtype=np.uint64)}, "x", {}, n)
    assert vals.dtype == np.int64 and vals.tolist() == [2**53 - 1, 7] and ok is True


def test_integers_against_floats_only_where_the_conversion_is_exact() -> None:
    """(2**31 - 1)**2 = 2**62 - 2**32 + 1 is not a double: numpy would round it to the
    double 2**62 - 2**32 and find them equal; Python compares exactly."""
    big = 2**31 - 1
    attrs = {"x": np.array([big, 3]), "y": np.array([big, 4]), "f": np.array([float(big * big - 1), 12.0])}
    prod = op("*", attr("x"), attr("y"))
    rows = [{"x": x, "y": y, "f": f} for x, y, f in zip(*(attrs[k].tolist() for k in ("x", "y", "f")), strict=True)]
    for expr, want in ((op("=", prod, lit(float(big * big - 1))), [False, False]),
                       (op(">", prod, attr("f")), [True, False]),
                       (op("in", prod, values=[float(big * big - 1)]), [False, False])):
        with pytest.raises(NoVector):
            vec_predicate(expr, attrs, {}, 2)
        assert [compile_local([expr], [])(r) for r in rows] == want
    small = {"x": np.array([3, 5]), "f": np.array([3.0, 4.5])}  # exact: numpy answers
    assert vec_predicate(op("=", attr("x"), attr("f")), small, {}, 2).tolist() == [True, False]
    assert vec_predicate(op("in", attr("x"), values=[5.0, True]), small, {}, 2).tolist() == [False, True]


def test_object_columns_of_integers_with_gaps() -> None:
    n = 4
    vals, ok = column({"x": np.array([1, None, 2**53 - 1, ""], dtype=object)}, "x", {}, n)
    assert vals.dtype.kind == "i" and vals.tolist() == [1, 0, 2**53 - 1, 0]
    assert ok.tolist() == [True, False, True, False]
    for big in (2**53, -(2**53), 2**53 + 1, 2**54):
        with pytest.raises(NoVector):
            column({"x": np.array([1, None, big, 0], dtype=object)}, "x", {}, n)


def test_object_columns_of_integers_and_floats_become_floats() -> None:
    n = 4
    vals, ok = column({"x": np.array([1, 2.5, None, -(2**53 - 1)], dtype=object)}, "x", {}, n)
    assert vals.dtype.kind == "f" and vals.tolist() == [1.0, 2.5, 0.0, float(-(2**53 - 1))]
    assert ok.tolist() == [True, True, False, True]
    for big in (2**53, -(2**53)):
        with pytest.raises(NoVector):
            column({"x": np.array([1, 2.5, None, big], dtype=object)}, "x", {}, n)
    with pytest.raises(NoVector):  # text among numbers: row by row
        column({"x": np.array([1, "a", None, 2.0], dtype=object)}, "x", {}, n)


def test_vectorized_arithmetic_below_2_31_is_computed() -> None:
    n = 3
    attrs = {"x": np.array([1, 2, 2**31 - 1]), "y": np.array([3, 0, 1])}
    for o, want in (("+", [4, 2, 2**31]), ("-", [-2, 2, 2**31 - 2]), ("*", [3, 0, 2**31 - 1])):
        v, ok = vec_value(op(o, attr("x"), attr("y")), attrs, {}, n)
        assert np.asarray(v).tolist() == want and ok is True
    v, ok = vec_value(op("%", attr("x"), attr("y")), attrs, {}, n)
    assert np.asarray(ok).tolist() == [True, False, True]  # x % 0 is missing
    assert np.asarray(v)[[0, 2]].tolist() == [1, 0]
    with pytest.raises(NoVector):
        vec_value(op("+", attr("x"), lit(2**31)), attrs, {}, n)
    with pytest.raises(NoVector):
        vec_value(op("*", attr("z"), lit(2)), {"z": np.array([0, -(2**31), 5])}, {}, n)


def test_vectorized_predicate_agrees_with_the_rules() -> None:
    n = 4
    attrs = {"x": np.array([1, 2, 3, 4]), "f": np.array([0.5, np.nan, 3.0, 8.0])}
    got = vec_predicate(op("<", attr("f"), attr("x")), attrs, {}, n)
    assert got.tolist() == [True, False, False, False]  # NaN is missing: false
    got = vec_predicate(op("in", attr("x"), values=[2, 4, "a", 9.5]), attrs, {}, n)
    assert got.tolist() == [False, True, False, True]  # "a" never equals a number
    got = vec_predicate(op("=", op("+", attr("x"), lit(1)), lit(3)), attrs, {}, n)
    assert got.tolist() == [False, True, False, False]
    assert vec_predicate(op(">", attr("nowhere"), lit(0)), attrs, {}, n).tolist() == [False] * 4
