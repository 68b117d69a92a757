"""The three DAGs, run with ``dag.test()`` against a temporary lake and Airflow on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.integration.airflow.conftest import REPO
from tests.integration.sample import trip_rows, write_csv

DAY = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def dagbag():
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    return bag


def test_dags_load_with_their_schedules(dagbag) -> None:
    from airflow.timetables.interval import CronDataIntervalTimetable

    assert {"trendlake_ingest", "trendlake_optimize", "trendlake_replay"} <= set(dagbag.dags)
    replay = dagbag.dags["trendlake_replay"]
    assert isinstance(replay.timetable, CronDataIntervalTimetable)
    assert replay.catchup is False
    for dag_id in ("trendlake_ingest", "trendlake_replay"):
        spark_tasks = [t for t in dagbag.dags[dag_id].tasks if t.pool == "trendlake_spark"]
        assert spark_tasks, f"{dag_id} must serialise its Spark tasks through the pool"
    assert [t.task_id for t in dagbag.dags["trendlake_optimize"].topological_sort()] == [
        "stats", "optimize", "validate_plan"
    ]


@pytest.mark.spark
@pytest.mark.airflow
def test_ingest_optimize_replay_dags_on_a_temporary_lake(dagbag, airflow_db, spark, tmp_path, monkeypatch) -> None:
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan

    lake_dir, landing = tmp_path / "lake", tmp_path / "landing"
    monkeypatch.setenv("TRENDLAKE_LAKE", str(lake_dir))
    monkeypatch.setenv("TRENDLAKE_LANDING", str(landing))
    monkeypatch.setenv("TRENDLAKE_STATS_DAYS", "2")
    rows = trip_rows(120, seed=3)
    write_csv(landing / "trips.csv", rows)
    lake = Lake(lake_dir)

    run = dagbag.dags["trendlake_ingest"].test(logical_date=DAY)
    assert "success" in str(run.state)
    bronze_version = lake.version("bronze/rides")
    assert lake.read_arrow("bronze/rides").num_rows == len(rows)
    run = dagbag.dags["trendlake_ingest"].test(logical_date=DAY.replace(minute=15))
    assert "success" in str(run.state)
    assert lake.version("bronze/rides") == bronze_version, "a second ingest of the same file changes nothing"

    run = dagbag.dags["trendlake_optimize"].test(logical_date=DAY.replace(day=3))
    assert "success" in str(run.state)
    plan = current_plan(lake_dir, "sample_rides")
    assert plan["statistics"] is not None, "the plan records the statistics it was made from"

    # A manual run at logical date D covers the interval that ends at D.
    run = dagbag.dags["trendlake_replay"].test(logical_date=DAY.replace(day=2))
    assert "success" in str(run.state)
    assert run.data_interval_start == DAY and run.data_interval_end == DAY.replace(day=2)
    results = lake.read_arrow("results/stuck_trips")
    assert results.num_rows > 0
    ends = results.column("window_end").to_pylist()
    assert DAY < min(ends) and max(ends) <= DAY.replace(day=2)
    first_day = sorted(map(str, results.to_pylist()))

    # dag_run.conf {"from", "to"} replays an explicit range instead of the data interval.
    run = dagbag.dags["trendlake_replay"].test(
        logical_date=DAY.replace(day=5), run_conf={"from": "2026-01-02T00:00:00Z", "to": "2026-01-03T00:00:00Z"}
    )
    assert "success" in str(run.state)
    results = lake.read_arrow("results/stuck_trips")
    ends = results.column("window_end").to_pylist()
    assert max(ends) > DAY.replace(day=2) and max(ends) <= DAY.replace(day=3)
    kept = sorted(str(r) for r in results.to_pylist() if r["window_end"] <= DAY.replace(day=2))
    assert kept == first_day, "replaying the next day leaves the first day's windows alone"


@pytest.mark.spark
def test_result_checks_catch_duplicate_windows(spark, tmp_path) -> None:
    """The GE result suite fails when a (group, window) appears twice."""
    from trendlake.jobs.checks import ResultChecksFailed, check_result_tables
    from trendlake.jobs.ingest import ingest
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan, optimize
    from trendlake.jobs.replay import replay
    from trendlake.schemas import load_stream_schema, workload_path

    workload = workload_path("sample_rides.etq")
    write_csv(tmp_path / "landing" / "trips.csv", trip_rows(60, seed=5, hours=24))
    ingest(tmp_path / "lake", load_stream_schema("rides"), tmp_path / "landing", spark=spark)
    optimize(tmp_path / "lake", workload, stream="rides")
    replay(tmp_path / "lake", workload, DAY, DAY.replace(day=2), spark=spark)
    summary = check_result_tables(tmp_path / "lake", workload, DAY, DAY.replace(day=2), spark=spark)
    assert set(summary) == {q["name"] for q in current_plan(tmp_path / "lake", "sample_rides")["queries"]}

    lake = Lake(tmp_path / "lake")
    table = lake.read_arrow("results/stuck_trips")
    assert table.num_rows > 0
    lake.write_arrow("results/stuck_trips", table.slice(0, 1))
    with pytest.raises(ResultChecksFailed, match="results_stuck_trips.*expect_compound_columns_to_be_unique"):
        check_result_tables(tmp_path / "lake", workload, DAY, DAY.replace(day=2), spark=spark)
