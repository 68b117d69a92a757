"""Replay stages every result table before its first commit and records each run (real Spark and Delta).

A failure while staging writes nothing; a failure between two commits leaves
the earlier tables at the new version and the later ones at the old, and the
replay log says exactly which tables the run committed (``failed``, no
``complete``); every written row carries its run's ``replay_run_id``. A rerun
completes and leaves the same rows as a clean run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trendlake.jobs import lake as lakelib
from trendlake.jobs import replay as replay_mod
from trendlake.jobs.ingest import ingest
from trendlake.jobs.optimize import optimize
from trendlake.jobs.replay import replay
from trendlake.schemas import load_stream_schema, workload_path

from tests.integration.sample import trip_rows, write_csv

pytestmark = pytest.mark.spark

WORKLOAD = workload_path("sample_rides.etq")
FROM, TO = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
LOG = "replay_log/sample_rides"


@pytest.fixture(scope="module")
def setup(tmp_path_factory, spark) -> dict:
    root = tmp_path_factory.mktemp("atomic")
    write_csv(root / "landing" / "trips.csv", trip_rows(300, seed=5))
    ingest(root / "lake", load_stream_schema("rides"), root / "landing", spark=spark)
    optimize(root / "lake", WORKLOAD, stream="rides")
    first = replay(root / "lake", WORKLOAD, FROM, TO, spark=spark)
    tables = [f"results/{q}" for q in first.rows_written]
    return {"lake": root / "lake", "first": first, "tables": tables}


def rows_of(lake: Path, table: str) -> list[dict]:
    out = []
    for row in lakelib.Lake(lake).read_arrow(table).to_pylist():
        row.pop("computed_at")
        out.append(row)
    return sorted(out, key=repr)


def run_ids(lake: Path, table: str) -> set[str]:
    return {r["replay_run_id"] for r in rows_of(lake, table)}


def log_rows(lake: Path, run_id: str | None = None) -> list[dict]:
    rows = lakelib.Lake(lake).read_arrow(LOG).to_pylist()
    return sorted((r for r in rows if run_id is None or r["run_id"] == run_id), key=lambda r: r["logged_at"])


def without_run(rows: list[dict]) -> list[dict]:
    return sorted(({k: v for k, v in r.items() if k != "replay_run_id"} for r in rows), key=repr)


def test_a_clean_run_is_logged_and_stamps_every_row(setup) -> None:
    lake, first = setup["lake"], setup["first"]
    assert len(setup["tables"]) >= 3 and sum(first.rows_written.values()) > 0
    for t in setup["tables"]:
        assert run_ids(lake, t) <= {first.run_id}
    started, complete = log_rows(lake, first.run_id)
    assert started["status"] == "started" and started["tables"] == setup["tables"]
    assert complete["status"] == "complete" and complete["tables"] == setup["tables"]
    lk = lakelib.Lake(lake)
    assert complete["versions"] == [lk.version(t) for t in setup["tables"]]
    assert complete["rows"] == [first.rows_written[t.split("/")[1]] for t in setup["tables"]]
    assert complete["plan_id"] == first.plan_id and complete["error"] is None


def test_failure_while_staging_writes_nothing(setup, spark, monkeypatch) -> None:
    lake = setup["lake"]
    lk = lakelib.Lake(lake)
    versions = {t: lk.version(t) for t in setup["tables"]}
    log_version = lk.version(LOG)
    real = replay_mod.result_table
    calls = []

    def fail_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("cannot build the second table")
        return real(*args, **kwargs)

    monkeypatch.setattr(replay_mod, "result_table", fail_second)
    with pytest.raises(RuntimeError, match="second table"):
        replay(lake, WORKLOAD, FROM, TO, spark=spark)
    monkeypatch.undo()
    assert {t: lk.version(t) for t in setup["tables"]} == versions
    assert lk.version(LOG) == log_version


def test_failure_between_commits_is_visible_and_a_rerun_completes(setup, spark, monkeypatch) -> None:
    lake = setup["lake"]
    lk = lakelib.Lake(lake)
    tables = setup["tables"]
    before = {t: rows_of(lake, t) for t in tables}
    versions = {t: lk.version(t) for t in tables}
    old_runs = {t: run_ids(lake, t) for t in tables}
    real = lakelib.Lake.write
    calls = []

    def fail_second_commit(self, table, data, mode=lakelib.APPEND, **kwargs):
        if isinstance(mode, lakelib.ReplaceWhere):  # a result table's commit (the replay log appends)
            calls.append(table)
            if len(calls) == 2:
                raise OSError(f"disk gone while committing {table}")
        return real(self, table, data, mode, **kwargs)

    monkeypatch.setattr(lakelib.Lake, "write", fail_second_commit)
    with pytest.raises(OSError, match="disk gone"):
        replay(lake, WORKLOAD, FROM, TO, spark=spark)
    monkeypatch.undo()

    # the state afterwards: the first table is at the new version, written by the failed run ...
    first_table = tables[0]
    assert lk.version(first_table) == versions[first_table] + 1
    (failed_run,) = run_ids(lake, first_table) - old_runs[first_table]
    assert without_run(rows_of(lake, first_table)) == without_run(before[first_table])
    # ... every other table is untouched
    for t in tables[1:]:
        assert lk.version(t) == versions[t]
        assert rows_of(lake, t) == before[t]
    # ... and the log says so: started with every table, failed with only the first, never complete
    entries = log_rows(lake, failed_run)
    assert [e["status"] for e in entries] == ["started", "failed"]
    assert entries[0]["tables"] == tables
    assert entries[1]["tables"] == [first_table]
    assert entries[1]["versions"] == [versions[first_table] + 1]
    assert "disk gone" in entries[1]["error"]

    rerun = replay(lake, WORKLOAD, FROM, TO, spark=spark)
    assert [e["status"] for e in log_rows(lake, rerun.run_id)] == ["started", "complete"]
    for t in tables:
        assert run_ids(lake, t) <= {rerun.run_id}
        assert without_run(rows_of(lake, t)) == without_run(before[t])
