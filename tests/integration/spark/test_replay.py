"""The replay job on real Spark and Delta: equals `trendlake eval`, idempotent, crash-safe, refuses a wrong plan.

Reads the shared sample lake (ingested, planned from its statistics, replayed
day by day); tests that replay again work on a copy (``lake_copy``).
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

import pytest
from trendlake.engine.timeline import parse_ts
from trendlake.jobs import lake as lakelib
from trendlake.jobs.optimize import current_plan
from trendlake.jobs.replay import ReplayError, column_name, replay

from trendlake import engine

pytestmark = pytest.mark.spark

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
FROM_US, TO_US = parse_ts(FROM), parse_ts(TO)


def result_rows(lake: Path, query: str, version: int | None = None) -> list[dict]:
    table = lakelib.Lake(lake).read_arrow(f"results/{query}", version=version)
    rows = []
    for row in table.to_pylist():
        row.pop("computed_at")
        row.pop("replay_run_id", None)  # differs per run by design
        rows.append(row)
    return sorted(rows, key=lambda r: (str([r[k] for k in r if k not in ("window_start",)]), r["window_start"]))


def expected_rows(events_file: Path, plan: dict, start_us: int, end_us: int) -> dict[str, list[dict]]:
    """`trendlake eval` semantics on the raw file, restricted to windows ending in (start, end]."""
    rows = engine.evaluate(plan, engine.table_from_events(engine.read_events(events_file)))
    by_query: dict[str, list[dict]] = {q["name"]: [] for q in plan["queries"]}
    for row in rows:
        if start_us < row["window_end"] <= end_us:
            by_query[row["query"]].append(row)
    return by_query


def comparable(value):
    if isinstance(value, Decimal):
        return int(value)
    return value


def test_replay_equals_eval_on_the_same_events(sample_lake) -> None:
    """Every replayed day equals `trendlake eval` of the landing file, row for row."""
    plan = current_plan(sample_lake.lake, "sample_rides")
    assert plan["plan_id"] == sample_lake.plan["plan_id"]
    for (start, end), report in zip(sample_lake.days, sample_lake.replays, strict=True):
        start_us, end_us = int(start.timestamp()) * 1_000_000, int(end.timestamp()) * 1_000_000
        want = expected_rows(sample_lake.events, plan, start_us, end_us)
        assert sum(len(v) for v in want.values()) > 20, "the sample must produce trends for the workload every day"
        for q in plan["queries"]:
            name = q["name"]
            got = [r for r in result_rows(sample_lake.lake, name)
                   if start_us < parse_ts(r["window_end"]) <= end_us]
            assert len(got) == len(want[name]) == report.rows_written[name], (name, start)
            index = {
                (tuple(r[g] for g in q["group_by"]), parse_ts(r["window_start"])): r for r in got
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


def test_rerun_leaves_identical_rows(sample_lake, lake_copy, spark) -> None:
    lake = lakelib.Lake(lake_copy)
    before = {q: result_rows(lake_copy, q) for q in sample_lake.replays[0].rows_written}
    versions = {q: lake.version(f"results/{q}") for q in before}
    replay(lake_copy, sample_lake.workload, FROM, TO, spark=spark)
    for q, rows in before.items():
        assert lake.version(f"results/{q}") == versions[q] + 1, "a rerun is one new Delta version"
        assert result_rows(lake_copy, q) == rows, f"{q} changed on rerun"


def test_replaying_the_next_day_keeps_the_first(sample_lake) -> None:
    """The day-two replay of the sample lake left day one's windows as day one's replay wrote them."""
    q = "stuck_trips"
    day_one = result_rows(sample_lake.lake, q, version=sample_lake.day_one_versions[q])
    assert day_one and all(parse_ts(r["window_end"]) <= TO_US for r in day_one)
    rows = result_rows(sample_lake.lake, q)
    ends = [parse_ts(r["window_end"]) for r in rows]
    assert [r for r in rows if parse_ts(r["window_end"]) <= TO_US] == day_one
    assert max(ends) > TO_US


def test_replay_killed_before_a_commit_then_rerun(sample_lake, lake_copy, spark, monkeypatch) -> None:
    lake = lakelib.Lake(lake_copy)
    tables = [f"results/{q}" for q in sample_lake.replays[0].rows_written]
    good = {t: result_rows(lake_copy, t.split("/")[1]) for t in tables}
    versions = {t: lake.version(t) for t in tables}
    calls = []

    def crash(table_path, actions):
        calls.append(table_path)
        if len(calls) == 3:
            raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(lakelib, "_before_commit", crash)
    with pytest.raises(KeyboardInterrupt):
        replay(lake_copy, sample_lake.workload, FROM, TO, spark=spark)
    monkeypatch.undo()
    for t in tables:  # every table is at a committed version with complete rows
        assert lake.version(t) in (versions[t], versions[t] + 1)
        assert result_rows(lake_copy, t.split("/")[1]) == good[t]
    replay(lake_copy, sample_lake.workload, FROM, TO, spark=spark)
    for t in tables:
        assert result_rows(lake_copy, t.split("/")[1]) == good[t]


def test_mismatched_plan_is_refused(sample_lake, lake_copy, spark, tmp_path) -> None:
    changed = tmp_path / "sample_rides.etq"
    text = sample_lake.workload.read_text()
    assert "WITHIN 30 minutes SLIDE 5 minutes" in text
    changed.write_text(text.replace("WITHIN 30 minutes SLIDE 5 minutes", "WITHIN 20 minutes SLIDE 5 minutes"))
    lake = lakelib.Lake(lake_copy)
    version = lake.version("results/stuck_trips")
    with pytest.raises(ReplayError, match="refusing plan.*run `trendlake optimize` again"):
        replay(lake_copy, changed, FROM, TO, spark=spark)
    assert lake.version("results/stuck_trips") == version


def test_results_readable_by_spark_sql_and_deltalake_time_travel(sample_lake, spark) -> None:
    from deltalake import DeltaTable
    from trendlake.jobs.sql import run_sql

    fresh = spark.newSession()
    df = run_sql(fresh, sample_lake.lake, "SELECT COUNT(*) AS n, COUNT(DISTINCT plan_id) AS plans FROM results_stuck_trips")
    row = df.collect()[0]
    assert row["n"] > 0 and row["plans"] == 1
    path = str(lakelib.Lake(sample_lake.lake).path("results/stuck_trips"))
    table = DeltaTable(path)
    current = table.to_pyarrow_table().num_rows
    assert current == row["n"]
    previous = DeltaTable(path, version=table.version() - 1).to_pyarrow_table()
    assert previous.num_rows > 0
    assert set(previous.column_names) == set(table.to_pyarrow_table().column_names)


def test_the_sample_plan_is_made_from_the_sample_statistics(sample_lake) -> None:
    """optimize recorded the statistics run the stats job wrote over the sample's two days."""
    from trendlake.jobs.optimize import latest_statistics

    stats = latest_statistics(sample_lake.lake, "rides")
    assert stats is not None and sample_lake.stats_version == 0
    assert sample_lake.plan["statistics"] is not None
    assert stats.range_start is not None and stats.range_start.startswith("2026-01-01T00:00")
    assert stats.range_end is not None and stats.range_end.startswith("2026-01-03T00:00")
    assert sample_lake.plan["statistics"] == stats.to_dict()
