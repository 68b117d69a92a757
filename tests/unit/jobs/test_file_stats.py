"""The Delta statistics a staged Parquet file is committed with (``jobs.lake.file_stats``).

Data skipping in any Delta reader, and ``Lake.max_from_log``, trust these bounds: a
bound that is too tight loses rows. They must be the data's own, from the footer.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st
from trendlake.jobs.lake import file_stats

INTEGERS = {"i64": pa.int64(), "i32": pa.int32(), "i16": pa.int16(), "i8": pa.int8()}


def footer(table: pa.Table, **options) -> pq.FileMetaData:
    buf = io.BytesIO()
    pq.write_table(table, buf, **options)
    return pq.read_metadata(io.BytesIO(buf.getvalue()))


@st.composite
def integer_tables(draw: st.DrawFn) -> pa.Table:
    n = draw(st.integers(1, 40))
    columns = {}
    for name, kind in INTEGERS.items():
        bits = kind.bit_width - 1
        value = st.integers(-(1 << bits), (1 << bits) - 1)
        columns[name] = pa.array(draw(st.lists(st.none() | value, min_size=n, max_size=n)), kind)
    return pa.table(columns)


@given(integer_tables(), st.integers(1, 12))
def test_integer_columns_get_their_exact_bounds_and_null_counts(table: pa.Table, row_group: int) -> None:
    stats = file_stats(footer(table, row_group_size=row_group))
    assert stats["numRecords"] == table.num_rows
    for name in table.column_names:
        column = table.column(name)
        assert stats["nullCount"][name] == column.null_count
        if column.null_count == table.num_rows:  # all NULL: no bounds
            assert name not in stats["minValues"] and name not in stats["maxValues"]
        else:
            assert stats["minValues"][name] == pc.min(column).as_py()
            assert stats["maxValues"][name] == pc.max(column).as_py()


def test_only_types_whose_delta_statistic_is_exact_get_bounds() -> None:
    table = pa.table({
        "seq": pa.array([3, 9], pa.int64()),
        "unsigned": pa.array([1, 2], pa.uint32()),
        "ts": pa.array([1, 2], pa.timestamp("us", tz="UTC")),  # Delta keeps milliseconds: rounded
        "day": pa.array([1, 2], pa.date32()),
        "x": [0.5, float("nan")],
        "s": ["a", "b"],  # Delta truncates long strings
    })
    stats = file_stats(footer(table))
    assert stats == {"numRecords": 2, "minValues": {"seq": 3}, "maxValues": {"seq": 9}, "nullCount": {"seq": 0}}


def test_a_file_without_footer_statistics_gets_the_row_count_only() -> None:
    table = pa.table({"seq": pa.array([3, 9], pa.int64()), "driver": pa.array([7, None], pa.int64())})
    assert file_stats(footer(table, write_statistics=False)) == {"numRecords": 2}
    partly = file_stats(footer(table, write_statistics=["seq"]))  # the footer bounds seq only
    assert (partly["minValues"], partly["maxValues"], partly["nullCount"]) == ({"seq": 3}, {"seq": 9}, {"seq": 0})
