"""Seeded output is stable: the same seed gives the bytes it gave when the digests were recorded.

The digests below were computed from the single-module generators
(``datagen/streams.py``, ``adapters.py``, ``workloads.py``) before they were
split into packages, so this test holds the package layout to the old
output: every stream model, every adapter and every workload kind. A digest
is the first 16 hex digits of the SHA-256 of the CSV or JSON-lines file
(streams, adapters) or of the workload text. If a change to a model is meant
to change its output, record the new digest in the same commit and say why.

Run ``python tests/unit/datagen/test_seeded_output.py`` to print the
current digests.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest

STREAM_CASES: dict[str, tuple[str, int, int, dict]] = {  # case -> (stream, events, seed, kwargs)
    "rides": ("rides", 3000, 7, {}),
    "rides_params": ("rides", 2000, 3, {"drivers": 50, "riders": 80, "burst": 2.0, "rate_per_second": 40.0,
                                         "mix": {"Travel": 8.0, "Cancel": 0.5}}),
    "stocks": ("stocks", 3000, 7, {"companies": 12}),
    "linear_road": ("linear_road", 3000, 7, {}),
    "smart_home": ("smart_home", 3000, 7, {}),
    "ecommerce": ("ecommerce", 3000, 7, {}),
    "cluster": ("cluster", 3000, 7, {}),
    "bus": ("bus", 3000, 7, {"start": "2025-06-01T08:00:00+02:00"}),
    "taxi_zones": ("taxi_zones", 3000, 7, {}),
}



def _tlc(path: Path) -> None:
    """A 2024 yellow-taxi file's columns and types (local New York times), one trip ending before it starts."""
    from datetime import datetime as D

    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({
        "VendorID": pa.array([1, 2, 2, 7], pa.int32()),
        "tpep_pickup_datetime": pa.array([D(2024, 1, 1, 0, 5), D(2024, 1, 1, 0, 10), D(2024, 1, 1, 0, 20),
                                          D(2024, 3, 10, 1, 50)], pa.timestamp("us")),
        "tpep_dropoff_datetime": pa.array([D(2024, 1, 1, 0, 15), D(2024, 1, 1, 0, 31), D(2024, 1, 1, 0, 10),
                                           D(2024, 3, 10, 3, 5)], pa.timestamp("us")),
        "passenger_count": pa.array([1.0, 0.0, 2.0, None]),
        "trip_distance": pa.array([1.5, 3.2, 0.4, 7.25]),
        "PULocationID": pa.array([161, 132, 48, 1], pa.int32()),
        "DOLocationID": pa.array([236, 265, 68, 138], pa.int32()),
        "payment_type": pa.array([1, 2, 1, 3], pa.int64()),
        "fare_amount": pa.array([10.0, 45.7, 5.0, 30.2]),
        "total_amount": pa.array([15.0, 60.0, 8.0, 35.5]),
    }), path)


ADAPTER_CASES: dict[str, tuple[str, str, Any, dict]] = {  # case -> (kind, file name, content, options)
    "tlc": ("tlc", "yellow_tripdata_2024-01.parquet", _tlc, {}),
    "tlc_zones": ("tlc", "yellow_tripdata_2024-01.parquet", _tlc, {"mode": "zones"}),
    "debs2014": ("debs2014", "sorted.csv",
                 "0,1377986401,68.451,0,0,0,0\n1,1377986401,19.927,1,0,0,0\n2,1377986402,lots,1,1,0,0\n"
                 "3,1377986403,22.1,1,2,1,3\n", {}),
    "ohlcv": ("ohlcv", "aapl.us.txt",
              "Date,Open,High,Low,Close,Volume,OpenInt\n1984-09-07,0.42388,0.42902,0.41874,0.42388,23220030,0\n"
              "1984-09-10,0.42388,0.42516,0.41366,0.42134,18022532,0\n1984-09-11,0.4,0.43,0.42,null,4249,0\n",
              {"sector": "tech"}),
    "ohlcv_minutes": ("ohlcv", "msft.csv",
                      "2024-01-02,09:30,370.1,371.0,369.9,370.5,1200\n2024-01-02,09:31,370.5,370.9,370.2,370.3,800\n",
                      {"timezone": "America/New_York"}),
    "dublin_bus": ("dublin_bus", "siri.20130101.csv",
                   "1357000000000000,27,0,00270001,2012-12-31,3493,SL,0,-6.258078,53.339279,0,27001,33142,null,0\n"
                   "1357000001000000,null,0,null,2012-12-31,5466,PO,0,-6.240711,53.348961,-180,40107,33254,4340,1\n"
                   "1357000002000000,40,0,00400001,2012-12-31,5466,PO,1,-6.24,53.34,100000,40107,33254,4340,0\n"
                   "1357000003000000,40,0,00400001,2012-12-31,5466,PO,1,-6.24,53.34,12,40107,33254,4340,0\n", {}),
}

