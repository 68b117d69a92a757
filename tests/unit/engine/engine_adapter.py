"""The one place the oracle tests call the engine: rows in, result rows out.

Rows are dicts with ``type``, ``ts`` (integer seconds), ``seq`` and attributes
(the oracle's input, tests/oracle). When the engine's entry changes (an Arrow
table instead of ``Event`` lists), only :func:`run_engine` changes.
"""

from __future__ import annotations

import math
from typing import Any

from trendlake import engine


def run_engine(plan: dict[str, Any], rows: list[dict[str, Any]], strategy: str) -> list[dict[str, Any]]:
    """``engine.evaluate`` of ``plan`` over ``rows`` with one strategy; OVERFLOW as ``"OVERFLOW"``."""
    got = engine.evaluate(plan, engine.table_from_rows(rows), strategy=strategy)
    return [{k: "OVERFLOW" if v is engine.OVERFLOW else v for k, v in row.items()} for row in got]


def same_rows(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> bool:
    """Equal result rows, floats to 1e-9 (shared and single-query evaluation add float sums in
    other orders), NaN equal to NaN."""
    if len(got) != len(want):
        return False
    for a, b in zip(got, want, strict=True):
        if a.keys() != b.keys():
            return False
        for key in a:
            x, y = a[key], b[key]
            if isinstance(x, float) and isinstance(y, float):
                if not (math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9) or (x != x and y != y)):
                    return False
            elif x != y:
                return False
    return True
