"""Integration tests on real Spark (local[2]) and real Delta tables (delta-rs).

One SparkSession serves the whole test session (``jobs.spark.get_spark``
returns the active one), and the small landing files every ingest test uses
are written here.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from trendlake.schemas import load_stream_schema


@pytest.fixture(scope="session")
def rides() -> dict:
    return load_stream_schema("rides")


# Raw rows of the three landing files: (row, expected quarantine reason or None).
CSV_HEADER = "type,ts,driver,rider,district,duration,speed,price,passengers\n"
CSV_ROWS = [
    ("Request,2026-01-01T08:00:00Z,1,10,north,,,12.5,2", None),
    ("Travel,2026-01-01T08:01:00Z,1,10,north,60,8.5,,", None),
    ("Travel,1767254520,1,10,north,60,7.5,,", None),  # epoch seconds = 08:02:00Z
    ("Teleport,2026-01-01T08:03:00Z,1,10,north,,,,", "unknown event type 'Teleport'"),
    ("Travel,yesterday,1,10,north,60,7.0,,", "unparseable timestamp 'yesterday'"),
    ("Travel,2026-01-01T08:04:00Z,1,10,,60,7.0,,", "missing required attribute 'district'"),
    ("Travel,2026-01-01T08:05:00Z,1,10,north,60,fast,,", "attribute 'speed' is not a double: 'fast'"),
    ("Travel,2026-01-01T08:06:00Z,-3,10,north,60,7.0,,", "attribute 'driver' = -3 below min 0"),
    ("Request,2026-01-01T08:07:00Z,2,11,south,,,9.0,12", "attribute 'passengers' = 12 above max 9"),
    ("Dropoff,2026-01-01T10:00:00+02:00,1,10,north,600,,30.0,", None),  # 08:00Z
]
JSONL_ROWS = [
    ({"type": "Request", "ts": "2026-01-02T09:00:00Z", "driver": 3, "rider": 12, "district": "center", "price": 20}, None),
    ({"type": "Cancel", "ts": "2026-01-02T09:05:00Z", "driver": 3, "rider": 12, "district": "center", "status": "rider"}, None),
    ({"type": "Cancel", "ts": "2026-01-02T09:06:00Z", "driver": 3, "rider": 12, "district": "center", "status": "alien"},
     "attribute 'status' = 'alien' not in allowed values ['rider', 'driver', 'system']"),
    ({"type": "Travel", "ts": "2026-01-02T09:07:00Z", "driver": 3, "rider": 12, "district": "center", "duration": 5},
     "missing required attribute 'speed'"),
    ({"type": "Travel", "ts": "2026-01-02T09:08:00Z", "driver": 3.5, "rider": 12, "district": "center", "duration": 5, "speed": 3},
     "attribute 'driver' is not a long: '3.5'"),
    ("{not json", "malformed JSON line (not a JSON object)"),
    ({"ts": "2026-01-02T09:09:00Z", "driver": 3, "rider": 12, "district": "center"}, "missing event type"),
    ({"type": "Complaint", "ts": "2026-01-02T09:10:00Z", "driver": 3, "rider": 12, "district": "center", "reason": "late"}, None),
]
PARQUET_ROWS = [
    ({"type": "Pickup", "ts": "2026-01-03T07:00:00Z", "driver": 4, "rider": 13, "district": "harbor", "duration": None, "speed": None}, None),
    ({"type": "Travel", "ts": "2026-01-03T07:01:00Z", "driver": 4, "rider": 13, "district": "harbor", "duration": 30.0, "speed": 12.0}, None),
    ({"type": "Travel", "ts": None, "driver": 4, "rider": 13, "district": "harbor", "duration": 30.0, "speed": 12.0}, "missing timestamp"),
    ({"type": "Travel", "ts": "2026-01-03T07:02:00Z", "driver": 4, "rider": 13, "district": "harbor", "duration": None, "speed": -1.0},
     "missing required attribute 'duration'"),
]


def expected_reasons() -> dict[tuple[str, int], str | None]:
    """(file, 1-based line or Parquet row) -> quarantine reason (None = good row)."""
    out: dict[tuple[str, int], str | None] = {}
    for i, (_, reason) in enumerate(CSV_ROWS):
        out[("a_trips.csv", i + 2)] = reason  # line 1 is the header
    for i, (_, reason) in enumerate(JSONL_ROWS):
        out[("b_trips.jsonl", i + 1)] = reason
    for i, (_, reason) in enumerate(PARQUET_ROWS):
        out[("c_trips.parquet", i + 1)] = reason
    return out


def write_landing(folder: Path) -> Path:
    """The three landing files (CSV, JSON lines, Parquet) with good and bad rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a_trips.csv").write_text(CSV_HEADER + "".join(r + "\n" for r, _ in CSV_ROWS))
    (folder / "b_trips.jsonl").write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r, _ in JSONL_ROWS)
    )
    rows = [r for r, _ in PARQUET_ROWS]
    table = pa.table({
        "type": pa.array([r["type"] for r in rows]),
        "ts": pa.array(  # a typed timestamp column, as Parquet producers write it
            [None if r["ts"] is None else datetime.fromisoformat(r["ts"].replace("Z", "+00:00")) for r in rows],
            pa.timestamp("us", tz="UTC"),
        ),
        "driver": pa.array([r["driver"] for r in rows], pa.int64()),
        "rider": pa.array([r["rider"] for r in rows], pa.int64()),
        "district": pa.array([r["district"] for r in rows]),
        "duration": pa.array([r["duration"] for r in rows], pa.float64()),
        "speed": pa.array([r["speed"] for r in rows], pa.float64()),
    })
    pq.write_table(table, folder / "c_trips.parquet")
    return folder
