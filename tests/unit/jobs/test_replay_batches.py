"""The executor side of replay without Spark: sorted Arrow batches in, partial rows out.

Spark hands ``mapInArrow`` a partition as batches of its own size; a key's
rows may straddle any batch boundary, and ``evaluate_sorted_batches`` cuts its
chunks where a key starts. Whatever the batch and chunk sizes, finishing the
partial rows must give ``engine.evaluate`` on the same events.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.results import is_equal
from trendlake.jobs import replay

from trendlake import engine, optimizer

WORKLOAD = """
QUERY by_driver
RETURN driver, COUNT(*), SUM(Travel.duration)
PATTERN SEQ(Request, Travel+, Dropoff)
WHERE [driver]
GROUP-BY driver
WITHIN 10 seconds SLIDE 5 seconds;

QUERY by_district
RETURN district, COUNT(*), MAX(Travel.duration)
PATTERN SEQ(Request, Travel+)
WHERE [driver] AND Travel.duration > 2
GROUP-BY district
WITHIN 10 seconds;

QUERY everything
RETURN COUNT(*)
PATTERN SEQ(Request, NOT Cancel, Dropoff)
WITHIN 20 seconds;
"""

TYPES = ["Request", "Travel", "Dropoff", "Cancel", "Idle"]


def events_table(seed: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = np.sort(rng.integers(0, 60, n)) * 1_000_000
    return pa.table({
        "type": pa.array(rng.choice(TYPES, n)),
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "seq": pa.array(np.arange(n)),
        "driver": pa.array(rng.integers(0, 4, n)),
        "district": pa.array(rng.choice(["north", "south"], n)),
        "duration": pa.array(rng.integers(0, 6, n).astype(float)),
    })


def run_batches(plan_raw: dict, table: pa.Table, batch_rows: int, start: int, end: int) -> list[dict]:
    compiled = engine.load_plan(plan_raw)
    by_key: dict[tuple, list[str]] = {}
    for name, q in compiled.queries.items():
        by_key.setdefault(q.partition_by, []).append(name)
    partial = []
    for keys, names in by_key.items():
        order = [(k, "ascending") for k in keys] + [("ts", "ascending"), ("seq", "ascending")]
        batches = table.sort_by(order).to_batches(max_chunksize=batch_rows)
        for out in replay.evaluate_sorted_batches(plan_raw, names, list(keys), iter(batches), start, end):
            partial.extend(out.to_pylist())
    finished = replay.finish_rows(compiled, partial)
    return [row for name in compiled.queries for row in finished[name]]


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 120), batch_rows=st.integers(1, 30),
       chunk_rows=st.integers(1, 50))
def test_sorted_batches_equal_engine_evaluate(seed: int, n: int, batch_rows: int, chunk_rows: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(replay, "CHUNK_ROWS", chunk_rows)
        check_batches(seed, n, batch_rows)


def check_batches(seed: int, n: int, batch_rows: int) -> None:
    plan_raw = optimizer.build_plan(optimizer.compile_workload(WORKLOAD))
    table = events_table(seed, n)
    start, end = -1, 10**9
    want = engine.evaluate(plan_raw, table, strategy="greta")  # row-based, per partition
    got = run_batches(plan_raw, table, batch_rows, start, end)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.keys() == w.keys() and all(is_equal(g[k], w[k]) for k in g), (g, w)


def test_interval_keeps_only_windows_ending_inside() -> None:
    plan_raw = optimizer.build_plan(optimizer.compile_workload(WORKLOAD))
    table = events_table(7, 200)
    start, end = 20_000_000, 40_000_000
    want = [r for r in engine.evaluate(plan_raw, table, strategy="greta") if start < r["window_end"] <= end]
    got = run_batches(plan_raw, table, 16, start, end)
    assert want and [(r["query"], r["window_start"]) for r in got] == [
        (r["query"], r["window_start"]) for r in want
    ]
