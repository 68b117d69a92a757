"""The compiled type-grained shared pass (``engine/shared/kleene/_typed.c``) against each
query alone, the Python shared executor and the two-step reference.

Groups of count-only type-grained queries (COUNT(*), COUNT(E)) run in one compiled pass:
per class of queries matching the same events of K the shared coefficients, classes nested
by thresholds in chains, each query brought up to date at its own events. These properties
draw such workloads (thresholds on K, arbitrary predicates on K, Kleene own variables,
simultaneous events, partitions, sliding windows) and check every row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from trendlake.engine.results import OVERFLOW
from trendlake.engine.shared.kleene import SharedStats, compiled
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan
from trendlake.optimizer.planners.share_all import every_sharable_set

from tests.randomized import once
from tests.unit.engine.engine_adapter import run_engine, same_rows
from trendlake import engine

pytestmark = pytest.mark.skipif(not compiled.available(), reason="the compiled shared pass is not built")

OTHER = "ABC"
SHAPES = ("SEQ({a}, K+)", "SEQ({a}, K+, {b})", "SEQ(K+, {b})", "SEQ({a}+, K+)", "SEQ(K+, {b}+)",
          "SEQ({a}, {b}, K+)", "SEQ({a}, K+, {b}, {c})", "K+")
K_PREDICATES = ("K.x < {c}", "K.x < {c}", "K.x < {c}", "K.x > {c}", "K.x != {c}", "K.x * 2 >= {c}", "")


@st.composite
def workloads(draw: Any) -> str:
    """2-10 count-only queries around K+, each with its own predicate on K (mostly
    thresholds ``K.x < c``: nested classes), one window and partitioning."""
    n = draw(once.integers(2, 10))
    window = draw(once.sampled_from(("WITHIN 10 seconds", "WITHIN 10 seconds SLIDE 5 seconds",
                                     "WITHIN 9 seconds SLIDE 2 seconds", "WITHIN 1 minute")))
    group = draw(once.booleans())
    queries = []
    for i in range(n):
        a, b, c = draw(once.permutations(OTHER))
        pattern = draw(once.sampled_from(SHAPES)).format(a=a, b=b, c=c)
        own = [t for t in OTHER if t in pattern]
        aggs = ["COUNT(*)"] + draw(once.lists(once.sampled_from(("COUNT(K)", *(f"COUNT({t})" for t in own))),
                                              max_size=2, unique=True))
        pred = draw(once.sampled_from(K_PREDICATES)).format(c=draw(once.integers(0, 7)))
        preds = [pred] if pred else []
        if own and draw(once.integers(0, 3)) == 0:
            preds.append(f"{draw(st.sampled_from(own))}.x != {draw(once.integers(0, 6))}")
        where = f" WHERE {' AND '.join(preds)}" if preds else ""
        by = " GROUP-BY g" if group else ""
        queries.append(f"QUERY q{i} RETURN {'g, ' if group else ''}{', '.join(aggs)} PATTERN {pattern}{where}{by} {window};")
    return "\n".join(queries)


@st.composite
def streams(draw: Any, size: tuple[int, int]) -> list[dict[str, Any]]:
    """Bursts of K (sometimes simultaneous) between other events, ties, two groups."""
    rows: list[dict[str, Any]] = []
    t = draw(once.integers(0, 3))
    n = draw(once.integers(*size))
    while len(rows) < n:
        if draw(once.integers(0, 2)) == 0:
            kinds = ["K"] * draw(once.integers(1, 5))
        else:
            kinds = [draw(once.sampled_from(OTHER)) for _ in range(draw(once.integers(1, 2)))]
        for ty in kinds:
            t += draw(once.sampled_from((0, 0, 1, 1, 1, 2, 5)))
            rows.append({"type": ty, "ts": t, "seq": len(rows), "x": draw(once.integers(0, 7)),
                         "g": draw(once.sampled_from((1, 1, 2)))})
    return rows


@st.composite
def saturating_streams(draw: Any) -> list[dict[str, Any]]:
    """Long bursts of K (130-200 events, some simultaneous) between a few other events, so
    that most windows' counts pass 10**38 - 1 while their queries' own events go on."""
    rows: list[dict[str, Any]] = []
    t = 0
    for _ in range(draw(once.integers(2, 4))):
        kinds = [draw(once.sampled_from(OTHER)) for _ in range(draw(once.integers(1, 4)))]
        kinds += ["K"] * draw(once.integers(130, 200))
        kinds += [draw(once.sampled_from(OTHER)) for _ in range(draw(once.integers(1, 4)))]
        for ty in kinds:
            t += draw(once.sampled_from((0, 1, 1)))
            rows.append({"type": ty, "ts": t / 20, "seq": len(rows), "x": draw(once.integers(0, 7)),
                         "g": draw(once.sampled_from((1, 1, 2)))})
    return rows


def _plan(text: str) -> dict[str, Any]:
    return build_plan(parse_workload(text), planner="none")


class _Count:
    """How often the compiled pass ran a group (None: it left it to the Python executor)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ran = 0
        self.declined = 0
        real = compiled.run

        def run(*args: Any, **kwargs: Any) -> Any:
            got = real(*args, **kwargs)
            if got is None:
                self.declined += 1
            else:
                self.ran += 1
            return got

        monkeypatch.setattr(compiled, "run", run)


