"""Nightly: statistics over the trailing days of bronze -> plan the workload -> validate the plan."""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import dag, get_current_context, task


@dag(
    dag_id="trendlake_optimize",
    schedule="0 2 * * *",
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["trendlake"],
)
def trendlake_optimize():
    @task(pool="trendlake_spark")
    def stats() -> dict:
        from trendlake.jobs.pipeline import run_stats

        context = get_current_context()
        return run_stats(context["data_interval_end"])

    @task
    def optimize() -> dict:
        from trendlake.jobs.pipeline import run_optimize

        return run_optimize()

    @task
    def validate_plan() -> str:
        from trendlake.jobs.pipeline import validate_current_plan

        return validate_current_plan()

    stats() >> optimize() >> validate_plan()


trendlake_optimize()
