"""COGRA's type-grained kernel driver (engine/strategies/cogra/kernel.py) piece by piece.

``Kernel.steps`` and ``Kernel.panes`` on hand-made inputs whose steps and panes are
derived by hand from the rules in their docstrings; then whole runs (the Python kernel:
the compiled one is off) against the two-step reference, one partition at a time and
many partitions in one keyed run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from trendlake.engine.columns import Event
from trendlake.engine.layout import LIMIT, Layout
from trendlake.engine.results import finalize, is_equal
from trendlake.engine.strategies import reference
from trendlake.engine.strategies.cogra import kernel
from trendlake.engine.strategies.cogra.kernel import Kernel
from trendlake.engine.strategies.cogra.prepare import Prepared, prepare_events

from tests.unit.engine.handplans import SECOND
from tests.unit.engine.test_cogra import cases, patched
from tests.unit.engine.test_greta import compiled
from tests.unit.engine.test_semantics import query

SEQ_AB = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 20 seconds SLIDE 10 seconds;")


def kernel_of(names: str, seconds: list[int], kid: list[int] | None = None, unit: int = SECOND) -> Kernel:
    """A kernel run of SEQ(A, B+) over events of the variables in ``names`` at ``seconds``
    (in ``unit`` µs)."""
    layout = Layout.of(SEQ_AB)
    code = np.array([layout.index[v] for v in names], dtype=np.int64)
    prep = Prepared(np.array(seconds, dtype=np.int64) * unit, code, {}, {})
    return Kernel(SEQ_AB, layout, prep, None if kid is None else np.array(kid, dtype=np.int64))


def test_bursts_of_one_variable_become_one_step() -> None:
    steps = kernel_of("AABBB", [1, 2, 3, 4, 5]).steps()
    assert steps.lo.tolist() == [0, 2] and steps.hi.tolist() == [2, 5]
    assert steps.size.tolist() == [2, 3] and not steps.special.any()
    index = Layout.of(SEQ_AB).index
    assert steps.code.tolist() == [index["A"], index["B"]]


def test_steps_break_at_partitions_and_panes_and_after_limit_events() -> None:
    assert kernel_of("AABBB", [1, 2, 3, 4, 5], kid=[0, 1, 1, 1, 1]).steps().size.tolist() == [1, 1, 3]
    # panes are cut at every window start and end: 10 s here
    assert kernel_of("AAAA", [1, 2, 12, 13]).steps().size.tolist() == [2, 2]
    n = 2 * LIMIT + 1
    assert kernel_of("A" * n, list(range(n)), unit=1).steps().size.tolist() == [LIMIT, LIMIT, 1]


def test_a_time_stamp_of_two_variables_is_ordered_by_variable() -> None:
    """a and b at one time stamp: one step per variable, b's (a successor of a) first, so
    each reads the state from before the time stamp; no group step is needed."""
    run = kernel_of("AB", [1, 1])
    steps = run.steps()
    index = Layout.of(SEQ_AB).index
    assert steps.code.tolist() == [index["B"], index["A"]]
    assert not steps.special.any()


def test_panes_a_window_needs() -> None:
    """a at 1 s, 2 s, b at 12 s, 13 s; windows of 20 s sliding by 10 s. The b pane
    [10 s, 20 s) lies in window 0 ([0, 20 s)), opened by the a pane: both visited."""
    run = kernel_of("AABB", [1, 2, 12, 13])
    p = run.panes(run.steps())
    assert (p.lo, p.hi, p.ts, p.start, p.visit) == ([0, 1], [1, 2], [SECOND, 12 * SECOND], [True, False], [0, 1])
    # b at 32 s: every window holding an a (0 and -1) ended by then: its pane is skipped
    run = kernel_of("AABB", [1, 2, 32, 33])
    assert run.panes(run.steps()).visit == [0]
    # with partitions: the b pane of another partition is skipped too
    run = kernel_of("AABB", [1, 2, 12, 13], kid=[0, 0, 1, 1])
    assert run.panes(run.steps()).visit == [0]


def finished(q: Any, results: dict) -> dict:
    return {k: finalize(q, r) for k, r in results.items()}


def assert_equal(q: Any, got: dict, want: dict) -> None:
    g, w = finished(q, got), finished(q, want)
    assert sorted(g) == sorted(w), (g, w)
    for k in w:
        assert all(is_equal(g[k][a], w[k][a]) for a in w[k]), (k, g[k], w[k])


@given(case=cases("type"))
def test_a_run_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    q = compiled(spec)
    layout = Layout.of(q)
    if not layout.ok:
        return
    with patched(kernel, "COMPILED", False):
        got = Kernel(q, layout, prepare_events(q, layout, events)).run()
    assert_equal(q, got, reference.run(q, events))


@given(case=cases("type"), cut=st.integers(0, 12))
def test_a_keyed_run_of_two_partitions_equals_each_alone(case: tuple[dict[str, Any], list[Event]], cut: int) -> None:
    """The events cut in two partitions (each in time order): results keyed (partition,
    window) equal the reference on each partition alone."""
    spec, events = case
    q = compiled(spec)
    layout = Layout.of(q)
    if not layout.ok:
        return
    parts = [events[:cut], events[cut:]]
    preps = [prepare_events(q, layout, part) for part in parts]
    prep = Prepared(
        np.concatenate([p.ts for p in preps]),
        np.concatenate([p.code for p in preps]),
        {i + (len(preps[0].ts) if j else 0): v for j, p in enumerate(preps) for i, v in p.multi.items()},
        {a: _concat(preps[0].cols[a], preps[1].cols[a]) for a in layout.attrs},
    )
    kid = np.repeat(np.arange(2), [len(p.ts) for p in preps])
    with patched(kernel, "COMPILED", False):
        got = Kernel(q, layout, prep, kid).run()
    for i, part in enumerate(parts):
        assert_equal(q, {k: r for (p, k), r in got.items() if p == i}, reference.run(q, part))


def _concat(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype:
        return np.concatenate([a, b])
    return list(a) + list(b)
