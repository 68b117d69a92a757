"""Ingest at the edges: changed files, links and odd entries, names that would escape the lake,
one stream identity across the commands, and files Spark cannot read. (That a command's
summary is its last line and Spark is quiet is checked on a real process in
test_exit_codes.py.)"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from trendlake.engine.plan import content_hash
from trendlake.jobs import lake as lakelib
from trendlake.jobs.cli import main
from trendlake.jobs.errors import JobError
from trendlake.jobs.ingest import ALREADY_INGESTED, IngestError, ingest
from trendlake.jobs.ingest.landing import LINE_LIMIT
from trendlake.jobs.ingest.read import RAW_KEPT
from trendlake.jobs.optimize import current_plan
from trendlake.jobs.replay import replay
from trendlake.schemas import load_stream_schema

from tests.integration.sample import trip_rows, write_csv
from tests.integration.spark.conftest import CSV_HEADER, CSV_ROWS, expected_reasons, write_landing

pytestmark = pytest.mark.spark

TABLES = ("bronze/rides", "quarantine/rides", "ingest_log/rides")
NEW_ROW = "Request,2026-01-01T09:00:00Z,5,15,south,,,10.0,1"


def per_file(lake: lakelib.Lake, table: str) -> Counter:
    return Counter(r["source_file"] for r in lake.read_arrow(table, columns=["source_file"]).to_pylist())


def log_rows(lake: lakelib.Lake) -> list[dict]:
    return lake.read_arrow("ingest_log/rides").to_pylist()


def test_a_changed_file_is_refused_then_replaced_on_request(tmp_path, spark, rides, capsys) -> None:
    landing = write_landing(tmp_path / "landing")
    lake = lakelib.Lake(tmp_path / "lake")
    ingest(lake.root, rides, landing, spark=spark)
    want = expected_reasons()
    good_a = sum(1 for (f, _), r in want.items() if f == "a_trips.csv" and r is None)
    bad_a = sum(1 for (f, _), r in want.items() if f == "a_trips.csv" and r is not None)
    assert (per_file(lake, "bronze/rides")["a_trips.csv"], per_file(lake, "quarantine/rides")["a_trips.csv"]) == (
        good_a, bad_a)

    # the producer appends a row to a file already ingested, and drops a new file
    with open(landing / "a_trips.csv", "a") as fh:
        fh.write(NEW_ROW + "\n")
    (landing / "d_more.jsonl").write_text(json.dumps(
        {"type": "Request", "ts": "2026-01-04T10:00:00Z", "driver": 7, "rider": 8, "district": "north"}) + "\n")
    report = ingest(lake.root, rides, landing, spark=spark)
    assert list(report.files_refused) == ["a_trips.csv"]
    reason = report.files_refused["a_trips.csv"]
    assert reason.startswith("content changed since it was ingested") and "--replace-changed" in reason
    assert report.files_ingested == ["d_more.jsonl"], "the run's other files go through"
    bronze = per_file(lake, "bronze/rides")
    assert bronze["a_trips.csv"] == good_a, "no row of the changed file duplicated"
    assert bronze["d_more.jsonl"] == 1
    refused = [r for r in log_rows(lake) if r["status"] == "refused"]
    assert [(r["file"], r["message"]) for r in refused] == [("a_trips.csv", reason)]

    # a rerun refuses it again (exit 1, listed last-but-one before the summary) and changes no table
    versions = {t: lake.version(t) for t in TABLES}
    rc = main(["ingest", "--lake", str(lake.root), "--landing", str(landing), "--stream", "rides"])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 1
    assert out[-2] == f"refused a_trips.csv: {reason}"
    assert out[-1].startswith("rides: 0 files ingested, 3 skipped, 1 refused; 0 rows read")
    assert {t: lake.version(t) for t in TABLES} == versions, "a refusal is logged once"

    # asked to, the new content replaces the file's earlier rows: one transaction per table
    rc = main(["ingest", "--lake", str(lake.root), "--landing", str(landing), "--stream", "rides",
               "--replace-changed"])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 0, out
    assert out[-1].startswith(f"rides: 1 files ingested, 1 replaced, 3 skipped; {len(CSV_ROWS) + 1} rows read")
    assert lake.version("bronze/rides") == versions["bronze/rides"] + 1
    assert lake.version("quarantine/rides") == versions["quarantine/rides"] + 1
    bronze_rows = lake.read_arrow("bronze/rides").to_pylist()
    assert Counter(r["source_file"] for r in bronze_rows) == Counter(
        {"a_trips.csv": good_a + 1, "b_trips.jsonl": bronze["b_trips.jsonl"],
         "c_trips.parquet": bronze["c_trips.parquet"], "d_more.jsonl": 1})
    assert len({r["seq"] for r in bronze_rows}) == len(bronze_rows)
    quarantine = lake.read_arrow("quarantine/rides").to_pylist()
    assert sorted(r["source_line"] for r in quarantine if r["source_file"] == "a_trips.csv") == sorted(
        line for (f, line), r in want.items() if f == "a_trips.csv" and r is not None)
    assert {r["source_checksum"] for r in quarantine + bronze_rows if r["source_file"] == "a_trips.csv"} == {
        lakelib_checksum(landing / "a_trips.csv")}
    replaced = [r for r in log_rows(lake) if r["status"] == "replaced"]
    assert [(r["file"], r["rows_read"], r["rows_good"], r["rows_bad"]) for r in replaced] == [
        ("a_trips.csv", len(CSV_ROWS) + 1, good_a + 1, bad_a)]

    # and now it is simply already ingested
    report = ingest(lake.root, rides, landing, spark=spark)
    assert report.files_refused == {} and report.skip_reasons["a_trips.csv"] == ALREADY_INGESTED


def lakelib_checksum(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_odd_entries_and_unreadable_files_never_stop_the_others(tmp_path, spark, rides) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a_good.csv").write_text(CSV_HEADER + CSV_ROWS[0][0] + "\n")
    secret = tmp_path / "outside" / "passwd"
    secret.parent.mkdir()
    secret.write_text("".join(f"user{i}:x:{i}:{i}::/home/u:/bin/sh\n" for i in range(23)))
    (landing / "passwd.csv").symlink_to(secret)
    (landing / "b_link.jsonl").symlink_to(secret)
    os.mkfifo(landing / "c_pipe.jsonl")
    (landing / "d_folder.csv").mkdir()
    (landing / "e_junk.parquet").write_bytes(os.urandom(300))
    (landing / "f_empty.csv").write_bytes(b"")
    # pandas writes nanosecond timestamps by default; one value has sub-microsecond digits
    ns = pa.array([1_767_254_400_000_000_000, 1_767_254_460_000_000_007], pa.timestamp("ns", tz="UTC"))
    pq.write_table(pa.table({"type": ["Request", "Request"], "ts": ns, "driver": [1, 2], "rider": [3, 4],
                             "district": ["north", "south"]}), landing / "g_pandas.parquet")
    good = {"type": "Request", "ts": "2026-01-01T08:00:00Z", "driver": 1, "rider": 2, "district": "north"}
    with open(landing / "h_big.jsonl", "w") as fh:
        fh.write(json.dumps(good) + "\n")
        fh.write(json.dumps(dict(good, district="x" * 50_000_000)) + "\n")  # a 50 MB line
        fh.write(json.dumps(good) + "\n")

    lake = lakelib.Lake(tmp_path / "lake")
    report = ingest(lake.root, rides, landing, spark=spark)
    assert report.skip_reasons == {
        "b_link.jsonl": "symbolic link (links are never followed)",
        "c_pipe.jsonl": "FIFO (named pipe)",
        "d_folder.csv": "directory (sub-folders are not read)",
        "passwd.csv": "symbolic link (links are never followed)",
    }
    assert sorted(report.files_refused) == ["e_junk.parquet", "f_empty.csv"]
    assert report.files_refused["e_junk.parquet"].startswith("not a readable Parquet file")
    assert report.files_refused["f_empty.csv"] == "empty CSV file (a header line is required)"
    assert report.files_ingested == ["a_good.csv", "g_pandas.parquet", "h_big.jsonl"]
    assert report.warnings == [
        "g_pandas.parquet: nanosecond timestamps of ts converted to microseconds; "
        "1 value had sub-microsecond digits, truncated (precision lost)",
        f"h_big.jsonl: 1 line over {LINE_LIMIT} bytes quarantined unparsed",
    ]
    assert (report.rows_read, report.rows_good, report.rows_bad) == (6, 5, 1)

    quarantine = lake.read_arrow("quarantine/rides").to_pylist()
    assert [(r["source_file"], r["source_line"]) for r in quarantine] == [("h_big.jsonl", 2)]
    assert quarantine[0]["reason"].startswith("line of 50000") and "over the 1048576-byte line limit" in quarantine[0]["reason"]
    assert len(quarantine[0]["raw"].encode()) <= RAW_KEPT
    assert all("user" not in (r["raw"] or "") for r in quarantine), "nothing of the linked file was read"
    bronze = lake.read_arrow("bronze/rides").to_pylist()
    assert sorted(r["ts"] for r in bronze if r["source_file"] == "g_pandas.parquet") == [
        datetime(2026, 1, 1, 8, tzinfo=UTC), datetime(2026, 1, 1, 8, 1, tzinfo=UTC)]
    assert Counter(r["source_file"] for r in bronze) == {"a_good.csv": 1, "g_pandas.parquet": 2, "h_big.jsonl": 2}
    assert not (lake.root / lakelib.STAGING).exists() or not any((lake.root / lakelib.STAGING).iterdir()), \
        "converted copies are removed"
    refused = {r["file"]: r["message"] for r in log_rows(lake) if r["status"] == "refused"}
    assert refused == report.files_refused


def test_a_stream_name_that_escapes_the_lake_creates_nothing(tmp_path, spark, rides, capsys) -> None:
    work = tmp_path / "a" / "b"
    landing = write_landing(work / "landing")
    schema_file = work / "evil.json"
    schema_file.write_text(json.dumps(dict(rides, stream="../../escaped_stream")))
    with pytest.raises(IngestError, match="stream name '../../escaped_stream' cannot name a lake table"):
        ingest(work / "lake", dict(rides, stream="../../escaped_stream"), landing, spark=spark)
    rc = main(["ingest", "--lake", str(work / "lake"), "--landing", str(landing), "--stream", str(schema_file)])
    assert rc == 2
    assert "cannot name a lake table" in capsys.readouterr().err
    assert not any(p.name == "escaped_stream" for p in tmp_path.rglob("*"))
    assert not (work / "lake").exists()


def test_one_stream_identity_and_no_query_name_outside_the_lake(tmp_path, spark, capsys) -> None:
    """Ingest with a schema path; stats, optimize and replay with the name or the path alike."""
    schema = dict(load_stream_schema("rides"), stream="flights")
    schema_file = tmp_path / "schemas" / "my_flights.json"  # file name != stream name
    schema_file.parent.mkdir()
    schema_file.write_text(json.dumps(schema))
    write_csv(tmp_path / "landing" / "trips.csv", trip_rows(40, seed=3, hours=20))
    lake = lakelib.Lake(tmp_path / "lake")
    workload = tmp_path / "w.etq"
    workload.write_text(
        "QUERY trips RETURN district, COUNT(*) PATTERN SEQ(Request, Travel+) WHERE [driver] "
        "GROUP-BY district WITHIN 1 hour SLIDE 30 minutes;\n")

    def run(*argv: str) -> int:
        rc = main(list(argv))
        captured = capsys.readouterr()
        assert rc == 0, captured.err
        return rc

    run("ingest", "--lake", str(lake.root), "--landing", str(tmp_path / "landing"), "--stream", str(schema_file))
    assert sorted(lake.tables()) == ["bronze/flights", "ingest_log/flights", "quarantine/flights"]
    run("stats", "--lake", str(lake.root), "--stream", "flights", "--workload", str(workload), "--days", "2")
    run("stats", "--lake", str(lake.root), "--stream", str(schema_file), "--workload", str(workload), "--days", "2")
    assert lake.version("stats/flights") == 1, "both runs went to the same stats table"
    run("optimize", str(workload), "--lake", str(lake.root), "--stream", "flights")
    window = ["--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z"]
    run("replay", str(workload), "--lake", str(lake.root), "--stream", str(schema_file), *window)
    first = lake.read_arrow("results/trips").num_rows
    assert first > 0
    run("replay", str(workload), "--lake", str(lake.root), "--stream", "flights", *window)
    assert lake.read_arrow("results/trips").num_rows == first

    plan = current_plan(lake.root, "w")
    plan["queries"][0]["name"] = "../../x"
    plan["content_hash"] = content_hash(plan)  # edited and re-sealed: the name rule must still refuse it
    with pytest.raises(JobError, match=r"\.\./\.\./x"):
        replay(lake.root, workload, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", stream="flights",
               spark=spark, plan=plan)
    assert not (tmp_path / "x").exists() and not (lake.root / "x").exists()