WORKLOAD_CASES: dict[str, tuple[str, int, int, str, dict]] = {  # case -> (kind, queries, seed, stream, params)
    "hamlet-shared": ("hamlet-shared", 8, 3, "rides", {}),
    "hamlet-shared-diff": ("hamlet-shared", 8, 4, "stocks", {"same_predicates": False}),
    "hamlet-diverse": ("hamlet-diverse", 12, 5, "rides", {}),
    "hamlet-typed": ("hamlet-typed", 9, 5, "stocks", {}),
    "hamlet-diverse-cluster": ("hamlet-diverse", 12, 6, "cluster", {}),
    "sharon-traffic": ("sharon-traffic", 10, 1, "linear_road", {}),
    "sharon-ecommerce": ("sharon-ecommerce", 10, 2, "ecommerce", {"length": 5}),
    "gloria-seq": ("gloria-seq", 10, 3, "bus", {"window_powers": "1,2,3"}),
    "gloria-kleene": ("gloria-kleene", 8, 4, "rides", {"kleene_length": 5, "nesting": 3}),
    "gloria-mixed": ("gloria-mixed", 14, 5, "smart_home", {"kleene_ratio": "1:2", "kleene_length": 2}),
    "weaveshare": ("weaveshare", 12, 6, "rides", {"max_overlap": 4.5, "slides": 5}),
}

DIGESTS = {
    "stream:rides": "4fe46267f83cb28f",
    "stream:rides_params": "e4f88815c6997ae7",
    "stream:stocks": "77e2dec5df3cadb4",
    "stream:linear_road": "c1397df0479b75f3",
    "stream:smart_home": "ff558bde89e77ddc",
    "stream:ecommerce": "5f535aaaeb0c6312",
    "stream:cluster": "0c0a06080f18969e",
    "stream:bus": "d19daeec74ca6746",
    "stream:taxi_zones": "ebf56f9e6f9e7916",
    "adapter:tlc": "7f958e962b388167",
    "adapter:tlc_zones": "1cd1354e7e089fa4",
    "adapter:debs2014": "88ff1aa6ce2be5b2",
    "adapter:ohlcv": "442721dadc2b0011",
    "adapter:ohlcv_minutes": "c1cdf635c0c3afde",
    "adapter:dublin_bus": "d540ca4b3fd6ff99",
    "workload:hamlet-shared": "955e325e46c5b056",
    "workload:hamlet-shared-diff": "52e7532af2604b88",
    "workload:hamlet-diverse": "356681f15fef2935",
    "workload:hamlet-typed": "7502f5d2771c92c8",
    "workload:hamlet-diverse-cluster": "0b7d99160443ef12",
    "workload:sharon-traffic": "c33ecb431edcac2b",
    "workload:sharon-ecommerce": "0973556496e23da8",
    "workload:gloria-seq": "b07e2f9ddf4c47b8",
    "workload:gloria-kleene": "c4f50f018bd3fb79",
    "workload:gloria-mixed": "544adfd712ef9fb2",
    "workload:weaveshare": "0a24ea6badbce538",
}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def stream_digest(case: str, tmp: Path) -> str:
    from trendlake.datagen.streams import write_events

    stream, events, seed, kwargs = STREAM_CASES[case]
    csv = write_events(stream, tmp / f"{case}.csv", events, seed, chunk_size=700, **kwargs)
    jsonl = write_events(stream, tmp / f"{case}.jsonl", events, seed, **kwargs)
    return _digest(csv.read_bytes() + b"\0" + jsonl.read_bytes())


def adapter_digest(case: str, tmp: Path) -> str:
    from trendlake.datagen.adapters import adapt

    kind, name, content, options = ADAPTER_CASES[case]
    src = tmp / case / name
    src.parent.mkdir(parents=True, exist_ok=True)
    content(src) if callable(content) else src.write_text(content)
    report = adapt(kind, src, tmp / case / "out.jsonl", **options)
    counts = f"{report.rows_read} {report.rows_converted} {report.rows_skipped} {report.rows_written} "
    reasons = repr(sorted(report.skipped.items())) + repr(sorted(report.examples.items()))
    return _digest((tmp / case / "out.jsonl").read_bytes() + (counts + reasons).encode())


def workload_digest(case: str) -> str:
    from trendlake.datagen.workloads import generate_workload

    kind, queries, seed, stream, params = WORKLOAD_CASES[case]
    return _digest(generate_workload(kind, queries, seed, stream, **params).encode())


@pytest.mark.parametrize("case", list(STREAM_CASES))
def test_stream_output_is_what_it_was(case: str, tmp_path: Path) -> None:
    assert stream_digest(case, tmp_path) == DIGESTS[f"stream:{case}"]


@pytest.mark.parametrize("case", list(ADAPTER_CASES))
def test_adapter_output_is_what_it_was(case: str, tmp_path: Path) -> None:
    assert adapter_digest(case, tmp_path) == DIGESTS[f"adapter:{case}"]


@pytest.mark.parametrize("case", list(WORKLOAD_CASES))
def test_workload_text_is_what_it_was(case: str) -> None:
    assert workload_digest(case) == DIGESTS[f"workload:{case}"]


def test_every_stream_model_adapter_and_workload_kind_is_covered() -> None:
    from trendlake.datagen.adapters import ADAPTERS
    from trendlake.datagen.streams import STREAMS
    from trendlake.datagen.workloads import KINDS

    assert {s for s, *_ in STREAM_CASES.values()} == set(STREAMS)
    assert {k for k, *_ in ADAPTER_CASES.values()} == set(ADAPTERS)
    assert {k for k, *_ in WORKLOAD_CASES.values()} == set(KINDS)


if __name__ == "__main__":  # print the current digests (to record an intended change)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for c in STREAM_CASES:
            print(f'    "stream:{c}": "{stream_digest(c, root)}",')
        for c in ADAPTER_CASES:
            print(f'    "adapter:{c}": "{adapter_digest(c, root)}",')
        for c in WORKLOAD_CASES:
            print(f'    "workload:{c}": "{workload_digest(c)}",')
    sys.exit(0)
