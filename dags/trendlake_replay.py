"""Replay one data interval of bronze through the current plan, then check the results.

One run per day with a real data interval (CronDataIntervalTimetable): the
run for [D, D+1) replaces the windows ending in (D, D+1] of every result
table. Catch-up is off; fill history with `airflow backfill create`.
A run triggered with ``{"from": ISO, "to": ISO}`` in its conf replays that
interval instead (manual runs and backfills pick different intervals for the
same date; the conf makes the interval explicit).
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import dag, get_current_context, task
from airflow.timetables.interval import CronDataIntervalTimetable


@dag(
    dag_id="trendlake_replay",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["trendlake"],
)
def trendlake_replay():
    @task(pool="trendlake_spark")
    def replay() -> dict:
        from trendlake.jobs.pipeline import replay_interval, run_replay

        return run_replay(*replay_interval(get_current_context()))

    @task  # reads the result rows with delta-rs and checks them with GE's pandas engine: no Spark
    def check_results() -> dict:
        from trendlake.jobs.pipeline import check_results, replay_interval

        return check_results(*replay_interval(get_current_context()))

    replay() >> check_results()


trendlake_replay()
