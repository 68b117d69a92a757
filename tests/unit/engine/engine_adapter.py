"""The one place the oracle tests call the engine: rows in, result rows out.

Rows are dicts with ``type``, ``ts`` (integer seconds), ``seq`` and attributes
(the oracle's input, tests/oracle). When the engine's entry changes (an Arrow
table instead of ``Event`` lists), only :func:`run_engine` changes.
"""

from __future__ import annotations

from typing import Any

from trendlake import engine


def run_engine(plan: dict[str, Any], rows: list[dict[str, Any]], strategy: str) -> list[dict[str, Any]]:
    """``engine.evaluate`` of ``plan`` over ``rows`` with one strategy; OVERFLOW as ``"OVERFLOW"``."""
    got = engine.evaluate(plan, engine.table_from_rows(rows), strategy=strategy)
    return [{k: "OVERFLOW" if v is engine.OVERFLOW else v for k, v in row.items()} for row in got]
