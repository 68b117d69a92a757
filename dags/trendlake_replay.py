"""Replay one data interval of bronze through the current plan, then check the results.

One run per day with a real data interval (CronDataIntervalTimetable): the
run for [D, D+1) replaces the windows ending in (D, D+1] of every result
table. Catch-up is off; fill history with `airflow backfill create`.
"""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import dag, get_current_context, task
from airflow.timetables.interval import CronDataIntervalTimetable


@dag(
    dag_id="trendlake_replay",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    tags=["trendlake"],
)
def trendlake_replay():
    @task(pool="trendlake_spark")
    def replay() -> dict:
        from jobs.pipeline import run_replay

        context = get_current_context()
        return run_replay(context["data_interval_start"], context["data_interval_end"])

    @task(pool="trendlake_spark")
    def check_results() -> dict:
        from jobs.pipeline import check_results

        context = get_current_context()
        return check_results(context["data_interval_start"], context["data_interval_end"])

    replay() >> check_results()


trendlake_replay()
