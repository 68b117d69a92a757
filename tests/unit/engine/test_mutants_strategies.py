"""Choosing a strategy (engine/strategies/__init__.py) by the rules of docs/engine.md.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). ``auto`` takes COGRA where the plan's
granularity is coarse (type, mixed, pattern) and COGRA supports the query,
else GRETA; a named strategy must exist and support the query; any other
name is refused, whatever its spelling.
"""

from __future__ import annotations

import pytest
from trendlake.engine.errors import StrategyError

from trendlake import engine, optimizer


def compiled(pattern: str, semantics: str = "skip-till-any-match", where: str = ""):
    text = f"QUERY q RETURN COUNT(*) PATTERN {pattern} SEMANTICS {semantics} {where} WITHIN 10 seconds;"
    return engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text))).queries["q"]


def test_auto_takes_cogra_for_coarse_queries_and_greta_otherwise() -> None:
    assert engine.strategy_for(compiled("SEQ(A, B+)"), "auto") == "cogra"  # type-grained
    assert engine.strategy_for(compiled("SEQ(A, B+)", "contiguous"), "auto") == "cogra"  # pattern-grained
    neg_next = compiled("SEQ(A, NOT C, B)", "skip-till-next-match")  # event-grained
    assert neg_next.granularity == "event"
    assert engine.strategy_for(neg_next, "auto") == "greta"


@pytest.mark.parametrize("name", ["twostep", "greta", "cogra"])
def test_a_named_strategy_is_itself(name: str) -> None:
    assert engine.strategy_for(compiled("SEQ(A, B+)"), name) == name
    assert engine.choose(compiled("SEQ(A, B+)"), name) is engine.STRATEGIES[name]


def test_a_named_strategy_that_cannot_run_the_query_says_why() -> None:
    neg_next = compiled("SEQ(A, NOT C, B)", "skip-till-next-match")
    with pytest.raises(engine.Unsupported, match="event-grained"):
        engine.choose(neg_next, "cogra")
    assert engine.strategy_for(neg_next, "greta") == "greta"


@pytest.mark.parametrize("name", ["", "abc", "a", "Auto", "AUTO", "zzz", "greta2", "auto "])
def test_unknown_strategy_names_are_refused(name: str) -> None:
    with pytest.raises(StrategyError, match="unknown strategy"):
        engine.choose(compiled("SEQ(A, B+)"), name)


def test_a_partial_sum_saturates_only_past_the_bound() -> None:
    """``sum_sat``: a partial sum is kept up to ``SUM_BOUND`` in magnitude, NaN beyond it."""
    from trendlake.engine.numbers import SUM_BOUND, sum_sat

    assert sum_sat(SUM_BOUND) == SUM_BOUND and sum_sat(-SUM_BOUND) == -SUM_BOUND
    assert sum_sat(SUM_BOUND + 1) != sum_sat(SUM_BOUND + 1)  # NaN
    assert sum_sat(-SUM_BOUND - 1) != sum_sat(-SUM_BOUND - 1)
