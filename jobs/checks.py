"""Great Expectations checks on the result tables a replay just wrote.

After ``replay`` replaced the windows ending in ``(start, end]``, the replay
DAG runs ``check_result_tables``: for every query of the current plan it reads
those rows of ``results/<query>`` from the current Delta snapshot (delta-rs;
no Spark session) and validates them with GE's pandas engine, against a suite
derived from the plan:

* window bounds, plan id and group-by columns are never null;
* every row's window is exactly the query's ``WITHIN`` long;
* every row was written by the current plan;
* a (group, window) appears once (no duplicates after reruns or backfills);
* counts (``COUNT(*)``, ``COUNT(E)``) are at least 1: a row exists only for
  a window with a trend, and every trend contains every positive variable;
  a null count is allowed only where ``overflowed`` names the column.

A failed expectation raises ``ResultChecksFailed`` naming the table and each
failed expectation, which fails the Airflow task.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import JobError
from trendlake.jobs.replay import column_name

log = logging.getLogger("trendlake.checks")


class ResultChecksFailed(JobError):
    """Rows of a result table broke the plan's expectations."""


def result_suite(query: dict[str, Any], plan_id: str) -> dict[str, Any]:
    """The GE 1.x suite (plain data) for the rows of one query's result table."""

    def exp(kind: str, **kwargs: Any) -> dict[str, Any]:
        return {"type": kind, "kwargs": kwargs, "meta": {}}

    group = list(query["group_by"])
    expectations = [
        exp("expect_column_values_to_not_be_null", column=c)
        for c in (*group, "window_start", "window_end", "plan_id")
    ]
    expectations.append(
        exp("expect_column_values_to_be_in_set", column="window_seconds", value_set=[query["window"]["within_us"] / 1_000_000])
    )
    expectations.append(exp("expect_column_values_to_be_in_set", column="plan_id", value_set=[plan_id]))
    if group:
        expectations.append(exp("expect_compound_columns_to_be_unique", column_list=[*group, "window_start"]))
    else:
        expectations.append(exp("expect_column_values_to_be_unique", column="window_start"))
    for agg in query["aggregates"]:
        if agg["fn"] in ("count_star", "count"):
            col = column_name(agg)
            expectations.append(exp("expect_column_values_to_be_between", column=col, min_value=1))
            expectations.append(exp("expect_column_values_to_not_be_null", column=f"_{col}_or_overflow"))
    return {"name": f"results_{query['name']}", "expectations": expectations, "meta": {"plan_id": plan_id}}


def _checked_frame(rows: Any, query: dict[str, Any]) -> Any:
    """The suite's columns of the result rows (an Arrow table) as a pandas DataFrame, with the
    derived columns the suite refers to: ``window_seconds`` (exact: the difference of the
    integer microseconds) and, per count, ``_<count>_or_overflow`` (1 where the count is
    not NULL or ``overflowed`` names it, else NULL). Counts become floats: the suite only
    asks whether they are at least 1, and a decimal(38,0) count has no pandas integer type.
    The other columns are converted as the bronze suite's are (``quality.arrow_to_pandas``)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from trendlake.jobs.quality import arrow_to_pandas

    def micros(name: str) -> Any:
        return pc.cast(rows.column(name), pa.int64()).to_numpy(zero_copy_only=False)

    data = arrow_to_pandas(rows.select(list(dict.fromkeys([*query["group_by"], "window_start", "window_end", "plan_id"]))))
    data["window_seconds"] = (micros("window_end") - micros("window_start")) / 1_000_000
    overflowed = rows.column("overflowed").combine_chunks() if rows.num_rows else None
    for agg in query["aggregates"]:
        if agg["fn"] not in ("count_star", "count"):
            continue
        name = column_name(agg)
        count = rows.column(name)
        data[name] = pc.cast(count, pa.float64(), safe=False).to_pandas()
        listed = np.zeros(rows.num_rows, dtype=bool)
        if overflowed is not None:
            named = pc.fill_null(pc.equal(pc.list_flatten(overflowed), name), False).to_numpy(zero_copy_only=False)
            listed[pc.list_parent_indices(overflowed).to_numpy()[named]] = True
        present = pc.is_valid(count).to_numpy(zero_copy_only=False)
        data[f"_{name}_or_overflow"] = np.where(present | listed, 1.0, np.nan)
    return data


def run_suite(df: Any, suite: dict[str, Any]) -> dict[str, Any]:
    """Validate one result table's rows with Great Expectations; failures raise."""
    from trendlake.jobs.quality import run_suite as run_expectations

    summary, failed = run_expectations(df, suite)
    if failed:
        raise ResultChecksFailed(f"{suite['name']}: " + "; ".join(failed))
    return summary


def check_result_tables(
    lake_root: str | Path,
    workload_path: str | Path,
    start: Any,
    end: Any,
    *,
    plan: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Validate every result table's rows for the windows ending in ``(start, end]``.

    The rows are read with delta-rs (the day partitions of those windows only) and
    validated by Great Expectations' pandas engine: replay builds every result row on the
    driver, so the rows of an interval fit there, and the check needs no Spark session.
    """
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan, workload_name
    from trendlake.jobs.times import micros, utc

    start_us, end_us = micros(start), micros(end)
    lo, hi = utc(start_us), utc(end_us)
    in_interval = [
        ("window_date", ">=", lo.date()), ("window_date", "<=", utc(end_us - 1).date()),
        ("window_end", ">", lo), ("window_end", "<=", hi),
    ]
    plan = plan if plan is not None else current_plan(lake_root, workload_name(workload_path))
    lake = Lake(lake_root)
    summary: dict[str, Any] = {}
    failures = []
    for query in plan["queries"]:
        table = f"results/{query['name']}"
        rows = lake.read_arrow(table, filters=in_interval)
        if rows is None:
            failures.append(f"{table}: missing (replay has not written it)")
            continue
        try:
            outcome = run_suite(_checked_frame(rows, query), result_suite(query, plan["plan_id"]))
        except ResultChecksFailed as err:
            failures.append(str(err))
            continue
        outcome["rows"] = rows.num_rows
        summary[query["name"]] = outcome
    if failures:
        raise ResultChecksFailed("result checks failed: " + " | ".join(failures))
    log.info("result checks passed for %d tables", len(summary))
    return summary
