"""The expression conformance fixture (tests/fixtures/expr/*.jsonl) through the engine's
backends as the executor uses them.

* Python: ``compile_value`` / ``compile_local`` / ``compile_adjacent``.
* numpy: ``vector.local_mask`` over the event as an Arrow table converted by
  ``engine.columns`` (exactly the executor's matching step); where numpy cannot be
  exact the backend must refuse (``NoVector``) and the row evaluator decides,
  so the mask must equal ``holds`` either way, and the vectorized path must
  really answer most cases (a backend that always refuses would pass otherwise).
* The engine's NULL rule on the way in: ``None``, ``""`` and NaN are missing.

The Spark pushdown runs the same files in tests/integration/spark/test_pushdown_conformance.py.
Expected values in the fixtures come from docs/plan-format.md §Expressions, not
from running the code.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trendlake.engine.columns import Columns, clean, table_from_rows
from trendlake.engine.expr import compile_adjacent, compile_local, compile_value, vector
from trendlake.engine.query import compile_query

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "expr"


def load_cases() -> list[dict[str, Any]]:
    cases = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if line.strip():
                case = json.loads(line)
                case["where"] = f"{path.name}:{n}"
                cases.append(case)
    return cases


CASES = load_cases()
LOCAL = [c for c in CASES if "holds" in c and "next" not in c]
ADJACENT = [c for c in CASES if "holds" in c and "next" in c]


def same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) or math.isnan(b):  # a NaN made by arithmetic is a value
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-12) or (math.isinf(a) and a == b)
    return a == b


def local_query(expr: dict[str, Any]) -> Any:
    return compile_query({
        "name": "q", "semantics": "skip-till-any-match",
        "window": {"within_us": 60_000_000, "slide_us": 60_000_000},
        "variables": [{"name": "E", "type": "E"}],
        "local_predicates": {"E": [expr]},
        "template": {"start": ["E"], "end": ["E"], "transitions": []},
        "aggregates": [{"name": "count", "fn": "count_star"}],
        "granularity": "type",
    })


def numpy_mask(
    expr: dict[str, Any], rows: list[dict[str, Any]], all_columns: bool = True
) -> tuple[np.ndarray, bool]:
    """The executor's matching step for a one-variable query over ``rows``; and whether
    numpy answered (True) or refused and left it to the row evaluator (False).
    ``all_columns``: the table has a (null) column for every attribute the expression
    reads; otherwise only for those some row holds, as a file lacking the column."""
    wanted = sorted(vector_attributes(expr))
    table = table_from_rows([{"type": "E", "ts": i, **r} for i, r in enumerate(rows)],
                            attributes=wanted if all_columns else ())
    names = [a for a in wanted if a in table.column_names]
    cols = Columns(table)
    attrs = {a: cols.array(a) for a in names}
    cache = {a: num for a in names if (num := cols.numeric(a)) is not None}
    type_mask = np.ones(len(rows), dtype=bool)
    try:
        vector.vec_predicate(expr, attrs, dict(cache), len(rows))
        vectorized = True
    except vector.NoVector:
        vectorized = False
    mask = vector.local_mask(local_query(expr).variables["E"].local, [expr], (), type_mask, attrs, cache)
    return mask, vectorized


def vector_attributes(expr: dict[str, Any]) -> set[str]:
    from trendlake.engine.expr import attributes

    return attributes(expr)


def cleaned(attrs: dict[str, Any] | None) -> dict[str, Any] | None:
    """Attributes as the engine hands them to the Python evaluator (its NULL rule applied)."""
    return None if attrs is None else {k: clean(v) for k, v in attrs.items()}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_python_backend(case: dict[str, Any]) -> None:
    nxt = cleaned(case.get("next"))
    event = cleaned(case["event"])
    if "value" in case:
        got = compile_value(case["expr"])(event, nxt)
        assert same(got, case["value"]), f"{case['where']}: {got!r} != {case['value']!r}"
    if "holds" in case:
        if "next" in case:
            got = compile_adjacent([case["expr"]])(event, nxt)
        else:
            got = compile_local([case["expr"]], [])(event)
        assert got is case["holds"], case["where"]


@pytest.mark.parametrize("all_columns", [True, False], ids=["null-columns", "absent-columns"])
@pytest.mark.parametrize("case", LOCAL, ids=[c["id"] for c in LOCAL])
def test_numpy_backend(case: dict[str, Any], all_columns: bool) -> None:
    if not representable(case):
        pytest.skip("an integer beyond 64 bits cannot be an Arrow column, the engine's input")
    mask, _ = numpy_mask(case["expr"], [case["event"]], all_columns)
    assert bool(mask[0]) is case["holds"], case["where"]


def test_numpy_backend_on_mixed_rows() -> None:
    """Cases sharing an expression evaluated as one column (missing next to present values)."""
    by_expr: dict[str, list[dict[str, Any]]] = {}
    for case in LOCAL:
        by_expr.setdefault(json.dumps(case["expr"], sort_keys=True), []).append(case)
    for group in by_expr.values():
        group = [c for c in group if representable(c)]
        if not group:
            continue
        try:
            mask, _ = numpy_mask(group[0]["expr"], [c["event"] for c in group])
        except Exception as err:  # a column of several kinds is refused at conversion
            assert "several kinds" in str(err), err
            continue
        assert [bool(m) for m in mask] == [c["holds"] for c in group], [c["where"] for c in group]


@pytest.mark.parametrize("case", ADJACENT, ids=[c["id"] for c in ADJACENT])
def test_numpy_backend_on_adjacent_predicates(case: dict[str, Any]) -> None:
    """The shared executor's form (``engine.shared.graph``): the current events' attributes
    as columns, the next event's as scalars under ``vector.NEXT``; numpy answers or refuses."""
    mask = adjacent_mask(case)
    if mask is not None:
        assert bool(mask[0]) is case["holds"], case["where"]


