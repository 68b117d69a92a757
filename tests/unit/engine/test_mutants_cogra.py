"""COGRA's columnar entry (engine/strategies/cogra) on the dissertation's published numbers.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). The entry takes a partition's
columns in any order (it sorts them stably by time) and COGRA queries of every
granularity; the expected numbers are Figure 2.3's (43 / 8 / 2 trends
under any / next / contiguous), Figure 2.4's aggregates and Example 11.1's
13 trends with ``NOT SEQ(C, D)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from trendlake.engine.results import finalize
from trendlake.engine.strategies import cogra

from tests.unit.engine.engine_adapter import window_results
from tests.unit.engine.handplans import SECOND, fig_2_3_query
from tests.unit.engine.test_greta import FIG_2_3, FIG_11_1, compiled, only
from tests.unit.engine.test_worked_examples import FIG_2_4_AGGS, FIG_2_4_WANT, fig_11_1_negation


def columns(text: str) -> tuple[np.ndarray, np.ndarray]:
    words = text.split()
    return (np.array([w[0].upper() for w in words]),
            np.array([int(w[1:]) * SECOND for w in words], dtype=np.int64))


def final(spec, results) -> dict:
    query = compiled(spec)
    return {k: finalize(query, r) for k, r in results.items()}


# the rows of Figure 2.4 in an order that is not by time, though its first row is the earliest
ORDER = [0, 4, 2, 1, 3]


def test_columns_out_of_time_order_are_sorted_first() -> None:
    spec = fig_2_3_query(aggregates=FIG_2_4_AGGS, required={"A": ["attr"]})
    types = np.array(["A", "B", "A", "A", "B"])[ORDER]
    ts = (np.array([1, 2, 3, 4, 7]) * SECOND)[ORDER]
    attr = np.array([5, np.nan, 6, 4, np.nan])[ORDER]
    assert ts.tolist() != sorted(ts.tolist()) and ts[0] == ts.min()
    got = window_results(spec, types, ts, {"attr": attr})
    assert only(final(spec, got)) == FIG_2_4_WANT


@pytest.mark.parametrize(("semantics", "trends"), [
    ("skip-till-any-match", 43), ("skip-till-next-match", 8), ("contiguous", 2)])
def test_every_granularity_through_the_columns(semantics: str, trends: int) -> None:
    spec = fig_2_3_query(semantics)
    types, ts = columns(FIG_2_3)
    assert only(final(spec, window_results(spec, types, ts)))["COUNT(*)"] == trends
    # the same columns, not in time order
    perm = np.array([0, 7, 3, 1, 6, 2, 5, 4])
    got = window_results(spec, types[perm], ts[perm])
    assert only(final(spec, got))["COUNT(*)"] == trends


def test_negation_through_the_columns() -> None:
    spec = fig_11_1_negation()
    assert cogra.granularity_of(compiled(spec)) == "type" and not cogra.columnar(compiled(spec))
    types, ts = columns(FIG_11_1)
    assert only(final(spec, window_results(spec, types, ts)))["COUNT(*)"] == 13


@pytest.mark.parametrize("strategy", ["auto", "cogra", "greta", "twostep"])
def test_integers_beyond_int64_and_sums_beyond_it_are_exact(strategy: str) -> None:
    """Integers are exact (DESIGN): an unsigned column past 2**63 and sums past 2**63."""
    import pyarrow as pa

    from trendlake import engine, optimizer

    text = "QUERY q RETURN COUNT(*), SUM(A.x), MAX(A.x), MIN(A.x) PATTERN SEQ(A, B) WITHIN 100 seconds;"
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    ts = pa.array([1, 2, 3, 4], pa.int64())
    for kind, xs, want in (
        # three trends (a, b4): SUM = the three values, MAX / MIN among them
        (pa.uint64(), [2**63 + 5, 2**63 + 1, 7], (2**64 + 13, 2**63 + 5, 7)),
        (pa.int64(), [2**62, 2**62, 2**62], (3 * 2**62, 2**62, 2**62)),
        (pa.uint64(), [3, 100, 7], (110, 100, 3)),
    ):
        table = pa.table({"type": ["A", "A", "A", "B"], "ts": pa.compute.multiply(ts, SECOND),
                          "x": pa.array([*xs, 0], kind)})
        (row,) = engine.evaluate(plan, table, strategy=strategy)
        assert row["COUNT(*)"] == 3
        assert (row["SUM(A.x)"], row["MAX(A.x)"], row["MIN(A.x)"]) == want


@pytest.mark.parametrize("xs", [[0.5, 1.5, None], [1, 2.5, None], [2, 4, None]])
def test_a_large_partition_with_float_or_mixed_values(xs: list) -> None:
    """Past SMALL_PARTITION events the type-grained kernel runs on prepared columns: the
    aggregates of 18 A events (x cycling through ``xs``, None missing) before one B.
    All floats, integers and floats mixed, all integers."""
    from trendlake.engine.columns import Event

    from trendlake import engine, optimizer

    text = ("QUERY q RETURN COUNT(*), SUM(A.x), MIN(A.x), MAX(A.x) PATTERN SEQ(A, B) "
            "WITHIN 100 seconds;")
    query = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text))).queries["q"]
    values = [xs[i % 3] for i in range(18)]
    events = [Event((i + 1) * SECOND, i, "A", {"x": v}) for i, v in enumerate(values)]
    events.append(Event(30 * SECOND, 18, "B", {}))
    assert len(events) > cogra.SMALL_PARTITION
    (row,) = [finalize(query, r) for r in cogra.run(query, events).values()]
    present = [v for v in values if v is not None]
    # an A without x does not match A (plan-format: x is a required attribute, the
    # aggregates read it): the 12 others pair with the B
    assert row["COUNT(*)"] == 12
    assert row["SUM(A.x)"] == pytest.approx(6 * sum(x for x in xs if x is not None))
    assert (row["MIN(A.x)"], row["MAX(A.x)"]) == (min(present), max(present))
