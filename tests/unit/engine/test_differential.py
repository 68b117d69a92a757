"""Every engine strategy equals the two-step reference on random workloads and streams.

Workloads are random query *text* (tests/randomized.py) compiled by the real
optimizer into a plan; streams are small random event lists. Sharing or
strategy choice may change cost, never answers.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from trendlake.engine.results import is_equal

from tests.randomized import event_rows, workloads
from trendlake import engine, optimizer

STRATEGIES = (*sorted(set(engine.STRATEGIES) - {"twostep"}), "auto")


def rows_equal(got: list[dict], want: list[dict]) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        if g.keys() != w.keys() or not all(is_equal(g[k], w[k]) for k in g):
            return False
    return True


def evaluate(text: str, rows: list[dict], strategy: str) -> list[dict]:
    workload = optimizer.compile_workload(text)
    plan = optimizer.build_plan(workload)
    return engine.evaluate(
        plan, engine.table_from_rows(rows), workload_hash=optimizer.workload_hash(text), strategy=strategy
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
@given(text=workloads(), rows=event_rows())
def test_strategy_equals_reference(strategy: str, text: str, rows: list[dict]) -> None:
    want = evaluate(text, rows, "twostep")
    try:
        got = evaluate(text, rows, strategy)
    except engine.Unsupported:
        assert strategy == "cogra", "auto and greta must evaluate every query"
        return
    assert rows_equal(got, want), f"{strategy} differs from the reference\n{text}\n{rows}\ngot  {got}\nwant {want}"
