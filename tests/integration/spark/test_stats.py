"""The stats job on Spark agrees with the plain Arrow function, and both with hand counts."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pytest
from trendlake.jobs import lake as lakelib
from trendlake.jobs.ingest.tables import as_bronze
from trendlake.jobs.statistics import compute_stats
from trendlake.jobs.stats import latest_statistics, read_runs, run_stats
from trendlake.schemas import load_stream_schema

pytestmark = pytest.mark.spark

DAY = datetime(2026, 1, 1, tzinfo=UTC)
WORKLOAD = """
QUERY slow
RETURN district, COUNT(*)
PATTERN SEQ(Request, Travel+, Pickup)
WHERE [driver] AND Travel.speed < 10
GROUP-BY district
WITHIN 10 minutes SLIDE 5 minutes;
"""


def events() -> pa.Table:
    """Driver 1: Request, 3 Travel (speeds 5, 12, 8), Pickup; driver 2: Request, Travel (20), Pickup."""
    rows = []

    def add(minute: float, type_: str, driver: int, speed: float | None = None) -> None:
        rows.append({
            "type": type_, "ts": DAY.replace(minute=int(minute), second=int(minute % 1 * 60)),
            "driver": driver, "rider": 10 + driver, "district": "north",
            "speed": speed, "duration": 60.0 if type_ == "Travel" else None,
        })

    add(0, "Request", 1)
    add(0.5, "Request", 2)
    add(1, "Travel", 1, 5.0)
    add(1.5, "Travel", 2, 20.0)
    add(2, "Travel", 1, 12.0)
    add(3, "Travel", 1, 8.0)
    add(4, "Pickup", 1)
    add(7, "Pickup", 2)
    table = pa.Table.from_pylist(rows)
    return table.append_column("seq", pa.array(range(len(rows)), pa.int64()))


def comparable(rows: list[dict]) -> list[tuple]:
    keys = ("kind", "event_type", "group_key", "query", "variable", "predicate", "events", "panes",
            "runs", "matched", "groups", "max", "mean", "value")
    return sorted(tuple("" if r.get(k) is None else str(r.get(k)) for k in keys) for r in rows)


def test_spark_stats_equal_the_arrow_function_and_hand_counts(tmp_path, spark) -> None:
    schema = load_stream_schema("rides")
    workload = tmp_path / "slow.etq"
    workload.write_text(WORKLOAD)
    table = events()
    lake = lakelib.Lake(tmp_path / "lake")
    lake.write(
        "bronze/rides", as_bronze(table, schema, first_seq=0, source_file="hand", source_checksum="hand")
    )
    start, end = DAY, DAY.replace(minute=10)

    plain = compute_stats(table, schema, workload, start=start, end=end)
    version = run_stats(lake.root, "rides", workload, start, end, spark=spark)
    assert version == 0
    runs = read_runs(lake.root, "rides").to_pylist()
    assert comparable(runs) == comparable(plain)

    def one(kind: str, **match) -> dict:
        found = [r for r in plain if r["kind"] == kind and all(r.get(k) == v for k, v in match.items())]
        assert len(found) == 1, (kind, match, found)
        return found[0]

    # panes are gcd(10 min, 5 min) = 5 minutes: [0, 10) touches 2 panes
    travel = one("rate", event_type="Travel", group_key=None)
    assert (travel["events"], travel["panes"], travel["max"]) == (4, 2, 4)
    # per driver: driver 1 has a run of 3 Travel between Request and Pickup, driver 2 a run of 1
    burst = one("burst", query="slow", event_type="Travel")
    assert (burst["runs"], burst["events"], burst["max"]) == (2, 4, 3)
    # Travel.speed < 10 holds for 2 of 4 Travel events
    sel = one("selectivity", query="slow", variable="Travel", predicate="ALL")
    assert (sel["matched"], sel["events"]) == (2, 4)

    stats = latest_statistics(lake.root, "rides")
    assert stats is not None and stats["range_start"].startswith("2026-01-01T00:00")


EXTRA_QUERIES = """
QUERY all_travels
RETURN COUNT(*)
PATTERN SEQ(Request, Travel+)
WITHIN 30 minutes;

QUERY district_travels
RETURN district, COUNT(*)
PATTERN SEQ(Request, Travel+, Dropoff)
WHERE [district]
GROUP-BY district
WITHIN 30 minutes;
"""


def test_stats_of_a_workload_with_many_burst_partitionings_equal_the_arrow_function(tmp_path, spark) -> None:
    """Burst runs of every spec (partitioned by an integer key, a string key, or not at all)
    come out of one Spark query; they must equal the Arrow function's spec by spec."""
    from trendlake.jobs.statistics import make_spec
    from trendlake.schemas import workload_path

    from tests.integration.sample import trip_rows

    schema = load_stream_schema("rides")
    workload = tmp_path / "many.etq"
    workload.write_text(workload_path("sample_rides.etq").read_text() + "\n" + EXTRA_QUERIES)
    rows = trip_rows(150, seed=11, hours=12.0)
    for row in rows:
        row["ts"] = datetime.strptime(row["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    rows.sort(key=lambda r: r["ts"])
    table = pa.Table.from_pylist(rows)
    table = table.append_column("seq", pa.array(range(len(rows)), pa.int64()))
    lake = lakelib.Lake(tmp_path / "lake")
    lake.write(
        "bronze/rides", as_bronze(table, schema, first_seq=0, source_file="gen", source_checksum="gen")
    )
    start, end = DAY, DAY.replace(hour=12)

    partitionings = {b.partition_by for b in make_spec(schema, workload).bursts}
    assert {("driver",), ("district",), ()} <= partitionings
    plain = compute_stats(table, schema, workload, start=start, end=end)
    run_stats(lake.root, "rides", workload, start, end, spark=spark)
    runs = read_runs(lake.root, "rides").to_pylist()
    assert comparable(runs) == comparable(plain)
    assert sum(r["kind"] == "burst" for r in plain) >= len(partitionings)
    # partitions counted per partitioning of the workload, each with some partitions
    counted = {r["partition_by"] for r in plain if r["kind"] == "partitions" and r["event_type"] is None and r["groups"]}
    assert len(counted) == len({p for p in partitionings if p}) >= 3
