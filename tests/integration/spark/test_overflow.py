"""Overflow end to end: a window whose COUNT exceeds decimal(38,0) is null and named in ``overflowed``.

``PATTERN Travel+`` over n Travel events with distinct time stamps has 2^n - 1
trends; n = 130 gives about 1.4e39 > 10^38 - 1. The group ``north`` holds
several drivers (``[driver]`` partitions it), each with 130 events, and the
shuffle is kept at several Spark partitions (no coalescing), so the overflowed
partial states of one group come out of different Spark partitions and are
merged on the driver: they must stay overflowed, never wrap or turn into a
number. A sum over zero durations stays an exact 0 beside an overflowed
count; the small group ``south`` stays exact. The result checks pass, since
a null value is allowed exactly where ``overflowed`` names its column.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from trendlake.jobs import lake as lakelib
from trendlake.jobs.checks import check_result_tables
from trendlake.jobs.ingest import ingest
from trendlake.jobs.optimize import optimize
from trendlake.jobs.replay import replay
from trendlake.schemas import load_stream_schema

from tests.integration.sample import write_csv

pytestmark = pytest.mark.spark

WORKLOAD = """
QUERY many_travels
RETURN district, COUNT(*), COUNT(Travel) AS travels, SUM(Travel.duration) AS total, MAX(Travel.speed) AS top
PATTERN Travel+
WHERE [driver]
GROUP-BY district
WITHIN 1 hour;
"""
START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
NORTH_DRIVERS = (1, 2, 3, 4, 5, 6)
N = 130


def rows() -> list[dict]:
    out = []
    for driver in NORTH_DRIVERS:
        for i in range(N):  # distinct time stamps: 2^130 - 1 trends per driver
            t = START + timedelta(seconds=i * 10 + driver)
            out.append({"type": "Travel", "ts": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "driver": driver, "rider": 0,
                        "district": "north", "duration": 0.0, "speed": float(i % 7)})
    for i in range(3):  # south: 2^3 - 1 = 7 trends, exact
        t = START + timedelta(seconds=i * 10)
        out.append({"type": "Travel", "ts": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "driver": 9, "rider": 0,
                    "district": "south", "duration": 2.0, "speed": 3.0})
    out.sort(key=lambda r: r["ts"])
    return out


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, spark) -> dict:
    # imported here, not at collection: a run of both tiers collects this module before its
    # fast-tier tests, which must run where pyspark is not imported (tests/conftest.py)
    from pyspark.sql import functions as F

    root = tmp_path_factory.mktemp("overflow")
    write_csv(root / "landing" / "travels.csv", rows())
    workload = root / "overflow.etq"
    workload.write_text(WORKLOAD)
    ingest(root / "lake", load_stream_schema("rides"), root / "landing", spark=spark)
    optimize(root / "lake", workload, stream="rides")
    key = "spark.sql.adaptive.coalescePartitions.enabled"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "false")
    try:
        # the drivers of north land in several of the shuffle's partitions (as in replay's
        # repartition by the partition key: district, then driver)
        keys = spark.createDataFrame([("north", d) for d in NORTH_DRIVERS], "district string, driver long")
        parts = keys.repartition(F.col("district"), F.col("driver")).select(F.spark_partition_id().alias("p"))
        spread = {r.p for r in parts.collect()}
        report = replay(root / "lake", workload, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", spark=spark)
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
    table = lakelib.Lake(root / "lake").read_arrow("results/many_travels").to_pylist()
    return {"root": root, "workload": workload, "report": report, "rows": table, "spread": spread}


def test_the_group_spans_several_spark_partitions(replayed) -> None:
    assert len(replayed["spread"]) >= 2, replayed["spread"]


def test_overflowed_count_is_null_and_named(replayed) -> None:
    by_district = {r["district"]: r for r in replayed["rows"]}
    assert set(by_district) == {"north", "south"}
    north = by_district["north"]
    assert north["count"] is None and north["travels"] is None
    assert sorted(north["overflowed"]) == ["count", "travels"]
    assert north["total"] == 0.0 or north["total"] == Decimal(0)  # zero durations: exact despite the count
    assert north["top"] == 6.0
    south = by_district["south"]
    assert south["overflowed"] == []
    assert (south["count"], south["travels"]) == (Decimal(7), Decimal(12))  # 7 trends, 3 * 2^2 events
    assert float(south["total"]) == 24.0 and south["top"] == 3.0


def test_result_checks_pass_with_overflow(replayed) -> None:
    summary = check_result_tables(
        replayed["root"] / "lake", replayed["workload"], "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
    )
    assert summary["many_travels"]["rows"] == 2
