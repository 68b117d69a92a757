"""The replay job on real Spark and Delta: equals `trendlake eval`, idempotent, crash-safe, refuses a wrong plan."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

import pytest
from trendlake.jobs import lake as lakelib
from trendlake.jobs.ingest import ingest
from trendlake.jobs.optimize import current_plan, optimize
from trendlake.jobs.replay import ReplayError, column_name, replay
from trendlake.schemas import load_stream_schema, workload_path

from tests.integration.sample import trip_rows, write_csv
from trendlake import engine

pytestmark = pytest.mark.spark

WORKLOAD = workload_path("sample_rides.etq")
FROM, TO = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
FROM_US, TO_US = engine.events.parse_ts(FROM), engine.events.parse_ts(TO)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory, spark) -> dict:
    root = tmp_path_factory.mktemp("replay")
    events_file = write_csv(root / "landing" / "trips.csv", trip_rows(300, seed=11))
    ingest(root / "lake", load_stream_schema("rides"), root / "landing", spark=spark)
    optimize(root / "lake", WORKLOAD, stream="rides")
    first = replay(root / "lake", WORKLOAD, FROM, TO, spark=spark)
    return {"lake": root / "lake", "events": events_file, "first": first, "root": root}


def result_rows(lake: Path, query: str, version: int | None = None) -> list[dict]:
    table = lakelib.Lake(lake).read_arrow(f"results/{query}", version=version)
    rows = []
    for row in table.to_pylist():
        row.pop("computed_at")
        row.pop("replay_run_id", None)  # differs per run by design
        rows.append(row)
    return sorted(rows, key=lambda r: (str([r[k] for k in r if k not in ("window_start",)]), r["window_start"]))


def expected_rows(events_file: Path, plan: dict) -> dict[str, list[dict]]:
    """`trendlake eval` semantics on the raw file, restricted to windows ending in (FROM, TO]."""
    rows = engine.evaluate(plan, engine.read_events(events_file))
    by_query: dict[str, list[dict]] = {q["name"]: [] for q in plan["queries"]}
    for row in rows:
        if FROM_US < row["window_end"] <= TO_US:
            by_query[row["query"]].append(row)
    return by_query


def comparable(value):
    if isinstance(value, Decimal):
        return int(value)
    return value


def test_replay_equals_eval_on_the_same_events(pipeline) -> None:
    plan = current_plan(pipeline["lake"], "sample_rides")
    want = expected_rows(pipeline["events"], plan)
    assert sum(len(v) for v in want.values()) > 20, "the sample must produce trends for the workload"
    for q in plan["queries"]:
        name = q["name"]
        got = result_rows(pipeline["lake"], name)
        assert len(got) == len(want[name]) == pipeline["first"].rows_written[name], name
        index = {
            (tuple(r[g] for g in q["group_by"]), engine.events.parse_ts(r["window_start"])): r for r in got
        }
        for w in want[name]:
            key = (tuple(w[g] for g in q["group_by"]), w["window_start"])
            assert key in index, f"{name}: missing row {key}"
            r = index[key]
            assert r["plan_id"] == plan["plan_id"]
            for agg in q["aggregates"]:
                a, b = comparable(r[column_name(agg)]), w[agg["name"]]
                if isinstance(b, float) or isinstance(a, float):
                    assert math.isclose(a, b, rel_tol=1e-9), (name, key, agg["name"], a, b)
                else:
                    assert a == b, (name, key, agg["name"], a, b)


def test_rerun_leaves_identical_rows(pipeline, spark) -> None:
    lake = lakelib.Lake(pipeline["lake"])
    before = {q: result_rows(pipeline["lake"], q) for q in pipeline["first"].rows_written}
    versions = {q: lake.version(f"results/{q}") for q in before}
    replay(pipeline["lake"], WORKLOAD, FROM, TO, spark=spark)
    for q, rows in before.items():
        assert lake.version(f"results/{q}") == versions[q] + 1, "a rerun is one new Delta version"
        assert result_rows(pipeline["lake"], q) == rows, f"{q} changed on rerun"


def test_replaying_the_next_day_keeps_the_first(pipeline, spark) -> None:
    q = "stuck_trips"
    day_one = result_rows(pipeline["lake"], q)
    replay(pipeline["lake"], WORKLOAD, TO, "2026-01-03T00:00:00Z", spark=spark)
    rows = result_rows(pipeline["lake"], q)
    ends = [engine.events.parse_ts(r["window_end"]) for r in rows]
    assert [r for r in rows if engine.events.parse_ts(r["window_end"]) <= TO_US] == day_one
    assert max(ends) > TO_US


def test_replay_killed_before_a_commit_then_rerun(pipeline, spark, monkeypatch) -> None:
    lake = lakelib.Lake(pipeline["lake"])
    tables = [f"results/{q}" for q in pipeline["first"].rows_written]
    good = {t: result_rows(pipeline["lake"], t.split("/")[1]) for t in tables}
    versions = {t: lake.version(t) for t in tables}
    calls = []

    def crash(table_path, actions):
        calls.append(table_path)
        if len(calls) == 3:
            raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(lakelib, "_before_commit", crash)
    with pytest.raises(KeyboardInterrupt):
        replay(pipeline["lake"], WORKLOAD, FROM, TO, spark=spark)
    monkeypatch.undo()
    for t in tables:  # every table is at a committed version with complete rows
        assert lake.version(t) in (versions[t], versions[t] + 1)
        assert result_rows(pipeline["lake"], t.split("/")[1]) == good[t]
    replay(pipeline["lake"], WORKLOAD, FROM, TO, spark=spark)
    for t in tables:
        assert result_rows(pipeline["lake"], t.split("/")[1]) == good[t]


def test_mismatched_plan_is_refused(pipeline, spark, tmp_path) -> None:
    changed = tmp_path / "sample_rides.etq"
    changed.write_text(WORKLOAD.read_text().replace("WITHIN 30 minutes SLIDE 5 minutes", "WITHIN 20 minutes SLIDE 5 minutes"))
    lake = lakelib.Lake(pipeline["lake"])
    version = lake.version("results/stuck_trips")
    with pytest.raises(ReplayError, match="refusing plan.*run `trendlake optimize` again"):
        replay(pipeline["lake"], changed, FROM, TO, spark=spark)
    assert lake.version("results/stuck_trips") == version


def test_results_readable_by_spark_sql_and_deltalake_time_travel(pipeline, spark) -> None:
    from deltalake import DeltaTable
    from trendlake.jobs.sql import run_sql

    fresh = spark.newSession()
    df = run_sql(fresh, pipeline["lake"], "SELECT COUNT(*) AS n, COUNT(DISTINCT plan_id) AS plans FROM results_stuck_trips")
    row = df.collect()[0]
    assert row["n"] > 0 and row["plans"] == 1
    path = str(lakelib.Lake(pipeline["lake"]).path("results/stuck_trips"))
    table = DeltaTable(path)
    current = table.to_pyarrow_table().num_rows
    assert current == row["n"]
    previous = DeltaTable(path, version=table.version() - 1).to_pyarrow_table()
    assert previous.num_rows > 0
    assert set(previous.column_names) == set(table.to_pyarrow_table().column_names)