@settings(max_examples=60, deadline=None)
@given(workloads(), streams((20, 70)))
def test_compiled_pass_equals_each_query_alone_and_the_python_executor(text: str, rows: list[dict[str, Any]]) -> None:
    """Every sharable set as one group, shared per burst (static) and shared-or-split per
    burst (dynamic), both on the same case (the queries alone evaluated once)."""
    plan = _plan(text)
    table = engine.table_from_rows(rows)
    want = engine.evaluate(plan, table)
    for decision in ("static", "dynamic"):
        with pytest.MonkeyPatch.context() as mp:
            count = _Count(mp)
            groups = every_sharable_set(plan["queries"], decision)
            shared = dict(plan, sharing=groups)
            report: dict[str, SharedStats] = {}
            got = engine.evaluate(shared, table, shared_stats=report)
            assert same_rows(got, want), (decision, text, rows)
            assert count.declined == 0
            event(f"{decision}: groups run compiled: {min(count.ran, 3)}")
            mp.setattr(compiled, "COMPILED", False)
            python = engine.evaluate(shared, table)
            assert same_rows(python, want), (decision, text, rows)
        if groups:
            assert sum(r.windows for r in report.values()) > 0 or not want


@settings(max_examples=30, deadline=None)
@given(workloads(), streams((5, 11)))
def test_compiled_pass_equals_the_two_step_reference(text: str, rows: list[dict[str, Any]]) -> None:
    plan = _plan(text)
    shared = dict(plan, sharing=every_sharable_set(plan["queries"], "static"))
    got = run_engine(shared, rows, "auto")
    want = run_engine(plan, rows, "twostep")
    assert same_rows(got, want), (text, rows)


@settings(max_examples=20, deadline=None)
@given(workloads(), saturating_streams())
def test_windows_past_cap_equal_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    """Once every result of a query in a window is past CAP the pass leaves that window's
    state alone (its results cannot change): the rows still equal each query alone."""
    plan = _plan(text)
    table = engine.table_from_rows(rows)
    want = engine.evaluate(plan, table)
    shared = dict(plan, sharing=every_sharable_set(plan["queries"], "static"))
    assert same_rows(engine.evaluate(shared, table), want), (text, rows)
    event(f"a result past CAP: {any(v is OVERFLOW for r in want for v in r.values())}")


