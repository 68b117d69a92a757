"""Ingest (Spark expressions) and eval (Arrow) type raw values by the same rules
(``trendlake.schemas.typing``): every tricky value gets the same value or the same refusal,
and a CSV field with a quoted line break lands in bronze as one row holding the whole value."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest
from trendlake.jobs import lake as lakelib
from trendlake.jobs.ingest import ingest
from trendlake.jobs.ingest.landing import LINE_LIMIT
from trendlake.schemas.typing import arrow, rules
from trendlake.schemas.typing.spark import Lets, cast_column, parse_time
from trendlake.schemas.typing.sqlexpr import col

from tests.typing_cases import ATTRIBUTE_VALUES, TIME_VALUES

pytestmark = pytest.mark.spark


def _arrow_attribute(values: list[str], kind: str) -> list:
    typed = arrow.cast_column(pa.array(values, pa.string()), kind, "a")
    return ["BAD" if typed.bad[i] else typed.values[i].as_py() for i in range(len(values))]


def _arrow_time(values: list[str], unit: str) -> list:
    typed = arrow.parse_time(pa.array(values, pa.string()), unit, "ts")
    return [typed.reason_of(i) if typed.bad[i] else typed.values[i].as_py() for i in range(len(values))]


def test_attributes_typed_alike(spark) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(i, v) for i, v in enumerate(ATTRIBUTE_VALUES)], "i int, a string")
    df = df.select("i", F.when(F.col("a") != "", F.col("a")).alias("a"))  # empty text is missing (validate)
    for kind in rules.KINDS:
        lets = Lets(df.columns)
        value = cast_column("a", kind, lets)
        got = sorted(lets.apply(df).select("i", "a", value.column().alias("v")).collect())
        spark_side = ["BAD" if r["a"] is not None and r["v"] is None else r["v"] for r in got]
        assert spark_side == _arrow_attribute(ATTRIBUTE_VALUES, kind), kind


@pytest.mark.parametrize("unit", sorted(rules.TIME_UNITS))
def test_times_typed_alike(spark, unit: str) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(i, v) for i, v in enumerate(TIME_VALUES)], "i int, ts string")
    df = df.select("i", F.when(F.col("ts") != "", F.col("ts")).alias("ts"))
    lets = Lets(df.columns)
    ts, problem = parse_time(col("ts"), "ts", unit, lets)
    rows = sorted(lets.apply(df).select("i", "ts", F.unix_micros(ts.column()).alias("us"), problem.column().alias("why")).collect())
    spark_side = []
    for r in rows:
        present = r["ts"] is not None and r["ts"].strip() != ""
        if r["us"] is not None or not present:
            spark_side.append(r["us"])
        else:
            spark_side.append(r["why"] or f"unparseable timestamp '{r['ts']}'")
    arrow_side = _arrow_time(TIME_VALUES, unit)
    diff = [(v, s, a) for v, s, a in zip(TIME_VALUES, spark_side, arrow_side, strict=True) if s != a]
    assert not diff, diff


SCHEMA = {
    "stream": "notes", "time_column": "ts", "type_column": "type", "event_types": ["A", "B"],
    "attributes": {"note": {"type": "string", "types": "*", "required": False},
                   "x": {"type": "long", "types": "*", "required": False}},
}


def test_quoted_line_break_is_one_bronze_row(tmp_path, spark) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    value = 'first line\nsecond line, with "quotes" and a comma'
    quoted = '"' + value.replace('"', '""') + '"'
    (landing / "notes.csv").write_text(
        "type,ts,note,x\n"
        f"A,2026-01-05T10:00:00Z,{quoted},1\n"
        "B,2026-01-05T10:01:00Z,plain,2\n"
        "B,1767607380000,late,3\n"  # epoch milliseconds in a seconds stream: quarantined
    )
    report = ingest(tmp_path / "lake", SCHEMA, landing, spark=spark)
    lake = lakelib.Lake(tmp_path / "lake")
    bronze = sorted(lake.read_arrow("bronze/notes").to_pylist(), key=lambda r: r["x"])
    assert [(r["type"], r["note"], r["x"]) for r in bronze] == [("A", value, 1), ("B", "plain", 2)]
    quarantine = lake.read_arrow("quarantine/notes").to_pylist()
    assert [r["reason"] for r in quarantine] == [
        'ts 1767607380000 is year 57983 as seconds: looks like epoch milliseconds; declare "time_unit": "milliseconds"'
    ]
    assert json.loads(quarantine[0]["fields"])["note"] == "late"
    assert (report.rows_read, report.rows_good, report.rows_bad) == (3, 2, 1)


def test_declared_milliseconds_are_ingested(tmp_path, spark) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "ms.csv").write_text("type,ts,note,x\nA,1767607380000,ms,1\n")
    report = ingest(tmp_path / "lake", dict(SCHEMA, time_unit="milliseconds"), landing, spark=spark)
    assert (report.rows_good, report.rows_bad) == (1, 0)
    row = lakelib.Lake(tmp_path / "lake").read_arrow("bronze/notes").to_pylist()[0]
    assert row["ts"].isoformat() == "2026-01-05T10:03:00+00:00"


def test_parquet_nanosecond_and_millisecond_times(tmp_path, spark) -> None:
    """pandas writes nanosecond timestamps; int64 milliseconds follow the declared unit."""
    import pyarrow.parquet as pq

    landing = tmp_path / "landing"
    landing.mkdir()
    instants = [1767607380_000_000_123, 1767607381_000_000_999]  # ns; eval cuts to µs too
    pq.write_table(pa.table({
        "type": ["A", "B"], "ts": pa.array(instants, pa.timestamp("ns", tz="UTC")),
        "note": ["n1", "n2"], "x": pa.array([1, 2], pa.int64()),
    }), landing / "a_nanos.parquet")
    pq.write_table(pa.table({
        "type": ["A"], "ts": pa.array([1767607382_000], pa.int64()), "note": ["ms"], "x": pa.array([3], pa.int64()),
    }), landing / "b_millis.parquet")
    report = ingest(tmp_path / "lake", SCHEMA, landing, spark=spark)
    assert (report.rows_read, report.rows_good, report.rows_bad) == (3, 2, 1)
    lake = lakelib.Lake(tmp_path / "lake")
    bronze = sorted(lake.read_arrow("bronze/notes").to_pylist(), key=lambda r: r["x"])
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    micros = [(r["ts"] - epoch) // timedelta(microseconds=1) for r in bronze]
    want = arrow.parse_time(pa.array(instants, pa.timestamp("ns", tz="UTC"))).values.to_pylist()
    assert micros == want == [1767607380_000_000, 1767607381_000_000]
    reasons = [r["reason"] for r in lake.read_arrow("quarantine/notes").to_pylist()]
    assert reasons == ['ts 1767607382000 is year 57983 as seconds: looks like epoch milliseconds; '
                       'declare "time_unit": "milliseconds"']


def test_multi_line_records_with_blank_and_over_long_lines(tmp_path, spark) -> None:
    """Quoted line breaks, a blank line and an over-long line (quarantined unparsed by the
    landing scan) in one CSV: every record read once, none twice, source lines distinct."""
    landing = tmp_path / "landing"
    landing.mkdir()
    long_line = "A,2026-01-05T10:00:00Z," + "z" * (LINE_LIMIT + 10) + ",9"
    (landing / "mixed.csv").write_text(
        "type,ts,note,x\n"
        'A,2026-01-05T10:00:00Z,"two\nlines",1\n'
        "\n"
        f"{long_line}\n"
        "B,2026-01-05T10:01:00Z,after,2\n"
        "B,not-a-time,bad,3\n"
    )
    report = ingest(tmp_path / "lake", SCHEMA, landing, spark=spark)
    assert (report.rows_read, report.rows_good, report.rows_bad) == (4, 2, 2)
    lake = lakelib.Lake(tmp_path / "lake")
    bronze = sorted(lake.read_arrow("bronze/notes").to_pylist(), key=lambda r: r["x"])
    assert [(r["note"], r["x"]) for r in bronze] == [("two\nlines", 1), ("after", 2)]
    assert len({r["seq"] for r in bronze}) == 2
    quarantine = lake.read_arrow("quarantine/notes").to_pylist()
    lines = sorted(r["source_line"] for r in quarantine)
    assert lines == [5, 7]  # physical lines: the over-long line, and the bad row after the quoted break
    assert any(r["reason"] == "unparseable timestamp 'not-a-time'" for r in quarantine)
