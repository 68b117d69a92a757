"""The one entry (``engine.evaluate_partials``, what replay's executors run) checked
against strategies run by hand, partition by partition, on ``Event`` lists.

The entry prunes partitions that cannot hold a trend, drops events no variable
matches, evaluates local predicates vectorized and runs COGRA's kernel over
all partitions in one pass; none of that may change a result. The by-hand side
splits the events with ``engine.events.partition`` and runs the two-step
reference (small streams) or GRETA (larger ones) on each partition.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.events import make_events, partition
from trendlake.engine.executor import evaluate_partials, mandatory_variables
from trendlake.engine.results import merge_into
from trendlake.engine.strategies import cogra, greta, reference

from tests.randomized import event_rows, once, workloads
from tests.unit.engine.test_differential import rows_equal
from trendlake import engine, optimizer


def as_table(rows: list[dict]) -> pa.Table:
    """The rows as an Arrow table (the one rows -> table helper)."""
    return engine.table_from_rows(rows, attributes=("x", "y", "g", "h"))


def finished(plan: engine.Plan, partials: dict) -> list[dict]:
    return engine.finish(plan, partials)


def by_hand(plan: engine.Plan, rows: list[dict], run) -> list[dict]:
    """Every query's rows: ``run`` per partition of the event list, states merged per group."""
    events = make_events(rows)
    out = []
    for query in plan.queries.values():
        partials: dict = {}
        positions = [query.partition_by.index(g) for g in query.group_by]
        for key, part in partition(events, query.partition_by).items():
            for k, result in run(query, part).items():
                if result.trends:
                    merge_into(partials, (tuple(key[i] for i in positions), k), result)
        out.extend(engine.finish_query(query, partials))
    return out


STRATEGIES = ("auto", "cogra", "greta")


def compare(text: str, rows: list[dict], strategies: tuple[str, ...], table: pa.Table, sorted_by=None) -> None:
    """Each strategy's run of the entry against GRETA by hand (computed once for all)."""
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    want = by_hand(plan, rows, greta.run)
    for strategy in strategies:
        if strategy == "cogra" and any(cogra.supports(q) for q in plan.queries.values()):
            with pytest.raises(engine.Unsupported):
                evaluate_partials(plan, table, strategy=strategy, sorted_by=sorted_by)
            continue
        got = finished(plan, engine.evaluate_partials(plan, table, strategy=strategy, sorted_by=sorted_by))
        assert rows_equal(got, want), f"{strategy}\n{text}\n{rows}\ngot  {got}\nwant {want}"


@st.composite
def small_partitioned_rows(draw: st.DrawFn) -> list[dict]:
    """Few events (the reference enumerates every trend), partition attributes mostly present."""
    rows = draw(event_rows(max_events=12))
    for row in rows:
        if "g" not in row and draw(once.integers(0, 3)):
            row["g"] = draw(once.integers(0, 1))
    return rows


@settings(deadline=None)
@given(text=workloads(), rows=small_partitioned_rows(), seed=st.integers(0, 2**16))
def test_columnar_entry_equals_two_step_reference(text: str, rows: list[dict], seed: int) -> None:
    """The columnar path of each strategy against the reference directly (not through the
    entry), every strategy on the same case."""
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    table = as_table(shuffled)
    want = by_hand(plan, rows, reference.run)
    for strategy in STRATEGIES:
        if strategy == "cogra" and any(cogra.supports(q) for q in plan.queries.values()):
            with pytest.raises(engine.Unsupported):
                engine.evaluate(plan, table, strategy=strategy)
            continue
        got = engine.evaluate(plan, table, strategy=strategy)
        assert rows_equal(got, want), f"{strategy}\n{text}\n{rows}\ngot  {got}\nwant {want}"


@st.composite
def partitioned_rows(draw: st.DrawFn) -> list[dict]:
    """Event rows whose partition attributes are mostly present (several partitions)."""
    rows = draw(event_rows(max_events=24))
    for row in rows:
        if "g" not in row and draw(once.integers(0, 3)):
            row["g"] = draw(once.integers(0, 2))
        if "h" not in row and draw(once.integers(0, 3)):
            row["h"] = draw(once.sampled_from(("p", "q")))
    return rows


