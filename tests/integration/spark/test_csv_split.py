"""A CSV file none of whose lines holds an odd number of quotes is read line by line in
splits (every core); read whole (one multi-line stream, one task) it gives the same rows.

``read_raw`` is run both ways on the same files, and every row must match: its text
columns, the physical line it is numbered by, its raw text and its malformed note. The
files hold what the two readers could treat differently: blank lines (empty or spaces;
a blank line of tabs or NULs is a record to the whole reader, so such a file is read whole), ``\\n`` or ``\\r\\n`` terminators (one kind per file: a file whose lines end in mixed ways is read
whole), doubled quotes, a last line without a terminator, an over-long line (read from
the copy that holds a space in its place), and enough lines for several splits.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from trendlake.jobs.ingest.landing import LINE_LIMIT, scan_file
from trendlake.jobs.ingest.read import ToRead, prepare, read_raw
from trendlake.schemas import load_stream_schema

pytestmark = pytest.mark.spark

RIDES = load_stream_schema("rides")
HEADER = b"type,ts,driver,district,price"
CELLS = [b"Request", b"Travel", b"2026-01-01T00:00:01Z", b"12", b"north", b'"so ""quoted"""', b"", b" 3.5 ",
         b"x" * 3, b"\xc3\xa9", b'"a,b"']
BLANKS = [b"", b" ", b"   "]
TERMINATORS = [b"\n", b"\r\n"]


def rows_of(spark, path, scanned, split: bool) -> list[tuple]:
    df, n = read_raw(spark, path, RIDES, scanned if split else None)
    got = sorted((tuple(r) for r in df.select("type", "ts", "driver", "district", "price", "_line", "_raw",
                                               "_malformed").collect()), key=repr)
    return [n, *got]


@st.composite
def csv_lines(draw: st.DrawFn) -> bytes:
    rng = random.Random(draw(st.integers(0, 2**32)))
    lines = [HEADER]
    for _ in range(draw(st.integers(0, 40))):
        lines.append(rng.choice(BLANKS) if rng.random() < 0.2 else
                     b",".join(rng.choice(CELLS) for _ in range(rng.randint(1, 6))))
    end = rng.choice(TERMINATORS)
    data = b"".join(line + end for line in lines)
    return data[:-len(end)] if draw(st.booleans()) else data


def check_both_ways(tmp_path, spark, data: bytes) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    scanned = scan_file(path)
    assert scanned.splittable
    read_path, _ = prepare(ToRead(path, scanned, None), tmp_path / "work")
    assert rows_of(spark, read_path, scanned, True) == rows_of(spark, read_path, scanned, False)


@settings(max_examples=4, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=csv_lines())
@example(data=HEADER + b"\r\n\r\nRequest,2026-01-01T00:00:01Z,1,north,2\r\n  \r\nTravel,x\r\n\r\n"
         + b"y" * (LINE_LIMIT + 1) + b"\r\nPickup,\"a \"\"b\"\"\",3\r\n   ")
def test_split_and_whole_reads_give_the_same_rows(tmp_path_factory, spark, data) -> None:
    check_both_ways(tmp_path_factory.mktemp("split"), spark, data)


def test_a_file_of_many_splits_keeps_every_line_number(tmp_path, spark) -> None:
    """About 4 MB in splits of 1 MB: the rows of every split, numbered across splits."""
    rows = [b"Travel,2026-01-01T00:00:%02dZ,%d,north,%d.5" % (i % 60, i, i) for i in range(120_000)]
    rows[5_000] = b"   "  # a blank line early on shifts every later line number by one record
    data = HEADER + b"\n" + b"\n".join(rows) + b"\n"
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(1 << 20))
    try:
        path = tmp_path / "f.csv"
        path.write_bytes(data)
        scanned = scan_file(path)
        df, n = read_raw(spark, path, RIDES, scanned)
        assert df.rdd.getNumPartitions() > 1
        lines = {r["driver"]: r["_line"] for r in df.select("driver", "_line").collect()}
        assert n == len(lines) == 119_999
        assert all(lines[str(i)] == i + 2 for i in range(5_000)) and lines["5001"] == 5_003
        assert all(lines[str(i)] == i + 2 for i in range(5_001, 120_000))
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_mixed_line_endings_and_quoted_line_breaks_are_read_whole(tmp_path, spark) -> None:
    """What the split reader would read differently keeps the multi-line reader (one task)."""
    for data in (HEADER + b"\r\nRequest,x\rTravel,y\r\n", HEADER + b"\nRequest,\"two\nlines\"\n",
                 HEADER + b"\n\t\nRequest,x\n"):
        path = tmp_path / "f.csv"
        path.write_bytes(data)
        scanned = scan_file(path)
        assert not scanned.splittable
        # the whole read's records: the CR is no line break there; a line of tabs is a record
        assert rows_of(spark, path, scanned, True)[0] == (2 if b"\t" in data else 1)
