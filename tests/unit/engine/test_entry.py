"""The engine's one entry: its inputs (tables, record batches, rows), the strategy
registry's choice, and its errors."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.errors import EngineError, EventFileError, StrategyError
from trendlake.engine.events import make_events

from tests.randomized import event_rows, workloads
from tests.unit.engine.test_differential import rows_equal
from trendlake import engine, optimizer

KLEENE = "QUERY q\nRETURN g, COUNT(*)\nPATTERN SEQ(A, B+)\nGROUP-BY g\nWITHIN 10 seconds;"
NEXT_NEG = (
    "QUERY q\nRETURN COUNT(*)\nPATTERN SEQ(A, NOT N, B)\n"
    "SEMANTICS skip-till-next-match\nWITHIN 10 seconds;"
)


def plan_of(text: str) -> engine.Plan:
    return engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))


ROWS = [
    {"type": "A", "ts": 1, "g": 0},
    {"type": "B", "ts": 2, "g": 0},
    {"type": "A", "ts": 2, "g": 1},
    {"type": "B", "ts": 3, "g": 0},
    {"type": "B", "ts": 4, "g": 1},
]


def test_rows_batches_and_table_agree() -> None:
    plan = plan_of(KLEENE)
    table = engine.table_from_rows(ROWS)
    want = engine.evaluate(plan, table)
    assert [(r["g"], r["COUNT(*)"]) for r in want] == [(0, 3), (1, 1)]
    assert engine.evaluate(plan, table.to_batches(max_chunksize=2)) == want
    assert engine.evaluate(plan, iter(table.to_batches(max_chunksize=1))) == want
    assert engine.evaluate(plan, pa.RecordBatchReader.from_batches(table.schema, table.to_batches())) == want
    assert engine.evaluate(plan, []) == []


@settings(deadline=None, max_examples=30)
@given(text=workloads(max_queries=1), rows=event_rows(), size=st.integers(1, 4))
def test_batches_equal_the_table(text: str, rows: list[dict], size: int) -> None:
    plan = plan_of(text)
    table = engine.table_from_rows(rows)
    want = engine.evaluate(plan, table)
    assert rows_equal(engine.evaluate(plan, table.to_batches(max_chunksize=size)), want)


def test_arrow_timestamps_equal_microsecond_integers() -> None:
    plan = plan_of(KLEENE)
    table = engine.table_from_rows(ROWS)
    stamps = pa.array(
        [dt.datetime.fromtimestamp(t / 1e6, dt.UTC) for t in table.column("ts").to_pylist()],
        pa.timestamp("us", tz="UTC"),
    )
    timed = table.set_column(table.column_names.index("ts"), "ts", stamps)
    assert engine.evaluate(plan, timed) == engine.evaluate(plan, table)


def test_auto_chooses_by_granularity_and_support() -> None:
    kleene = plan_of(KLEENE).queries["q"]
    assert kleene.granularity == "type"
    assert engine.choose(kleene).name == "cogra"
    next_neg = plan_of(NEXT_NEG).queries["q"]
    assert engine.STRATEGIES["cogra"].supports(next_neg) is not None
    assert engine.choose(next_neg).name == "greta"
    assert engine.choose(next_neg, "twostep").name == "twostep"


def test_a_named_strategy_that_cannot_run_a_query_says_why() -> None:
    plan = plan_of(NEXT_NEG)
    with pytest.raises(engine.Unsupported, match="event-grained"):
        engine.evaluate(plan, engine.table_from_rows(ROWS), strategy="cogra")


def test_unknown_strategy_is_an_engine_error() -> None:
    with pytest.raises(StrategyError, match="unknown strategy 'fast'"):
        engine.evaluate(plan_of(KLEENE), engine.table_from_rows(ROWS), strategy="fast")


def test_bad_inputs_get_one_line_errors() -> None:
    plan = plan_of(KLEENE)
    with pytest.raises(EventFileError, match="several kinds"):
        engine.table_from_rows([{"type": "A", "ts": 1, "g": 1}, {"type": "B", "ts": 2, "g": "x"}])
    with pytest.raises(EventFileError, match="row 1: missing column 'ts'"):
        engine.table_from_rows([{"type": "A"}])
    with pytest.raises(EventFileError, match="no 'type' column"):
        engine.evaluate(plan, pa.table({"ts": [1]}))
    with pytest.raises(EventFileError, match="ts has missing values"):
        engine.evaluate(plan, pa.table({"type": ["A"], "ts": pa.array([None], pa.int64())}))
    with pytest.raises(EngineError, match="plan has no query 'nope'"):
        engine.evaluate(plan, engine.table_from_rows(ROWS), queries=["nope"])
    with pytest.raises(TypeError, match="table_from_events"):
        engine.evaluate(plan, make_events(ROWS))


def test_events_round_trip_through_a_table() -> None:
    events = make_events(ROWS)
    table = engine.table_from_events(events)
    assert table.column("ts").to_pylist() == [e.ts for e in events]
    assert engine.evaluate(plan_of(KLEENE), table) == engine.evaluate(
        plan_of(KLEENE), engine.table_from_rows(ROWS)
    )


@pytest.mark.parametrize("strategy", ["auto", "twostep", "greta", "cogra"])
@pytest.mark.parametrize("fn", ["SUM", "AVG"])
@pytest.mark.parametrize("values", [["a", "b", "c"], [True, False, True]], ids=["text", "bool"])
def test_sum_and_avg_of_values_that_are_not_numbers_are_refused(strategy: str, fn: str, values: list) -> None:
    plan = plan_of(f"QUERY q\nRETURN COUNT(*), {fn}(B.x)\nPATTERN SEQ(A, B+)\nWITHIN 10 seconds;")
    table = pa.table({"type": ["A", "B", "B"], "ts": pa.array([1, 2, 3], pa.int64()), "x": values})
    with pytest.raises(EventFileError, match=rf"query q: {fn}\(B\.x\): attribute 'x' holds .* not numbers"):
        engine.evaluate(plan, table, strategy=strategy)


def test_min_and_max_of_text_compare_as_text() -> None:
    plan = plan_of("QUERY q\nRETURN COUNT(*), MIN(B.x), MAX(B.x)\nPATTERN SEQ(A, B+)\nWITHIN 10 seconds;")
    table = pa.table({"type": ["A", "B", "B"], "ts": pa.array([1, 2, 3], pa.int64()), "x": ["a", "c", "b"]})
    (row,) = engine.evaluate(plan, table)
    assert (row["COUNT(*)"], row["MIN(B.x)"], row["MAX(B.x)"]) == (3, "b", "c")