@settings(deadline=None)
@given(text=workloads(), rows=partitioned_rows(), seed=st.integers(0, 2**16))
def test_entry_equals_greta_by_hand(text: str, rows: list[dict], seed: int) -> None:
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)  # the table need not be in any order
    compare(text, rows, STRATEGIES, as_table(shuffled))


@settings(deadline=None)
@given(text=workloads(max_queries=1), rows=partitioned_rows())
def test_presorted_table_equals_greta_by_hand(text: str, rows: list[dict]) -> None:
    """Rows already in (key, ts, seq) order, as replay's sorted Spark partitions arrive."""
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    keys = next(iter(plan.queries.values())).partition_by
    table = as_table(rows)
    order = [(k, "ascending") for k in keys] + [("ts", "ascending"), ("seq", "ascending")]
    compare(text, rows, ("auto",), table.sort_by(order), sorted_by=keys)


def test_missing_partition_values_are_in_no_partition() -> None:
    """Null, empty text and NaN key values: no partition (as ``engine.events.partition``)."""
    text = "QUERY q\nRETURN k, COUNT(*)\nPATTERN SEQ(A, B)\nGROUP-BY k\nWITHIN 10 seconds;"
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    for values in (["a", "a", None, "", "a", "b"], [1.0, 1.0, None, math.nan, 1.0, 2.0]):
        table = pa.table({
            "type": ["A", "B", "A", "A", "B", "B"],
            "ts": [1_000_000 * t for t in (1, 2, 3, 4, 5, 6)],
            "k": values,
        })
        rows = table.to_pylist()
        for r in rows:
            r["ts"] //= 1_000_000
        want = by_hand(plan, rows, greta.run)
        got = finished(plan, evaluate_partials(plan, table))
        assert rows_equal(got, want)
        assert [(r["k"], r["COUNT(*)"]) for r in got] == [(values[0], 2)]  # (a1, b2), (a1, b5)


def test_presorted_promise_is_checked() -> None:
    text = "QUERY q\nRETURN k, COUNT(*)\nPATTERN SEQ(A, B)\nGROUP-BY k\nWITHIN 10 seconds;"
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    table = pa.table({"type": ["A", "B"], "ts": [2_000_000, 1_000_000], "k": ["a", "a"]})
    with pytest.raises(ValueError, match="not sorted"):
        evaluate_partials(plan, table, sorted_by=["k"])


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("SEQ(A, B+, C)", {"A", "B", "C"}),
        ("SEQ(A+, SEQ(B, C)+)", {"A", "B", "C"}),
        ("A+", {"A"}),
    ],
)
def test_mandatory_variables(pattern: str, expected: set[str]) -> None:
    text = f"QUERY q\nRETURN COUNT(*)\nPATTERN {pattern}\nWITHIN 10 seconds;"
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    assert mandatory_variables(plan.queries["q"]) == expected


def test_mandatory_variables_of_a_template_with_a_bypass() -> None:
    """A template (as a sharing planner may write) where B can be skipped: A -> B -> C and A -> C."""
    text = "QUERY q\nRETURN COUNT(*)\nPATTERN SEQ(A, B, C)\nWITHIN 10 seconds;"
    raw = optimizer.build_plan(optimizer.compile_workload(text))
    raw["queries"][0]["template"]["transitions"].append({"from": "A", "to": "C"})
    plan = engine.load_plan(raw)
    assert mandatory_variables(plan.queries["q"]) == {"A", "C"}


def test_partitions_meeting_at_one_time_stamp_stay_apart() -> None:
    """Key a ends and key b starts at the same time stamp: the kernel must not see one group."""
    text = "QUERY q\nRETURN k, COUNT(*), COUNT(A)\nPATTERN SEQ(A+, B)\nGROUP-BY k\nWITHIN 10 seconds;"
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    table = pa.table({
        "type": ["A", "A", "B", "A", "B"],
        "ts": [1_000_000 * t for t in (1, 2, 5, 5, 6)],
        "k": ["a", "a", "a", "b", "b"],
    })
    got = finished(plan, evaluate_partials(plan, table, strategy="cogra", sorted_by=["k"]))
    assert [(r["k"], r["COUNT(*)"], r["COUNT(A)"]) for r in got] == [("a", 3, 4), ("b", 1, 1)]


