"""The ingest job on real Spark and Delta: every row accounted for, exactly once, crash-safe."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import UTC, datetime

import pytest
from trendlake.jobs import lake as lakelib
from trendlake.jobs.ingest import ingest
from trendlake.jobs.quality import SuiteFailed, suite_for_stream, validate_bronze

from tests.integration.spark.conftest import expected_reasons, write_landing

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, spark, rides) -> dict:
    from trendlake.jobs import quality

    root = tmp_path_factory.mktemp("ingest")
    landing = write_landing(root / "landing")
    suite_frames: list[str] = []  # the kind of frame each bronze validation ran on
    run_suite = quality.run_suite

    def recorded(df, suite):
        suite_frames.append(type(df).__module__)
        return run_suite(df, suite)

    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TRENDLAKE_SUITE_PANDAS_ROWS", raising=False)
        patch.setattr(quality, "run_suite", recorded)
        report = ingest(root / "lake", rides, landing, spark=spark)
    return {"root": root, "lake": lakelib.Lake(root / "lake"), "landing": landing, "report": report,
            "suite_frames": suite_frames}


def test_every_row_is_in_bronze_or_quarantine_with_its_reason(ingested) -> None:
    lake, report = ingested["lake"], ingested["report"]
    want = expected_reasons()
    good = sorted(k for k, r in want.items() if r is None)
    bad = {k: r for k, r in want.items() if r is not None}
    assert report.files_ingested == ["a_trips.csv", "b_trips.jsonl", "c_trips.parquet"]
    assert report.rows_read == len(want) == report.rows_good + report.rows_bad
    assert (report.rows_good, report.rows_bad) == (len(good), len(bad))

    quarantine = lake.read_arrow("quarantine/rides").to_pylist()
    got = {(r["source_file"], r["source_line"]): r["reason"] for r in quarantine}
    assert got == bad
    for r in quarantine:
        assert r["raw"] and r["source_checksum"] and r["ingested_at"] is not None
    by_line = {(r["source_file"], r["source_line"]): r for r in quarantine}
    assert json.loads(by_line[("a_trips.csv", 5)]["fields"])["type"] == "Teleport"
    assert "yesterday" in by_line[("a_trips.csv", 6)]["raw"]

    bronze = lake.read_arrow("bronze/rides").sort_by("seq").to_pylist()
    assert len(bronze) == len(good)
    assert len({r["seq"] for r in bronze}) == len(bronze), "seq is unique"
    assert sorted({r["source_file"] for r in bronze}) == ["a_trips.csv", "b_trips.jsonl", "c_trips.parquet"]
    first = bronze[0]
    assert first["type"] == "Request" and first["ts"] == datetime(2026, 1, 1, 8, tzinfo=UTC)
    assert (first["driver"], first["rider"], first["price"], first["passengers"]) == (1, 10, 12.5, 2)
    assert first["duration"] is None, "an attribute the type does not carry is not stored"
    epoch = next(r for r in bronze if r["ts"] == datetime(2026, 1, 1, 8, 2, tzinfo=UTC))
    assert epoch["speed"] == 7.5, "epoch-seconds timestamps are parsed"
    dropoff = next(r for r in bronze if r["type"] == "Dropoff")
    assert dropoff["ts"] == datetime(2026, 1, 1, 8, tzinfo=UTC), "offsets are converted to UTC"
    complaint = next(r for r in bronze if r["type"] == "Complaint")
    assert complaint["reason"] == "late", "an attribute called 'reason' does not clash with the quarantine reason"
    assert {str(r["event_date"]) for r in bronze} == {"2026-01-01", "2026-01-02", "2026-01-03"}
    assert lake.partition_columns("bronze/rides") == ["event_date"]

    log = lake.read_arrow("ingest_log/rides").to_pylist()
    assert sorted((r["file"], r["rows_read"], r["rows_good"] + r["rows_bad"]) for r in log) == [
        ("a_trips.csv", 10, 10), ("b_trips.jsonl", 8, 8), ("c_trips.parquet", 4, 4)]


@pytest.mark.parametrize("engine", ["spark", "pandas"])
def test_bronze_passes_its_suite_and_bad_bronze_fails_it(ingested, spark, rides, engine, monkeypatch) -> None:
    from pyspark.sql import functions as F

    # a batch of at most TRENDLAKE_SUITE_PANDAS_ROWS rows is validated on GE's pandas engine
    monkeypatch.setenv("TRENDLAKE_SUITE_PANDAS_ROWS", "0" if engine == "spark" else "1000")
    suite = suite_for_stream(rides)
    bronze = ingested["lake"].read_spark(spark, "bronze/rides")
    rows = bronze.count()
    assert validate_bronze(bronze, suite, rows=rows)["success"]
    first_seq = bronze.agg(F.min("seq")).first()[0]
    broken = bronze.withColumn("type", F.when(F.col("seq") == F.lit(first_seq), F.lit("Teleport")).otherwise(F.col("type")))
    broken = broken.withColumn("driver", F.when(F.col("type") == "Dropoff", F.lit(-5)).otherwise(F.col("driver")))
    broken = broken.unionByName(bronze.limit(1))  # a duplicate seq
    with pytest.raises(SuiteFailed) as err:
        validate_bronze(broken, suite, rows=rows + 1)
    text = str(err.value)
    assert "expect_column_values_to_be_in_set(type): 1 unexpected" in text
    assert "expect_column_values_to_be_between(driver): 1 unexpected" in text
    assert "expect_column_values_to_be_unique(seq)" in text


def test_a_small_batch_is_validated_on_pandas(ingested) -> None:
    """The ingest's own batch (16 good rows, under the default limit) reached GE as pandas."""
    assert ingested["suite_frames"] == ["pandas.core.frame"]


