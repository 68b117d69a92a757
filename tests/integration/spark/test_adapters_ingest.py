"""Adapters (trendlake.datagen.adapters) end to end: a small file in each real format -> adapt -> ingest on Spark -> bronze.

Each source has one row the adapter cannot convert; it is skipped and reported,
every other row reaches bronze (nothing is quarantined), with the values the
source had.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from trendlake.datagen.adapters import adapt
from trendlake.jobs.ingest import ingest
from trendlake.jobs.lake import Lake
from trendlake.schemas import load_stream_schema

pytestmark = pytest.mark.spark


def _tlc(path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    D = datetime
    pq.write_table(pa.table({  # the columns and types of a 2024 yellow-taxi file (local New York times)
        "VendorID": pa.array([1, 2, 2], pa.int32()),
        "tpep_pickup_datetime": pa.array([D(2024, 1, 1, 0, 5), D(2024, 1, 1, 0, 10), D(2024, 1, 1, 0, 20)], pa.timestamp("us")),
        "tpep_dropoff_datetime": pa.array([D(2024, 1, 1, 0, 15), D(2024, 1, 1, 0, 31), D(2024, 1, 1, 0, 10)], pa.timestamp("us")),
        "passenger_count": pa.array([1.0, 0.0, 2.0]),
        "trip_distance": pa.array([1.5, 3.2, 0.4]),
        "RatecodeID": pa.array([1.0, 1.0, 1.0]),
        "store_and_fwd_flag": pa.array(["N", "N", "N"]),
        "PULocationID": pa.array([161, 132, 48], pa.int32()),
        "DOLocationID": pa.array([236, 265, 68], pa.int32()),
        "payment_type": pa.array([1, 2, 1], pa.int64()),
        "fare_amount": pa.array([10.0, 45.7, 5.0]),
        "total_amount": pa.array([15.0, 60.0, 8.0]),
    }), path)


SOURCES = {  # kind, options, stream, file name, writer or text, rows converted, events, skip reason
    "tlc": ("tlc", {}, "rides", "yellow_tripdata_2024-01.parquet", _tlc, 2, 6, "dropoff before pickup"),
    "tlc_zones": ("tlc", {"mode": "zones"}, "taxi_zones", "yellow_tripdata_2024-01.parquet", _tlc, 2, 2,
                  "dropoff before pickup"),
    "debs2014": ("debs2014", {}, "smart_home", "sorted.csv",
                 "0,1377986401,68.451,0,0,0,0\n1,1377986401,19.927,1,0,0,0\n2,1377986402,lots,1,1,0,0\n"
                 "3,1377986403,22.1,1,2,1,3\n", 3, 3, "value is not a number"),
    "ohlcv": ("ohlcv", {"sector": "tech"}, "stocks", "aapl.us.txt",
              "Date,Open,High,Low,Close,Volume,OpenInt\n1984-09-07,0.42388,0.42902,0.41874,0.42388,23220030,0\n"
              "1984-09-10,0.42388,0.42516,0.41366,0.42134,18022532,0\n1984-09-11,0.4,0.43,0.42,null,4249,0\n",
              2, 2, "missing Close"),
    "dublin_bus": ("dublin_bus", {}, "bus", "siri.20130101.csv",
                   "1357000000000000,27,0,00270001,2012-12-31,3493,SL,0,-6.258078,53.339279,0,27001,33142,null,0\n"
                   "1357000001000000,null,0,null,2012-12-31,5466,PO,0,-6.240711,53.348961,-180,40107,33254,4340,1\n"
                   "1357000002000000,40,0,00400001,2012-12-31,5466,PO,1,-6.24,53.34,100000,40107,33254,4340,0\n"
                   "1357000003000000,40,0,00400001,2012-12-31,5466,PO,1,-6.24,53.34,12,40107,33254,4340,0\n",
                   3, 3, "attribute 'delay' above max 86400"),
}
OUT_FORMAT = {"tlc": "parquet", "tlc_zones": "csv", "debs2014": "csv", "ohlcv": "jsonl", "dublin_bus": "parquet"}


@pytest.fixture(scope="module")
def adapted(tmp_path_factory, spark) -> dict:
    """Every source adapted into its own landing folder and ingested into one lake."""
    root = tmp_path_factory.mktemp("adapters")
    out = {}
    for name, (kind, options, stream, filename, content, *_rest) in SOURCES.items():
        src = root / "downloads" / name / filename
        src.parent.mkdir(parents=True)
        content(src) if callable(content) else src.write_text(content)
        landing = root / "landing" / name
        report = adapt(kind, src, landing / f"{name}.{OUT_FORMAT[name]}", **options)
        ingested = ingest(root / f"lake_{name}", load_stream_schema(stream), landing, spark=spark)
        bronze = Lake(root / f"lake_{name}").read_arrow(f"bronze/{stream}").sort_by("seq").to_pylist()
        out[name] = (report, ingested, bronze)
    return out


@pytest.mark.parametrize("name", list(SOURCES))
def test_every_adapted_row_reaches_bronze_and_the_bad_row_is_reported(adapted, name) -> None:
    report, ingested, bronze = adapted[name]
    *_, converted, events, reason = SOURCES[name]
    assert report.rows_read == converted + 1 == report.rows_converted + report.rows_skipped
    assert (report.rows_converted, report.rows_skipped, report.rows_written) == (converted, 1, events)
    assert dict(report.skipped) == {reason: 1}
    assert ingested.rows_read == ingested.rows_good == events and ingested.rows_bad == 0
    assert len(bronze) == events


def _utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_tlc_trips_become_request_pickup_dropoff_in_utc(adapted) -> None:
    report, _, bronze = adapted["tlc"]
    assert report.examples == {"dropoff before pickup": [3]}
    first = [r for r in bronze if r["driver"] == 1]
    assert [r["type"] for r in first] == ["Request", "Pickup", "Dropoff"]
    assert [r["ts"] for r in first] == [_utc(2024, 1, 1, 5, 5)] * 2 + [_utc(2024, 1, 1, 5, 15)]  # EST = UTC-5
    drop = first[2]
    assert (drop["duration"], drop["price"], drop["distance"]) == (600.0, 10.0, round(1.5 * 1.609344, 3))
    assert (drop["pickup_zone"], drop["dropoff_zone"], drop["vendor"], drop["district"]) == (161, 236, "CMT", "Z161")
    assert first[0]["passengers"] == 1 and drop["passengers"] is None  # Dropoff does not carry passengers
    second = [r for r in bronze if r["driver"] == 2]
    assert second[0]["passengers"] is None, "TLC's 0 passengers means unknown"


def test_tlc_zones_mode_types_trips_by_pickup_zone(adapted) -> None:
    _, _, bronze = adapted["tlc_zones"]
    assert [(r["type"], r["trip"], r["vendor"], r["dropoff_zone"], r["passengers"]) for r in bronze] == [
        ("Z161", 1, 1, 236, 1), ("Z132", 2, 2, 265, 0)]
    assert bronze[1]["duration"] == 1260.0 and bronze[1]["price"] == 45.7


def test_debs_readings_become_work_and_load(adapted) -> None:
    report, _, bronze = adapted["debs2014"]
    assert report.examples == {"value is not a number": [3]}
    assert [(r["type"], r["work"], r["load"], r["reading"]) for r in bronze[:2]] == [
        ("Work", 68.451, None, 0), ("Load", None, 19.927, 1)]
    last = bronze[2]
    assert (last["house"], last["household"], last["plug"], last["ts"]) == (3, 1, 2, _utc(2013, 8, 31, 22, 0, 3))


def test_ohlcv_bars_become_trades(adapted) -> None:
    report, _, bronze = adapted["ohlcv"]
    assert report.examples == {"missing Close": [4]}  # line 4: the header is line 1
    first = bronze[0]
    assert (first["type"], first["company"], first["sector"], first["ts"]) == ("Trade", "AAPL", "tech", _utc(1984, 9, 7))
    assert (first["open"], first["high"], first["low"], first["price"], first["volume"]) == (
        0.42388, 0.42902, 0.41874, 0.42388, 23220030)


def test_dublin_bus_records_keep_their_flags_and_nulls(adapted) -> None:
    report, _, bronze = adapted["dublin_bus"]
    assert report.examples == {"attribute 'delay' above max 86400": [3]}
    assert [r["type"] for r in bronze] == ["Moving", "AtStop", "Congested"]
    moving, at_stop, congested = bronze
    assert moving["ts"] == datetime.fromtimestamp(1357000000, UTC) and moving["stop"] is None
    assert (moving["vehicle"], moving["line"], moving["journey"], moving["journey_pattern"]) == (33142, "27", 3493, "00270001")
    assert (at_stop["line"], at_stop["delay"], at_stop["at_stop"], at_stop["lon"]) == (None, -180, True, -6.240711)
    assert congested["congestion"] is True and congested["delay"] == 12
