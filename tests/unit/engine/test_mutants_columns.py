"""Event columns and partitions (engine/columns.py, engine/events.py) by their documented rules.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). Expected values are worked out here
from the rows written by hand: the (ts, seq) order, the NULL rule (None, NaN
and empty text are missing), the exact-integer range of the vectorized
predicates (|v| < 2**53, where float64 still holds every integer), and
DESIGN's partitioning (an event lacking a partition value is in no partition).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from trendlake.engine.columns import Columns, events_from_rows
from trendlake.engine.errors import EventFileError
from trendlake.engine.events import make_events, partition


def cols(**columns) -> Columns:
    n = len(columns["ts"])
    columns.setdefault("type", ["A"] * n)
    return Columns(pa.table(columns))


@pytest.mark.parametrize(
    ("ts", "seq", "ordered"),
    [
        ([1, 2, 2, 3], None, True),  # row order breaks ties
        ([1, 3, 2], None, False),
        ([5, 5, 5], None, True),
        ([1, 2, 3], None, True),
        ([1, 1, 2], [0, 1, 2], True),
        ([1, 1, 2], [1, 0, 2], False),  # a tie broken backwards by seq
        ([2, 1], [0, 1], False),  # the first pair out of order
        ([1, 2, 2], [5, 7, 6], False),  # the last pair: a tie broken backwards
        ([1, 2, 3], [9, 3, 1], True),  # seq only breaks ties
        ([7], None, True),
    ],
)
def test_time_ordered_is_the_ts_seq_order(ts, seq, ordered) -> None:
    table = {"ts": pa.array(ts, pa.int64())}
    if seq is not None:
        table["seq"] = pa.array(seq, pa.int64())
    c = cols(**table)
    assert c.time_ordered() is ordered
    assert c.time_ordered() is ordered  # cached, same answer


def test_numeric_is_values_and_presence_within_2_53() -> None:
    c = cols(ts=pa.array([1, 2, 3, 4], pa.int64()),
             x=pa.array([5, None, -7, None], pa.int64()),
             big=pa.array([2**53, None, 1, 2], pa.int64()),
             edge=pa.array([2**53 - 1, None, -(2**53 - 1), 0], pa.int64()),
             neg=pa.array([-(2**53), None, 0, 0], pa.int64()),
             full=pa.array([1, 2, 3, 4], pa.int64()),
             f=pa.array([1.5, None, 2.0, 3.0], pa.float64()))
    values, present = c.numeric("x")
    assert values.tolist() == [5, 0, -7, 0]
    assert present.tolist() == [True, False, True, False]
    values, present = c.numeric("edge")
    assert values.tolist() == [2**53 - 1, 0, -(2**53 - 1), 0]
    assert present.tolist() == [True, False, True, True]
    assert c.numeric("big") is None  # 2**53 is past the exact range
    assert c.numeric("neg") is None
    assert c.numeric("full") is None  # no missing values: the plain array serves
    assert c.numeric("f") is None


def test_array_is_numbers_for_complete_numeric_columns_objects_otherwise() -> None:
    c = cols(ts=pa.array([1, 2, 3], pa.int64()),
             i=pa.array([1, 2, 3], pa.int64()),
             gaps=pa.array([1, None, 3], pa.int64()),
             f=pa.array([0.5, None, 2.5], pa.float64()),
             s=pa.array(["a", "b", None], pa.string()))
    assert c.array("i").dtype.kind == "i" and c.array("i").tolist() == [1, 2, 3]
    assert c.array("gaps").dtype == object and c.array("gaps").tolist() == [1, None, 3]
    f = c.array("f")
    assert f.dtype.kind == "f" and f[0] == 0.5 and math.isnan(f[1]) and f[2] == 2.5
    assert c.array("s").dtype == object and c.array("s").tolist() == ["a", "b", None]


def test_present_is_the_null_rule() -> None:
    c = cols(ts=pa.array([1, 2, 3, 4], pa.int64()),
             s=pa.array(["a", "", None, "d"], pa.string()),
             f=pa.array([1.0, float("nan"), None, -0.0], pa.float64()),
             i=pa.array([0, None, 2, 3], pa.int64()))
    assert c.present("s").tolist() == [True, False, False, True]
    assert c.present("f").tolist() == [True, False, False, True]
    assert c.present("i").tolist() == [True, False, True, True]
    assert c.present("nowhere").tolist() == [False] * 4


def test_type_masks_by_name() -> None:
    c = cols(ts=pa.array([1, 2, 3, 4], pa.int64()), type=["A", "B", "A", "C"])
    types = c.types()
    assert types.mask("A").tolist() == [True, False, True, False]
    assert types.mask("C").tolist() == [False, False, False, True]
    assert types.mask("Z").tolist() == [False] * 4


def test_a_row_error_names_the_row_from_1() -> None:
    rows = [{"type": "A", "ts": 1}, {"type": "B", "ts": 2}, {"type": "", "ts": 3}]
    with pytest.raises(EventFileError, match=r"<rows>: row 3: empty event type"):
        events_from_rows(rows)
    rows = [{"type": "A", "ts": 1}, {"type": None, "ts": 2}]
    with pytest.raises(EventFileError, match=r"<rows>: row 2: empty event type"):
        events_from_rows(rows)
    with pytest.raises(EventFileError, match=r"here: row 2: missing column 'ts'"):
        events_from_rows([{"type": "A", "ts": 1}, {"type": "A"}], "here")
    with pytest.raises(EventFileError, match=r"row 2: not a timestamp"):
        events_from_rows([{"type": "A", "ts": 1}, {"type": "A", "ts": "yesterday"}])


def test_partition_drops_only_the_events_lacking_a_value() -> None:
    events = make_events([
        {"type": "A", "ts": 1, "g": 1, "h": "x"},
        {"type": "B", "ts": 2, "g": None, "h": "x"},  # no g: in no partition
        {"type": "C", "ts": 3, "g": 2, "h": "x"},
        {"type": "D", "ts": 4, "g": 1, "h": ""},  # empty text is missing
        {"type": "E", "ts": 5, "g": 1, "h": "x"},
    ])
    parts = partition(events, ("g", "h"))
    assert {k: [e.type for e in v] for k, v in parts.items()} == {(1, "x"): ["A", "E"], (2, "x"): ["C"]}
    assert {k: [e.type for e in v] for k, v in partition(events, ()).items()} == {(): ["A", "B", "C", "D", "E"]}


def test_events_from_rows_sorts_by_ts_then_seq() -> None:
    events = events_from_rows([
        {"type": "A", "ts": 2, "seq": 1},
        {"type": "B", "ts": 1},
        {"type": "C", "ts": 2, "seq": 0},
    ])
    assert [(e.type, e.ts, e.seq) for e in events] == [("B", 1_000_000, 1), ("C", 2_000_000, 0), ("A", 2_000_000, 1)]
    assert np.array_equal([e.ts for e in events], sorted(e.ts for e in events))