def test_both_engines_judge_a_batch_alike_at_the_edges(spark, monkeypatch) -> None:
    """GE's pandas and Spark engines give the same failures on a batch with NULLs, bounds
    hit exactly and missed by one, doubles beside their bounds, strings outside a set, a
    NULL key and a duplicate; and the pandas path keeps 64-bit integers exact (plain
    pandas would make the NULL-holding column float, where 2**62 + 1 equals 2**62)."""
    from pyspark.sql import types as T

    schema = T.StructType([
        T.StructField("seq", T.LongType()), T.StructField("n", T.LongType()),
        T.StructField("x", T.DoubleType()), T.StructField("kind", T.StringType()),
        T.StructField("flag", T.BooleanType()),
    ])
    # GE takes every bound as a double, and Spark then compares a long column as doubles: beyond
    # 2**53 its Spark engine misses a value one past a bound (docs/lake.md), the pandas path does not
    limit = 10**6
    data = [
        (1, limit, 0.0, "a", True), (2, limit + 1, 1.5, "b", None), (3, None, None, None, False),
        (3, -limit, 1.5000001, "c", None), (None, -limit - 1, -0.0, "a", True), (5, 0, -1e-300, "A", None),
    ]
    df = spark.createDataFrame(data, schema)

    def exp(kind: str, **kwargs: object) -> dict:
        return {"type": kind, "kwargs": kwargs, "meta": {}}

    def failures(frame, suite: dict, pandas_rows: str) -> list[str]:
        monkeypatch.setenv("TRENDLAKE_SUITE_PANDAS_ROWS", pandas_rows)
        with pytest.raises(SuiteFailed) as err:
            validate_bronze(frame, suite, rows=frame.count())
        return sorted(str(err.value).split(": ", 1)[1].split("; "))

    suite = {"name": "edges", "meta": {}, "expectations": [
        exp("expect_column_values_to_not_be_null", column="seq"),
        exp("expect_column_values_to_be_unique", column="seq"),
        exp("expect_column_values_to_not_be_null", column="n"),
        exp("expect_column_values_to_be_between", column="n", min_value=-limit, max_value=limit),
        exp("expect_column_values_to_be_between", column="x", min_value=0, max_value=1.5),
        exp("expect_column_values_to_be_in_set", column="kind", value_set=["a", "b"]),
        exp("expect_column_values_to_not_be_null", column="flag"),
    ]}
    on_spark, on_pandas = failures(df, suite, "0"), failures(df, suite, "100")
    assert on_pandas == on_spark == [
        "expect_column_values_to_be_between(n): 2 unexpected",  # one past each bound
        "expect_column_values_to_be_between(x): 2 unexpected",  # 1.5000001 and -1e-300; -0.0 is in
        "expect_column_values_to_be_in_set(kind): 2 unexpected",  # "c" and "A"; NULL is not judged
        "expect_column_values_to_be_unique(seq): 2 unexpected",  # both rows of seq 3
        "expect_column_values_to_not_be_null(flag): 3 unexpected",
        "expect_column_values_to_not_be_null(n): 1 unexpected",
        "expect_column_values_to_not_be_null(seq): 1 unexpected",
    ]

    big = spark.createDataFrame([(2**62,), (2**62 + 1,), (None,)], "n bigint")
    upper = {"name": "big", "meta": {}, "expectations": [
        exp("expect_column_values_to_be_between", column="n", max_value=2**62)]}
    assert failures(big, upper, "100") == ["expect_column_values_to_be_between(n): 1 unexpected"]