def adjacent_mask(case: dict[str, Any]) -> np.ndarray | None:
    """numpy's answer for an adjacent case, or None where it refuses."""
    from trendlake.engine.columns import as_column

    env: dict[str, Any] = {a: as_column([v]) for a, v in case["event"].items()}
    for a, v in case["next"].items():
        env[vector.NEXT + a] = v
    for a in vector_attributes(case["expr"]):
        env.setdefault(vector.NEXT + a, None)  # the next event lacks it
    try:
        return vector.vec_predicate(case["expr"], env, {}, 1)
    except vector.NoVector:
        return None


def test_numpy_really_vectorizes_most_adjacent_cases() -> None:
    answered = sum(adjacent_mask(c) is not None for c in ADJACENT)
    assert answered >= len(ADJACENT) // 2, f"numpy answered {answered} of {len(ADJACENT)}"


def representable(case: dict[str, Any]) -> bool:
    return not any(isinstance(v, int) and not -2**63 <= v < 2**63 for v in case["event"].values())


def test_numpy_really_vectorizes_most_cases() -> None:
    answered = [numpy_mask(c["expr"], [c["event"]])[1] for c in LOCAL if representable(c)]
    assert sum(answered) >= len(LOCAL) // 2, f"numpy answered {sum(answered)} of {len(LOCAL)}"


@pytest.mark.parametrize(
    ("value", "holds"),
    [(None, False), ("", False), (float("nan"), False), ("x", True)],
)
def test_null_rule_on_the_way_in(value: Any, holds: bool) -> None:
    """``None``, empty text and NaN are missing: even ``s != 'y'`` is false for them."""
    expr = {"op": "!=", "args": [{"attr": "s", "var": "E"}, {"lit": "y" if isinstance(value, str) or value is None else 1.5}]}
    mask, _ = numpy_mask(expr, [{"s": value}])
    assert bool(mask[0]) is holds
