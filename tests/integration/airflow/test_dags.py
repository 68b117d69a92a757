"""The three DAGs, run with ``dag.test()`` against a temporary lake and Airflow on SQLite.

The DAG run covers what the DAGs add (wiring, settings from the environment,
data intervals, run conf, pools) on two queries of the sample workload; the
jobs themselves over the whole workload are tested on the shared sample lake
(``tests/integration/conftest.py``), the result suites of every sample query
below.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.integration.airflow.conftest import REPO
from tests.integration.sample import trip_rows, write_csv

DAY = datetime(2026, 1, 1, tzinfo=UTC)
DAG_QUERIES = ("stuck_trips", "driver_shifts")  # two partition keys ([driver, rider], [driver]), two group-bys


def dag_workload(folder: Path) -> Path:
    """The sample workload cut to ``DAG_QUERIES`` (same file name, so the same plan folder)."""
    from trendlake.schemas import workload_path

    blocks = workload_path("sample_rides.etq").read_text().split("\n\n")
    kept = [b for b in blocks if any(f"QUERY {q}\n" in b for q in DAG_QUERIES)]
    assert len(kept) == len(DAG_QUERIES), "the sample workload changed: update DAG_QUERIES"
    path = folder / "sample_rides.etq"
    path.write_text("\n\n".join(kept) + "\n")
    return path


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
    assert [t.task_id for t in replay.topological_sort()] == ["replay", "check_results", "drill"]
    assert replay.get_task("drill").pool == "trendlake_spark"


@pytest.mark.spark
@pytest.mark.airflow
def test_ingest_optimize_replay_dags_on_a_temporary_lake(dagbag, airflow_db, spark, tmp_path, monkeypatch) -> None:
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan

    lake_dir, landing = tmp_path / "lake", tmp_path / "landing"
    monkeypatch.setenv("TRENDLAKE_LAKE", str(lake_dir))
    monkeypatch.setenv("TRENDLAKE_LANDING", str(landing))
    monkeypatch.setenv("TRENDLAKE_STATS_DAYS", "2")
    monkeypatch.setenv("TRENDLAKE_WORKLOAD", str(dag_workload(tmp_path)))
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
    assert sorted(q["name"] for q in plan["queries"]) == sorted(DAG_QUERIES), "the DAGs read $TRENDLAKE_WORKLOAD"

    # A manual run at logical date D covers the interval that ends at D.
    run = dagbag.dags["trendlake_replay"].test(logical_date=DAY.replace(day=2))
    assert "success" in str(run.state)
    assert run.data_interval_start == DAY and run.data_interval_end == DAY.replace(day=2)
    results = lake.read_arrow("results/stuck_trips")
    assert results.num_rows > 0
    ends = results.column("window_end").to_pylist()
    assert DAY < min(ends) and max(ends) <= DAY.replace(day=2)
    first_day = sorted(map(str, results.to_pylist()))
    assert not lake.exists("trends/stuck_trips"), "the drill task is off by default"

    # dag_run.conf {"from", "to"} replays an explicit range instead of the data interval; with
    # TRENDLAKE_DRILL_TOP the drill task stores the trends of each query's top windows of it.
    monkeypatch.setenv("TRENDLAKE_DRILL_TOP", "2")
    monkeypatch.setenv("TRENDLAKE_DRILL_LIMIT", "5")
    run = dagbag.dags["trendlake_replay"].test(
        logical_date=DAY.replace(day=5), run_conf={"from": "2026-01-02T00:00:00Z", "to": "2026-01-03T00:00:00Z"}
    )
    assert "success" in str(run.state)
    results = lake.read_arrow("results/stuck_trips")
    ends = results.column("window_end").to_pylist()
    assert max(ends) > DAY.replace(day=2) and max(ends) <= DAY.replace(day=3)
    kept = sorted(str(r) for r in results.to_pylist() if r["window_end"] <= DAY.replace(day=2))
    assert kept == first_day, "replaying the next day leaves the first day's windows alone"
    for query, group in zip(DAG_QUERIES, ("district", "driver"), strict=True):
        stored = lake.read_arrow(f"trends/{query}").to_pylist()
        windows = {(r[group], r["window_start"], r["plan_id"]) for r in stored}
        rows = {(r[group], r["window_start"], r["plan_id"]): r["count"]
                for r in lake.read_arrow(f"results/{query}").to_pylist()
                if DAY.replace(day=2) < r["window_end"] <= DAY.replace(day=3)}
        top = sorted(rows.values(), reverse=True)[:2]
        assert len(windows) == 2 and sorted((rows[w] for w in windows), reverse=True) == top, query
        assert all(1 <= r["trend"] <= 5 for r in stored), "TRENDLAKE_DRILL_LIMIT caps the trends per window"


def _first_row_changed(table, column, value):
    """``table`` with its first row's ``column`` set to ``value`` (None for NULL)."""
    import pyarrow as pa

    values = table.column(column).to_pylist()
    values[0] = value
    field = table.schema.field(column)
    return table.set_column(table.schema.get_field_index(column), field, pa.array(values, field.type))


