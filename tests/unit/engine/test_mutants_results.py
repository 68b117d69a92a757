"""Plans read from JSON text, as ``trendlake eval`` reads them, give the published numbers.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). Plans built in the test process hold
the optimizer's own string constants, so code comparing names by identity
(``fn is "avg"``) passes there and fails on a plan read from a file; here
every plan and strategy name comes from parsed text. Expected values:
Figure 2.3 (43 / 8 / 2 trends under any / next / contiguous) and Figure 2.4
(COUNT(*) 11, COUNT(A) 20, MIN 4, MAX 6, SUM 100, AVG 5).
"""

from __future__ import annotations

import json

import pytest
from trendlake.engine.results import finalize

from tests.unit.engine.handplans import fig_2_3_query, plan_of
from tests.unit.engine.test_greta import FIG_2_3, only, stream
from tests.unit.engine.test_worked_examples import FIG_2_4_AGGS, FIG_2_4_WANT, fig_2_4_events
from trendlake import engine


def from_text(spec: dict) -> engine.Plan:
    return engine.load_plan(json.loads(json.dumps(plan_of(spec))))


def final(spec: dict, strategy: str, events=None) -> dict:
    plan = from_text(spec)
    events = stream(FIG_2_3) if events is None else events
    partials = engine.evaluate_partials(plan, engine.table_from_events(events), strategy=strategy)
    query = plan.queries[spec["name"]]
    return only({k: finalize(query, r) for (_, k), r in partials[spec["name"]].items()})


STRATEGY_NAMES = json.loads('["auto", "greta", "cogra", "twostep"]')  # not the engine's constants


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_fig_2_4_aggregates_of_a_plan_read_from_text(strategy: str) -> None:
    spec = fig_2_3_query(aggregates=FIG_2_4_AGGS, required={"A": ["attr"]})
    assert final(spec, strategy, fig_2_4_events()) == FIG_2_4_WANT


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_fig_2_3_semantics_of_a_plan_read_from_text(strategy: str) -> None:
    for semantics, trends in (("skip-till-any-match", 43), ("skip-till-next-match", 8), ("contiguous", 2)):
        assert final(fig_2_3_query(semantics), strategy)["COUNT(*)"] == trends


def test_is_equal_compares_a_float_with_overflow_or_none_by_identity() -> None:
    """OVERFLOW or None next to a float is equal only to itself (never 'close')."""
    from trendlake.engine.results import OVERFLOW, is_equal

    assert not is_equal(1.0, OVERFLOW) and not is_equal(OVERFLOW, 2.5)
    assert not is_equal(None, 0.0) and not is_equal(0.0, None)
    assert is_equal(1.0, 1.0 + 1e-12) and not is_equal(1.0, 1.1)
    # a float next to an int is compared relatively too (not exactly): 1e20 vs 10**20 + 1
    assert is_equal(1e20, 10**20 + 1) and is_equal(10**20 + 1, 1e20)
