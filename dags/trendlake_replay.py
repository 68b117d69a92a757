"""Replay one data interval of bronze through the current plan, then check the results.

One run per day with a real data interval (CronDataIntervalTimetable): the
run for [D, D+1) replaces the windows ending in (D, D+1] of every result
table. Catch-up is off; fill history with `airflow backfill create`.
A run triggered with ``{"from": ISO, "to": ISO}`` in its conf replays that
interval instead (manual runs and backfills pick different intervals for the
same date; the conf makes the interval explicit).

The optional ``drill`` task (off by default: skipped) constructs the trends of the
top ``TRENDLAKE_DRILL_TOP`` windows of each query in the interval into
``trends.<query>``; ``{"drill_top": K}`` in a run's conf sets K for that run.
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

    @task(pool="trendlake_spark")
    def drill() -> dict:
        from airflow.sdk.exceptions import AirflowSkipException
        from trendlake.jobs.pipeline import drill_top, replay_interval, run_drill

        context = get_current_context()
        top = drill_top(context)
        if not top:
            raise AirflowSkipException("drill-down is off (TRENDLAKE_DRILL_TOP=0, or drill_top 0 in the run conf)")
        return run_drill(*replay_interval(context), top)

    replay() >> check_results() >> drill()


trendlake_replay()
