"""Steps the oracle differential tests share: every strategy against the oracle's rows of
one case, and the distribution of the cases a run drew (a generator drifting to trivial
cases fails the test instead of passing it vacuously)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from tests.unit.engine.engine_adapter import run_engine
from tests.unit.engine.test_oracle_differential import same_rows
from trendlake import engine

STRATEGIES = ("auto", *sorted(engine.STRATEGIES))


def assert_every_strategy_equals(
    plan: dict[str, Any],
    rows: list[dict[str, Any]],
    want: list[dict[str, Any]],
    label: str,
    may_decline: Callable[[str], bool] = lambda strategy: False,
    same: Callable[[list[dict[str, Any]], list[dict[str, Any]]], bool] = same_rows,
) -> None:
    """Each strategy's rows of ``plan`` over ``rows`` equal ``want`` (the oracle's); a strategy
    may raise ``Unsupported`` only where ``may_decline(strategy)``."""
    for strategy in STRATEGIES:
        try:
            got = run_engine(plan, rows, strategy)
        except engine.Unsupported as err:
            assert may_decline(strategy), f"{strategy} declined {label}: {err}"
            continue
        assert same(got, want), f"{strategy} differs from the oracle\n{label}\nrows={rows}\ngot  {got}\nwant {want}"


def assert_distribution(stats: Counter[str], title: str, *, cases: int, shares: Mapping[str, float]) -> None:
    """At least ``cases`` cases compared, at most 5% over the oracle's budget, and at least the
    given share of the cases counted under each key of ``shares``."""
    n = stats["cases"]
    report = ", ".join(f"{k}: {v}" for k, v in sorted(stats.items()))
    print(f"\n{title}: {report}")
    assert n >= cases, report
    assert stats["oracle budget exceeded"] <= 0.05 * n, report
    for key, share in shares.items():
        assert stats[key] >= share * n, report