def test_staged_files_carry_their_statistics_and_the_next_seq_is_read_from_them(ingested, spark, tmp_path) -> None:
    """Each committed file's log statistics are its own data's (row count; for integer columns NULL
    count and bounds), and the next ``seq`` comes from them without Spark; a table whose files
    carry only row counts (written by an older trendlake) is scanned instead."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from deltalake import Schema
    from deltalake.transaction import AddAction, create_table_with_add_actions
    from trendlake.jobs.ingest.job import _next_seq

    lake = ingested["lake"]
    for table in ("bronze/rides", "quarantine/rides"):
        actions = lake.add_actions(table).to_pylist()
        assert actions
        for action in actions:
            data = pq.ParquetFile(lake.path(table) / action["path"]).read()
            assert action["num_records"] == data.num_rows
            for name in data.column_names:
                column = data.column(name)
                if pa.types.is_integer(column.type):
                    assert action[f"null_count.{name}"] == column.null_count, (table, name)
                    assert (action[f"min.{name}"], action[f"max.{name}"]) == (
                        pc.min(column).as_py(), pc.max(column).as_py()), (table, name)
    top = lake.read_arrow("bronze/rides", columns=["seq"]).column("seq")
    assert lake.max_from_log("bronze/rides", "seq") == (True, pc.max(top).as_py())
    assert _next_seq(lake, None, "bronze/rides") == pc.max(top).as_py() + 1  # None: no Spark at all

    old = lakelib.Lake(tmp_path / "old")
    folder = old.path("bronze/rides")
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"seq": pa.array([4, 41, 7], pa.int64())}), folder / "part-0.parquet")
    create_table_with_add_actions(
        str(folder), Schema.from_arrow(pa.schema([("seq", pa.int64())])),
        [AddAction(path="part-0.parquet", size=(folder / "part-0.parquet").stat().st_size, partition_values={},
                   modification_time=0, data_change=True, stats=json.dumps({"numRecords": 3}))],
        mode="error",
    )
    assert old.max_from_log("bronze/rides", "seq") == (False, None)
    assert _next_seq(old, spark, "bronze/rides") == 42
    assert old.max_from_log("bronze/none", "seq") == (True, None)


def test_reingest_changes_no_table(ingested, tmp_path, capsys) -> None:
    from trendlake.jobs.cli import main

    lake, landing = ingested["lake"], ingested["landing"]
    tables = ["bronze/rides", "quarantine/rides", "ingest_log/rides"]
    versions = {t: lake.version(t) for t in tables}
    copy = tmp_path / "landing"
    shutil.copytree(landing, copy)
    shutil.copy(landing / "a_trips.csv", copy / "d_renamed_copy.csv")
    rc = main(["ingest", "--lake", str(lake.root), "--landing", str(copy), "--stream", "rides"])
    assert rc == 0
    assert "0 files ingested, 4 skipped" in capsys.readouterr().out
    assert {t: lake.version(t) for t in tables} == versions


@pytest.mark.parametrize("crash_at", [1, 2])
def test_crash_between_staging_and_commit_then_rerun(crash_at, tmp_path, spark, rides, monkeypatch) -> None:
    """Killed before the bronze commit (1) or between bronze and quarantine (2): the rerun completes exactly once."""
    landing = write_landing(tmp_path / "landing")
    lake = lakelib.Lake(tmp_path / "lake")
    calls = []

    def crash(table_path, actions):
        calls.append(table_path)
        if len(calls) == crash_at:
            raise KeyboardInterrupt("killed between staging and commit")

    monkeypatch.setattr(lakelib, "_before_commit", crash)
    with pytest.raises(KeyboardInterrupt):
        ingest(lake.root, rides, landing, spark=spark)
    monkeypatch.undo()
    assert lake.version("ingest_log/rides") is None
    assert lake.version("quarantine/rides") is None
    if crash_at == 1:
        assert lake.version("bronze/rides") is None
    else:
        assert lake.version("bronze/rides") == 0
    staged = list((lake.root / lakelib.STAGING).iterdir())
    assert staged, "the killed write leaves its staging folder for cleanup_staging"

    report = ingest(lake.root, rides, landing, spark=spark)
    want = expected_reasons()
    assert report.rows_read == len(want)
    assert report.files_recovered == ([] if crash_at == 1 else ["a_trips.csv", "b_trips.jsonl", "c_trips.parquet"])
    bronze = lake.read_arrow("bronze/rides").to_pylist()
    quarantine = lake.read_arrow("quarantine/rides").to_pylist()
    good_per_file = Counter(f for (f, _), r in want.items() if r is None)
    assert Counter(r["source_file"] for r in bronze) == good_per_file, "every good row once, none twice"
    assert len({r["seq"] for r in bronze}) == len(bronze)
    assert len(bronze) == sum(r is None for r in want.values())
    assert sorted((r["source_file"], r["source_line"]) for r in quarantine) == sorted(
        k for k, r in want.items() if r is not None)
    # The orphans the killed write moved under the table root are not part of any snapshot ...
    assert lake.read_spark(spark, "bronze/rides").count() == len(bronze)
    # ... and cleanup_staging removes them and the staging folder.
    removed = lake.cleanup_staging(max_age_seconds=0)
    assert staged[0] in removed
    assert not (lake.root / lakelib.STAGING).exists() or not any((lake.root / lakelib.STAGING).iterdir())
    assert lake.read_arrow("bronze/rides").num_rows == len(bronze)
    assert ingest(lake.root, rides, landing, spark=spark).files_skipped == [
        "a_trips.csv", "b_trips.jsonl", "c_trips.parquet"]
