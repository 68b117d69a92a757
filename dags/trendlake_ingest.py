"""Ingest new raw event files from the landing folder into bronze (Delta).

Runs every 15 minutes; a file already ingested (same checksum) is skipped, so
a run with no new files changes nothing.
A file ingested before whose content changed is refused (listed in the
returned report and the ingest log) unless ``TRENDLAKE_REPLACE_CHANGED=1`` or
the run is triggered with ``{"replace_changed": true}``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import dag, get_current_context, task


@dag(
    dag_id="trendlake_ingest",
    schedule=timedelta(minutes=15),
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["trendlake"],
)
def trendlake_ingest():
    @task(pool="trendlake_spark")
    def ingest() -> dict:
        from trendlake.jobs.pipeline import run_ingest

        return run_ingest(context=get_current_context())

    ingest()


trendlake_ingest()