@pytest.mark.parametrize("n", [40, 61, 126, 127, 140, 400, 2500])
@pytest.mark.parametrize("tie", [1, 2, 3])
def test_overflow_and_rebases_equal_each_query_alone(n: int, tie: int) -> None:
    """Long runs of K, ``tie`` events per time stamp: counts pass 10**38 - 1 (OVERFLOW), time
    stamps of one event pass a factor 2**128 (kept as exponents), and the coefficients of
    time stamps of several events are rebased (past 2**40) many times; every count equals
    each query alone."""
    text = """QUERY q1 RETURN COUNT(*), COUNT(K) PATTERN SEQ(A, K+) WHERE K.x < 5 WITHIN 1 hour;
              QUERY q2 RETURN COUNT(*), COUNT(K), COUNT(B) PATTERN SEQ(B, K+, C) WHERE K.x < 3 WITHIN 1 hour;
              QUERY q3 RETURN COUNT(*) PATTERN SEQ(K+, C) WITHIN 1 hour;
              QUERY q4 RETURN COUNT(*), COUNT(K) PATTERN SEQ(A, K+, C) WHERE K.x != 2 WITHIN 1 hour;"""
    rows = [{"type": "A", "ts": 0, "seq": 0, "x": 1}, {"type": "B", "ts": 1, "seq": 1, "x": 1}]
    rows += [{"type": "K", "ts": 2 + i // tie, "seq": 2 + i, "x": i % 6} for i in range(n)]
    rows += [{"type": "A", "ts": 3 + n, "seq": 3 + n, "x": 1}]
    rows += [{"type": "K", "ts": 4 + n + i, "seq": 4 + n + i, "x": i % 4} for i in range(5)]
    rows += [{"type": "C", "ts": 10 + n, "seq": 10 + n, "x": 1}]
    plan = _plan(text)
    shared = dict(plan, sharing=every_sharable_set(plan["queries"], "static"))
    assert [g["queries"] for g in shared["sharing"]] == [["q1", "q2", "q3", "q4"]]
    table = engine.table_from_rows(rows)
    report: dict[str, SharedStats] = {}
    got = engine.evaluate(shared, table, shared_stats=report)
    assert got == engine.evaluate(plan, table)
    counts = {r["query"]: r["COUNT(*)"] for r in got}
    if n >= 400:  # at least 2**400 - 1 trends of K+
        assert counts["q3"] is OVERFLOW
    if n <= 61:
        assert isinstance(counts["q3"], int)
    if tie == 1:  # one event per time stamp: a factor 2 each, counted, never rebased
        assert report["g0"].rebases == 0
    elif n >= 126:
        assert report["g0"].rebases > 0


def test_a_member_matching_two_variables_runs_on_the_python_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    """An event matching two variables of one query (aliases of K) is not for the compiled pass."""
    text = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(K K1, K+) WITHIN 1 minute;
              QUERY q2 RETURN COUNT(*) PATTERN SEQ(A, K+) WITHIN 1 minute;"""
    rows = [{"type": t, "ts": i, "seq": i, "x": 1} for i, t in enumerate("AKKAKK")]
    plan = _plan(text)
    groups = every_sharable_set(plan["queries"], "static")
    count = _Count(monkeypatch)
    got = engine.evaluate(dict(plan, sharing=groups), engine.table_from_rows(rows))
    assert same_rows(got, engine.evaluate(plan, engine.table_from_rows(rows)))
    assert count.declined == len(groups) and count.ran == 0


def test_thresholds_make_one_chain_and_other_predicates_more() -> None:
    x = np.arange(20) % 7
    thresholds = [x < c for c in (6, 2, 4, 3)]
    chains = compiled.chains(thresholds)
    assert chains == [[1, 3, 2, 0]]  # smallest class first
    mixed = compiled.chains([x < 3, x > 3, x < 5, x != 1])
    assert sorted(map(sorted, mixed)) == [[0, 2], [1, 3]]  # x > 3 lies inside x != 1
    for chain in mixed:  # every chain nested
        for small, large in zip(chain, chain[1:], strict=False):
            masks = [x < 3, x > 3, x < 5, x != 1]
            assert not np.any(masks[small] & ~masks[large])