def _shifted_start(table):
    from datetime import timedelta

    return _first_row_changed(table, "window_start", table.column("window_start")[0].as_py() + timedelta(minutes=1))


# one corruption of the first row of results/stuck_trips in the checked day, and what it breaks
CORRUPTIONS = {
    "duplicate window": (None, "expect_compound_columns_to_be_unique"),
    "NULL group key": (lambda t: _first_row_changed(t, "district", None),
                       r"expect_column_values_to_not_be_null\(district\)"),
    "window shorter than WITHIN": (_shifted_start, r"expect_column_values_to_be_in_set\(window_seconds\)"),
    "another plan's row": (lambda t: _first_row_changed(t, "plan_id", "elsewhere"),
                           r"expect_column_values_to_be_in_set\(plan_id\)"),
    "count of 0": (lambda t: _first_row_changed(t, "count", 0), r"expect_column_values_to_be_between\(count\)"),
    "NULL count not listed as overflowed": (lambda t: _first_row_changed(t, "count", None),
                                            r"expect_column_values_to_not_be_null\(_count_or_overflow\)"),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_result_checks_pass_on_replayed_results_and_catch_each_corruption(sample_lake, lake_copy, corruption) -> None:
    """The GE result suite (pandas engine, no Spark) passes on replayed results and fails, naming the
    table and the expectation, when one row breaks it; a NULL count listed in ``overflowed`` passes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from trendlake.jobs.checks import ResultChecksFailed, check_result_tables
    from trendlake.jobs.lake import OVERWRITE, Lake

    workload, plan = sample_lake.workload, sample_lake.plan
    start, end = sample_lake.days[0]
    summary = check_result_tables(lake_copy, workload, start, end)
    assert set(summary) == {q["name"] for q in plan["queries"]}
    lake = Lake(lake_copy)
    table = lake.read_arrow("results/stuck_trips")
    ends = table.column("window_end")
    in_day = pc.and_(pc.greater(ends, pa.scalar(start, ends.type)), pc.less_equal(ends, pa.scalar(end, ends.type)))
    assert summary["stuck_trips"]["rows"] == pc.sum(in_day).as_py() > 0
    day, others = table.filter(in_day), table.filter(pc.invert(in_day))

    change, broken = CORRUPTIONS[corruption]
    if change is None:
        lake.write("results/stuck_trips", day.slice(0, 1))
    else:
        lake.write("results/stuck_trips", pa.concat_tables([change(day), others]), OVERWRITE)
    # only the corrupted table is validated again (the others passed above and are unchanged)
    only = {**plan, "queries": [q for q in plan["queries"] if q["name"] == "stuck_trips"]}
    with pytest.raises(ResultChecksFailed, match=f"results_stuck_trips.*{broken}"):
        check_result_tables(lake_copy, workload, start, end, plan=only)

    if corruption == "NULL count not listed as overflowed":  # ... which passes once listed
        listed = _first_row_changed(change(day), "overflowed", ["count"])
        lake.write("results/stuck_trips", pa.concat_tables([listed, others]), OVERWRITE)
        assert check_result_tables(lake_copy, workload, start, end, plan=only)["stuck_trips"]["success"]
