"""The order of a query's result rows (``executor.finish_query``): by group, numbers before
anything else (in their order), other values by their text, then by window; every row once.
(A group column holds one type, so no two groups are equal as values but of other types:
the floats drawn are not whole.)"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.executor import finish_query
from trendlake.engine.results import WindowResult
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan

from trendlake import engine

TEXT = "QUERY q RETURN g, h, COUNT(*) PATTERN SEQ(A, B+) GROUP-BY g, h WITHIN 10 seconds SLIDE 5 seconds;"
VALUES = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.5]), st.sampled_from(["a", "B", "10", "2"]),
                   st.none())


def _rank(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, (int, float)) else (1, str(v))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES, st.integers(-5, 40), st.integers(0, 3)), max_size=40))
def test_rows_are_ordered_by_group_then_window(cells: list[tuple[Any, Any, int, int]]) -> None:
    query = engine.load_plan(build_plan(parse_workload(TEXT))).queries["q"]
    partials = {((g, h), k): WindowResult(n) for g, h, k, n in cells}
    rows = finish_query(query, partials)
    kept = [key for key, r in partials.items() if r.trends]
    assert len(rows) == len(kept)
    got = [((r["g"], r["h"]), r["window_start"] // 5_000_000) for r in rows]
    assert sorted(got, key=lambda gk: (tuple(_rank(v) for v in gk[0]), gk[1])) == got
    assert set(map(repr, got)) == set(map(repr, kept))
    for r in rows:
        assert r["query"] == "q" and r["window_end"] - r["window_start"] == 10_000_000
        assert r["COUNT(*)"] == partials[((r["g"], r["h"]), r["window_start"] // 5_000_000)].trends