@st.composite
def crowded_rows(draw: st.DrawFn) -> list[dict]:
    """Many events on few time stamps: bursts of one Kleene variable and mixed types at one
    time stamp (the columnar kernel's simultaneous steps), in a few partitions."""
    n = draw(once.integers(1, 40))
    stamps = draw(once.integers(1, 5))
    rows = []
    for i in range(n):
        row = {"type": draw(once.sampled_from(("A", "B", "C", "D"))), "ts": draw(once.integers(0, stamps)),
               "seq": i, "g": draw(once.integers(0, 1))}
        for attr in ("x", "y"):
            if draw(once.integers(0, 5)):
                row[attr] = draw(once.integers(-2, 3))
        rows.append(row)
    rows.sort(key=lambda r: (r["ts"], r["seq"]))
    return rows


CROWDED = [
    "QUERY q RETURN COUNT(*), SUM(B.x), AVG(B.x) PATTERN SEQ(A, B+, C) WITHIN 4 seconds SLIDE 2 seconds;",
    "QUERY q RETURN g, COUNT(*), COUNT(B), MIN(B.x), MAX(A.y) PATTERN SEQ(A+, B+) GROUP-BY g WITHIN 3 seconds;",
    "QUERY q RETURN COUNT(*), SUM(A.x), SUM(C.y) PATTERN SEQ(A, B, C+) WHERE A.x > 0 WITHIN 5 seconds SLIDE 1 seconds;",
    "QUERY q RETURN COUNT(*) PATTERN SEQ(A+, B)+ WITHIN 5 seconds;",
    "QUERY q RETURN g, COUNT(*), SUM(B.y) PATTERN SEQ(A, B+, C+, D) GROUP-BY g WITHIN 6 seconds SLIDE 3 seconds;",
]


@pytest.mark.parametrize("text", CROWDED)
@settings(deadline=None, max_examples=60)
@given(rows=crowded_rows())
def test_many_events_per_time_stamp_equal_the_two_step_reference(text: str, rows: list[dict]) -> None:
    """The columnar path with COGRA's kernel against the reference (no shared code path)."""
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    want = by_hand(plan, rows, reference.run)
    got = finished(plan, evaluate_partials(plan, as_table(rows), strategy="auto"))
    assert rows_equal(got, want), f"{text}\n{rows}\ngot  {got}\nwant {want}"


@settings(deadline=None)
@given(sizes=st.lists(st.integers(1, 6), min_size=0, max_size=12), size=st.integers(1, 10), data=st.data())
def test_partition_chunks_cover_and_never_split(sizes: list[int], size: int, data: st.DataObject) -> None:
    from trendlake.engine.timeline import partition_chunks

    kid = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)  # a key set's rows
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64) if sizes else np.zeros(0, np.int64)
    kept = data.draw(once.lists(once.booleans(), min_size=len(kid), max_size=len(kid)))
    idx = np.flatnonzero(np.asarray(kept, dtype=bool)).astype(np.int32)  # the rows visited
    part_of = kid[idx]
    chunks = partition_chunks(idx, starts, size)
    assert [lo for lo, _ in chunks] == ([0, *[hi for _, hi in chunks[:-1]]] if chunks else [])
    assert (chunks[-1][1] if chunks else 0) == len(part_of)
    for lo, hi in chunks:
        assert hi > lo
        assert hi == len(part_of) or part_of[hi - 1] != part_of[hi]
        # as long as ``size``, or up to the end of the partition the size ends in
        assert hi - lo <= size or part_of[lo + size - 1] == part_of[hi - 1]


def test_kernel_chunks_do_not_change_results(monkeypatch) -> None:
    from trendlake.engine import timeline
    from trendlake.engine.strategies.cogra import kernel

    rng = random.Random(5)
    rows = [{"type": rng.choice("ABC"), "ts": i // 3, "seq": i, "g": rng.randint(0, 6), "x": rng.randint(0, 4)}
            for i in range(400)]
    text = "QUERY q RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, B+, C) GROUP-BY g WITHIN 20 seconds SLIDE 10 seconds;"
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    whole = finished(plan, evaluate_partials(plan, as_table(rows)))
    monkeypatch.setattr(timeline, "KERNEL_CHUNK", 7)
    monkeypatch.setattr(kernel, "COMPILED", False)  # chunks are the Python kernel's
    chunked = finished(plan, evaluate_partials(plan, as_table(rows)))
    want = by_hand(plan, rows, reference.run)
    assert rows_equal(whole, want) and rows_equal(chunked, want)
