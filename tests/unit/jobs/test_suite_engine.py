"""Which Great Expectations engine checks an ingest batch (``jobs.quality``), without GE."""

from __future__ import annotations

import pytest
from trendlake.jobs.errors import JobError
from trendlake.jobs.quality import PANDAS_ROWS, pandas_rows, suite_columns, suite_for_stream
from trendlake.schemas import load_stream_schema


@pytest.mark.parametrize(("value", "rows"), [(None, PANDAS_ROWS), ("", PANDAS_ROWS), (" 250 ", 250), ("0", 0)])
def test_the_pandas_row_limit_comes_from_the_environment(monkeypatch, value, rows) -> None:
    if value is None:
        monkeypatch.delenv("TRENDLAKE_SUITE_PANDAS_ROWS", raising=False)
    else:
        monkeypatch.setenv("TRENDLAKE_SUITE_PANDAS_ROWS", value)
    assert pandas_rows() == rows


@pytest.mark.parametrize("value", ["many", "1e5", "10.5"])
def test_a_limit_that_is_no_whole_number_is_an_error_naming_the_variable(monkeypatch, value) -> None:
    monkeypatch.setenv("TRENDLAKE_SUITE_PANDAS_ROWS", value)
    with pytest.raises(JobError, match=f"TRENDLAKE_SUITE_PANDAS_ROWS must be a whole number of rows, not '{value}'"):
        pandas_rows()


def test_the_columns_collected_for_the_suite_are_the_ones_it_reads() -> None:
    rides = load_stream_schema("rides")
    suite = suite_for_stream(rides)
    columns = suite_columns(suite)
    assert columns[:4] == ["type", "ts", "seq", "event_date"]
    assert len(columns) == len(set(columns))
    assert set(columns) == {e["kwargs"]["column"] for e in suite["expectations"]}
    assert set(columns) <= {"type", "ts", "seq", "event_date", *rides["attributes"]}
    compound = {"name": "s", "expectations": [
        {"type": "expect_compound_columns_to_be_unique", "kwargs": {"column_list": ["a", "b"]}, "meta": {}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "b"}, "meta": {}},
    ]}
    assert suite_columns(compound) == ["a", "b"]
