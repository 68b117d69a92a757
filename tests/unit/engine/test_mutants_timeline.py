"""Time in the engine (engine/timeline.py): time stamps, windows, panes and key runs.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). Expected values are worked out by hand
from the module's rules: µs UTC time stamps from ISO-8601 text, epoch seconds
(int or fraction) or datetimes; windows ``[k*slide, k*slide + within)``; panes
cut at every window start and end; a key run per partition of a sorted table,
a null next to a value (or two nulls) separating runs.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pyarrow as pa
import pytest
from trendlake.engine.timeline import (
    format_ts,
    key_runs,
    panes,
    parse_ts,
    window_bounds,
    window_range,
)


@pytest.mark.parametrize(
    ("value", "us"),
    [
        (0, 0),
        (3, 3_000_000),
        (1.5, 1_500_000),
        (0.000001, 1),
        (-2.25, -2_250_000),
        ("7", 7_000_000),
        ("2.5", 2_500_000),
        ("1970-01-01T00:00:01Z", 1_000_000),
        ("1970-01-01T00:00:01z", 1_000_000),
        ("1970-01-02T00:00:00.000003Z", 86_400_000_003),
        ("1970-01-01T01:00:00+01:00", 0),
        ("2026-01-01T00:30:00Z", 1_767_227_400_000_000),
        (datetime(1970, 1, 1, 0, 0, 2, 5), 2_000_005),
        (datetime(1970, 1, 3, 0, 0, 1, tzinfo=UTC), 2 * 86_400_000_000 + 1_000_000),
        (datetime(1970, 1, 1, 2, 0, 0, 7, tzinfo=timezone(timedelta(hours=2))), 7),
        (datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC), -1),
    ],
)
def test_parse_ts_in_microseconds(value, us: int) -> None:
    assert parse_ts(value) == us


@pytest.mark.parametrize("bad", [True, float("inf"), float("nan"), "yesterday", "", None, [1]])
def test_parse_ts_refuses(bad) -> None:
    with pytest.raises(ValueError, match="not a timestamp"):
        parse_ts(bad)


@pytest.mark.parametrize(
    ("us", "text"),
    [
        (0, "1970-01-01T00:00:00Z"),
        (1_767_227_400_000_000, "2026-01-01T00:30:00Z"),
        (1_767_227_400_000_250, "2026-01-01T00:30:00.000250Z"),
    ],
)
def test_format_ts_is_iso_utc_and_parses_back(us: int, text: str) -> None:
    assert format_ts(us) == text
    assert parse_ts(text) == us


def test_windows_containing_a_time_stamp() -> None:
    # within 10, slide 4: windows [0,10) [4,14) [8,18) [12,22) ...
    assert list(window_range(9, 10, 4)) == [0, 1, 2]
    assert list(window_range(10, 10, 4)) == [1, 2]  # the end of window 0 is outside it
    assert list(window_range(12, 10, 4)) == [1, 2, 3]
    assert list(window_range(3, 10, 10)) == [0]
    assert window_bounds(3, 10, 4) == (12, 22)


def test_panes_cut_at_every_window_start_and_end() -> None:
    # within 10, slide 4: starts 0, 4, 8, ...; ends 10, 14, 18, ... -> cuts at 0 2 4 6 8 10 ...
    # (within % slide = 2): pane 2q for [4q, 4q+2), 2q+1 for [4q+2, 4q+4)
    ts = np.array([0, 1, 2, 3, 4, 9, 10, 13, 14])
    assert panes(ts, 10, 4).tolist() == [0, 0, 1, 1, 2, 4, 5, 6, 7]
    # tumbling: one pane per window
    assert panes(np.array([0, 9, 10, 25]), 10, 10).tolist() == [0, 0, 1, 2]


def test_key_runs_start_at_every_change_and_at_nulls() -> None:
    table = pa.table({"g": ["a", "a", "b", None, None, "b"], "h": [1, 1, 1, 1, 1, 2]})
    assert key_runs(table, ["g"]).tolist() == [True, False, True, True, True, True]
    assert key_runs(table, ["h"]).tolist() == [True, False, False, False, False, True]
    assert key_runs(table, []).tolist() == [True, False, False, False, False, False]
    assert key_runs(table.slice(0, 2), ["g"]).tolist() == [True, False]
    assert key_runs(table.slice(1, 2), ["g"]).tolist() == [True, True]
    assert key_runs(table.slice(4, 2), ["g", "h"]).tolist() == [True, True]
    assert key_runs(table.slice(2, 1), ["g"]).tolist() == [True]
    assert key_runs(table.slice(0, 0), ["g"]).tolist() == []
