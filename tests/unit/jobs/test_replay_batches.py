"""The executor side of replay without Spark: sorted Arrow batches in, partial rows out.

Spark hands ``mapInArrow`` a partition as batches of its own size; a key's
rows may straddle any batch boundary, and ``evaluate_sorted_batches`` cuts its
chunks where a key starts. Whatever the batch and chunk sizes, finishing the
partial rows must give ``engine.evaluate`` on the same events.
"""

from __future__ import annotations

import copy

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


# events lie in [0 s, 60 s); windows end between 5 s and 80 s: the interval (25 s, 45 s]
# drops windows on both sides of it
START, END = 25_000_000, 45_000_000


def assert_same_rows(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        assert g.keys() == w.keys() and all(is_equal(g[k], w[k]) for k in g), (g, w)


def check_batches(seed: int, n: int, batch_rows: int) -> None:
    plan_raw = optimizer.build_plan(optimizer.compile_workload(WORKLOAD))
    table = events_table(seed, n)
    every = engine.evaluate(plan_raw, table, strategy="greta")
    want = [r for r in every if START < r["window_end"] <= END]
    assert_same_rows(run_batches(plan_raw, table, batch_rows, START, END), want)


def test_interval_keeps_only_windows_ending_inside() -> None:
    plan_raw = optimizer.build_plan(optimizer.compile_workload(WORKLOAD))
    table = events_table(7, 200)
    every = engine.evaluate(plan_raw, table, strategy="greta")
    want = [r for r in every if START < r["window_end"] <= END]
    # the interval filters: rows of windows ending before it and after it exist and are dropped
    assert any(r["window_end"] <= START for r in every) and any(r["window_end"] > END for r in every)
    assert {r["query"] for r in want} == {"by_driver", "by_district", "everything"}
    assert_same_rows(run_batches(plan_raw, table, 16, START, END), want)


def test_compiled_plan_cache_follows_the_plan_content() -> None:
    """Executors keep compiled plans between tasks (Python workers are reused across jobs of a
    session); a plan that differs in content under the same id must not get the old one."""
    plan = optimizer.build_plan(optimizer.compile_workload(WORKLOAD), planner="none")
    assert replay.compiled_plan(plan).queries["by_driver"].within == 10_000_000
    edited = copy.deepcopy(plan)
    edited["queries"][0]["window"] = {"within_us": 20_000_000, "slide_us": 5_000_000}
    assert edited["plan_id"] == plan["plan_id"]
    assert replay.compiled_plan(edited).queries["by_driver"].within == 20_000_000
    assert replay.compiled_plan(plan) is replay.compiled_plan(copy.deepcopy(plan))  # still cached
