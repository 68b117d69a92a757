"""Every engine strategy equals the two-step reference on random workloads and streams.

Workloads are random query *text* (tests/randomized.py) compiled by the real
optimizer into a plan; streams are small random event lists. Sharing or
strategy choice may change cost, never answers.
"""

from __future__ import annotations

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


@given(text=workloads(), rows=event_rows())
def test_every_strategy_equals_reference(text: str, rows: list[dict]) -> None:
    """Each strategy on the same case (compiled once, the reference run once); only COGRA
    may decline a query."""
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    table, workload_hash = engine.table_from_rows(rows), optimizer.workload_hash(text)
    want = engine.evaluate(plan, table, workload_hash=workload_hash, strategy="twostep")
    for strategy in STRATEGIES:
        try:
            got = engine.evaluate(plan, table, workload_hash=workload_hash, strategy=strategy)
        except engine.Unsupported:
            assert strategy == "cogra", "auto and greta must evaluate every query"
            continue
        assert rows_equal(got, want), f"{strategy} differs from the reference\n{text}\n{rows}\ngot  {got}\nwant {want}"
