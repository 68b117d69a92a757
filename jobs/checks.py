"""Great Expectations checks on the result tables a replay just wrote.

After ``replay`` replaced the windows ending in ``(start, end]``, the replay
DAG runs ``check_result_tables``: for every query of the current plan it reads
those rows of ``results/<query>`` from the current Delta snapshot and
validates them with a suite derived from the plan:

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


def _checked_frame(df: Any, query: dict[str, Any]) -> Any:
    """The result rows with the derived columns the suite refers to."""
    from pyspark.sql import functions as F

    df = df.withColumn(
        "window_seconds",
        (F.col("window_end").cast("double") - F.col("window_start").cast("double")),
    )
    for agg in query["aggregates"]:
        if agg["fn"] in ("count_star", "count"):
            name = column_name(agg)
            df = df.withColumn(
                f"_{name}_or_overflow",
                F.when(F.col(f"`{name}`").isNotNull(), F.lit(1))
                .when(F.array_contains(F.col("overflowed"), name), F.lit(1)),
            )
    return df


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
    spark: Any = None,
    plan: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Validate every result table's rows for the windows ending in ``(start, end]``."""
    from pyspark.sql import functions as F
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan, workload_name
    from trendlake.jobs.replay import _dt, parse_time
    from trendlake.jobs.spark import get_spark

    start_us, end_us = parse_time(start), parse_time(end)
    plan = plan if plan is not None else current_plan(lake_root, workload_name(workload_path))
    spark = spark or get_spark()
    lake = Lake(lake_root)
    summary: dict[str, Any] = {}
    failures = []
    for query in plan["queries"]:
        table = f"results/{query['name']}"
        df = lake.read_spark(spark, table)
        if df is None:
            failures.append(f"{table}: missing (replay has not written it)")
            continue
        rows = df.where((F.col("window_end") > F.lit(_dt(start_us))) & (F.col("window_end") <= F.lit(_dt(end_us))))
        checked = _checked_frame(rows, query)
        try:
            outcome = run_suite(checked, result_suite(query, plan["plan_id"]))
        except ResultChecksFailed as err:
            failures.append(str(err))
            continue
        outcome["rows"] = rows.count()
        summary[query["name"]] = outcome
    if failures:
        raise ResultChecksFailed("result checks failed: " + " | ".join(failures))
    log.info("result checks passed for %d tables", len(summary))
    return summary
