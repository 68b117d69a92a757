"""The one place the oracle tests call the engine: rows in, result rows out.

Rows are dicts with ``type``, ``ts`` (integer seconds), ``seq`` and attributes
(the oracle's input, tests/oracle). When the engine's entry changes (an Arrow
table instead of ``Event`` lists), only :func:`run_engine` changes.
"""

from __future__ import annotations

from typing import Any

from trendlake.engine.results import is_equal

from trendlake import engine


def run_engine(plan: dict[str, Any], rows: list[dict[str, Any]], strategy: str) -> list[dict[str, Any]]:
    """``engine.evaluate`` of ``plan`` over ``rows`` with one strategy; OVERFLOW as ``"OVERFLOW"``."""
    got = engine.evaluate(plan, engine.table_from_rows(rows), strategy=strategy)
    return [{k: "OVERFLOW" if v is engine.OVERFLOW else v for k, v in row.items()} for row in got]


def same_rows(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> bool:
    """Equal result rows (``engine.results.is_equal``: floats to 1e-9, since shared and
    single-query evaluation add float sums in other orders), NaN equal to NaN."""
    return len(got) == len(want) and all(
        a.keys() == b.keys() and all(is_equal(a[k], b[k]) or (a[k] != a[k] and b[k] != b[k]) for k in a)
        for a, b in zip(got, want, strict=True)
    )
