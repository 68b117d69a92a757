"""Result-table column names: the alias, else a plain SQL name derived from the aggregate."""

import pytest
from trendlake.jobs.replay import ReplayError, result_columns

from trendlake import optimizer


def columns(text: str) -> dict[str, str]:
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    return result_columns(plan["queries"][0])


def test_aliases_are_kept_and_other_aggregates_get_plain_names() -> None:
    got = columns(
        "QUERY q RETURN district, COUNT(*), COUNT(Travel), SUM(Travel.duration) AS total, AVG(Travel.speed) "
        "PATTERN SEQ(Request, Travel+) GROUP-BY district WITHIN 10 minutes;"
    )
    assert got == {
        "COUNT(*)": "count",
        "COUNT(Travel)": "count_travel",
        "total": "total",
        "AVG(Travel.speed)": "avg_travel_speed",
    }


def test_a_derived_name_that_clashes_is_refused_with_a_hint() -> None:
    with pytest.raises(ReplayError, match=r"COUNT\(\*\) maps to result column 'count'.*alias with AS"):
        columns("QUERY q RETURN COUNT(Travel) AS count, COUNT(*) PATTERN SEQ(Request, Travel+) WITHIN 10 minutes;")
