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


def window_results(
    spec: dict[str, Any], types: Any, ts: Any, attrs: dict[str, Any] | None = None, strategy: str = "cogra"
) -> dict[int, Any]:
    """Per window index, the ``WindowResult`` of one ungrouped hand-written query (``spec``,
    ``handplans.query_spec``) over one partition given as columns (``types``: type names,
    ``ts``: µs integers, in any order; ``attrs``: name -> values, None or NaN missing),
    through ``engine.evaluate_partials``."""
    import numpy as np
    import pyarrow as pa

    from tests.unit.engine.handplans import plan_of

    columns = {"type": pa.array([str(t) for t in types]), "ts": pa.array(np.asarray(ts, dtype=np.int64))}
    for name, values in (attrs or {}).items():
        columns[name] = pa.array(list(values) if not isinstance(values, np.ndarray) else values)
    partials = engine.evaluate_partials(plan_of(spec), pa.table(columns), strategy=strategy)
    return {k: r for (_, k), r in partials[spec["name"]].items()}


def assert_planners_agree(text: str, rows: list[dict[str, Any]], planners: tuple[str, ...],
                          statistics: dict[str, Any], label: Any) -> None:
    """Each planner's plan of ``text`` under ``statistics`` is valid and gives, over ``rows``,
    the rows of each query alone; ``label(planner, plan)`` names the hypothesis event."""
    from hypothesis import event
    from trendlake.engine.plan import load_plan
    from trendlake.optimizer import build_plan, parse_workload, workload_hash

    table = engine.table_from_rows(rows)
    want = engine.evaluate(build_plan(parse_workload(text), planner="none"), table)
    for planner in planners:
        planned = build_plan(parse_workload(text), planner=planner, statistics=statistics)
        load_plan(planned, workload_hash(text))
        event(label(planner, planned))
        assert same_rows(engine.evaluate(planned, table), want), (planner, text, rows)
