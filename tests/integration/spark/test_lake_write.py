"""``Lake.write``: the lake's one write verb, its typed modes on Arrow tables and Spark
DataFrames, and the modes each kind of data refuses (docs/lake.md, "Writes")."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from trendlake.jobs.lake import APPEND, OVERWRITE, Lake, LakeError, ReplacePartitions, ReplaceWhere

pytestmark = pytest.mark.spark


def rows(lake: Lake, table: str) -> list[tuple]:
    return sorted(tuple(r.values()) for r in lake.read_arrow(table).to_pylist())


def test_arrow_append_overwrite_and_replace_where(tmp_path) -> None:
    lake = Lake(tmp_path)
    first = pa.table({"k": ["a", "b"], "n": [1, 2]})
    assert lake.write("results/x", first) == 0  # created
    assert lake.write("results/x", first, APPEND) == 1
    assert rows(lake, "results/x") == [("a", 1), ("a", 1), ("b", 2), ("b", 2)]
    assert lake.write("results/x", first, OVERWRITE) == 2
    assert rows(lake, "results/x") == [("a", 1), ("b", 2)]
    assert lake.write("results/x", pa.table({"k": ["a"], "n": [9]}), ReplaceWhere("k = 'a'")) == 3
    assert rows(lake, "results/x") == [("a", 9), ("b", 2)]
    # a row outside the predicate: nothing committed
    with pytest.raises(LakeError, match="do not all match the predicate"):
        lake.write("results/x", pa.table({"k": ["b"], "n": [0]}), ReplaceWhere("k = 'a'"))
    assert lake.version("results/x") == 3 and rows(lake, "results/x") == [("a", 9), ("b", 2)]


def test_a_mode_the_data_cannot_take_is_refused_before_writing(tmp_path, spark) -> None:
    lake = Lake(tmp_path)
    table = pa.table({"k": ["a"], "n": [1]})
    with pytest.raises(TypeError, match="ReplacePartitions writes a Spark DataFrame"):
        lake.write("results/x", table, ReplacePartitions([("k", "=", "a")]))
    with pytest.raises(TypeError, match="ReplaceWhere writes an Arrow table"):
        lake.write("results/x", spark.createDataFrame([("a", 1)], "k string, n long"), ReplaceWhere("k = 'a'"))
    with pytest.raises(TypeError, match="write mode must be"):
        lake.write("results/x", table, "overwrite")  # type: ignore[arg-type]
    assert not lake.exists("results/x")


def test_spark_append_and_replace_partitions(tmp_path, spark) -> None:
    lake = Lake(tmp_path)
    day1, day2 = dt.date(2026, 1, 1), dt.date(2026, 1, 2)
    df = spark.createDataFrame([("a", 1, day1), ("b", 2, day2)], "k string, n long, d date")
    lake.write("results/y", df, partition_by=["d"])
    assert rows(lake, "results/y") == [("a", 1, day1), ("b", 2, day2)]
    new = spark.createDataFrame([("c", 3, day2)], "k string, n long, d date")
    lake.write("results/y", new, ReplacePartitions([("d", "=", "2026-01-02")]))
    assert rows(lake, "results/y") == [("a", 1, day1), ("c", 3, day2)]
    before = lake.version("results/y")
    with pytest.raises(LakeError, match="outside the partitions being replaced"):
        lake.write("results/y", new, ReplacePartitions([("d", "=", "2026-01-01")]))
    assert lake.version("results/y") == before
    with pytest.raises(LakeError, match="partitioned by"):
        lake.write("results/y", new, partition_by=["k"])
