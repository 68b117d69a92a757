"""Weave Share against an independent enumeration of window starts and ends: edges,
common edges, costs, the greedy merge's choices and the incremental version."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.weaveshare import (
    Query,
    common_edges,
    edges_of,
    evaluate,
    incremental,
    optimize,
)

# ---- the reference: enumerate the windows ---------------------------------------------------


def enumerated_edges(queries: list[Query], period: int) -> set[int]:
    """Every window start and end of the queries (windows ``[k*s, k*s + r)``), as positions
    of ``(0, period]`` of one period (a multiple of every slide): those in ``(period,
    2*period]``, shifted down."""
    out: set[int] = set()
    for q in queries:
        for k in range(-(q.within // q.slide) - 1, 2 * period // q.slide + 1):
            for t in (k * q.slide, k * q.slide + q.within):
                if period < t <= 2 * period:
                    out.add(t - period)
    return out


def period_of(queries: list[Query]) -> int:
    p = 1
    for q in queries:
        p = p * q.slide // math.gcd(p, q.slide)
    return p


def enumerated_cost(groups: list[list[Query]], rate: float) -> float:
    """Eq. 3 from enumerated edges: per tree, rate + edges / period * sum of r / s."""
    total = 0.0
    for g in groups:
        period = period_of(g)
        total += rate + len(enumerated_edges(g, period)) / period * sum(q.within / q.slide for q in g)
    return total


# ---- strategies -----------------------------------------------------------------------------

SMALL_LCM = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60]  # every lcm divides 60


ANY_SLIDE = st.integers(1, 15)


@st.composite
def workloads(draw, slides=ANY_SLIDE, size=(1, 4)) -> list[Query]:
    """Queries of random slides and ranges, ``within`` a multiple of ``slide`` or not, and
    shorter than it too (the library does not require ``slide <= within``)."""
    n = draw(st.integers(*size))
    out = []
    for i in range(n):
        s = draw(slides)
        r = draw(st.one_of(st.integers(1, 6).map(lambda k, s=s: k * s), st.integers(1, 8 * s)))
        out.append(Query(f"q{i}", r, s))
    return out


scales = st.sampled_from([1, 7, 1000, 60_000_000])
rates = st.sampled_from([0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 10.0])


def scaled(queries: list[Query], g: int) -> list[Query]:
    return [Query(q.name, q.within * g, q.slide * g) for q in queries]


# ---- edges ------------------------------------------------------------------------------------


@given(workloads(), scales)
def test_edges_are_the_window_starts_and_ends(qs: list[Query], g: int) -> None:
    period = period_of(qs)
    want = sorted(enumerated_edges(qs, period))
    assert edges_of(scaled(qs, g)) == (period * g, tuple(p * g for p in want))
    (tree,) = optimize(scaled(qs, g), 1.0, "shared-panes").trees
    assert tree.edge_rate == pytest.approx(len(want) / (period * g))


@given(workloads(size=(1, 3)), workloads(size=(1, 3)), scales)
def test_common_edges_and_weaveability(xs: list[Query], ys: list[Query], g: int) -> None:
    ys = [Query("y" + q.name, q.within, q.slide) for q in ys]
    period = period_of(xs + ys)
    ex, ey = enumerated_edges(xs, period), enumerated_edges(ys, period)
    assert common_edges(scaled(xs, g), scaled(ys, g)) == (period * g, len(ex & ey), len(ex | ey))


# ---- the greedy merge -----------------------------------------------------------------------


def benefit(x: list[Query], y: list[Query], rate: float) -> float:
    return enumerated_cost([x], rate) + enumerated_cost([y], rate) - enumerated_cost([x + y], rate)


@given(workloads(st.sampled_from(SMALL_LCM), size=(1, 7)), rates)
def test_greedy_merges_the_best_pair_while_it_pays(qs: list[Query], rate: float) -> None:
    plan = optimize(qs, rate)
    names = [n for t in plan.trees for n in t.names]
    assert sorted(names) == sorted(q.name for q in qs)  # every query in exactly one tree
    by_name = {q.name: q for q in qs}
    trees = [[q] for q in qs]
    cost = enumerated_cost(trees, rate)
    assert plan.start_cost == pytest.approx(cost)
    for m in plan.merges:
        x = next(t for t in trees if t[0].name in m.left)
        y = next(t for t in trees if t[0].name in m.right)
        assert {q.name for q in x} == set(m.left) and {q.name for q in y} == set(m.right)
        best = max(benefit(a, b, rate) for a, b in itertools.combinations(trees, 2))
        assert m.benefit == pytest.approx(benefit(x, y, rate)) == pytest.approx(best)
        assert m.benefit > 0
        trees = [t for t in trees if t is not x and t is not y] + [x + y]
        assert m.cost == pytest.approx(enumerated_cost(trees, rate)) and m.cost < cost
        cost = m.cost
    groups = [[by_name[n] for n in t.names] for t in plan.trees]
    assert sorted(map(sorted, (t.names for t in plan.trees))) == sorted(
        sorted(q.name for q in t) for t in trees)
    assert plan.cost == pytest.approx(enumerated_cost(groups, rate))
    for a, b in itertools.combinations(groups, 2):  # no merge left that pays
        assert benefit(a, b, rate) <= 1e-9 * plan.cost
    assert plan.cost <= optimize(qs, rate, "none").cost * (1 + 1e-12)


@given(workloads(st.sampled_from(SMALL_LCM), size=(1, 6)), rates)
def test_tree_fields_and_baselines(qs: list[Query], rate: float) -> None:
    plan = optimize(qs, rate)
    for t in plan.trees:
        period = period_of(list(t.queries))
        assert t.composite_slide == period
        assert t.edges == tuple(sorted(enumerated_edges(list(t.queries), period)))
        assert t.cost == pytest.approx(enumerated_cost([list(t.queries)], rate))
    assert optimize(qs, rate, "shared-panes").cost == pytest.approx(enumerated_cost([qs], rate))
    assert optimize(qs, rate, "none").cost == pytest.approx(enumerated_cost([[q] for q in qs], rate))
    assert evaluate([list(t.queries) for t in plan.trees], rate).cost == pytest.approx(plan.cost)


# ---- incremental ----------------------------------------------------------------------------


@st.composite
def changes(draw) -> tuple[list[Query], list[Query]]:
    """An old query set and a new one: some kept, some dropped, some with a new window,
    some added."""
    old = draw(workloads(st.sampled_from(SMALL_LCM), size=(0, 6)))
    new: list[Query] = []
    for q in old:
        fate = draw(st.sampled_from(["keep", "keep", "drop", "change"]))
        if fate == "keep":
            new.append(q)
        elif fate == "change":
            new.append(Query(q.name, q.within + draw(st.integers(1, 5)), q.slide))
    added = draw(workloads(st.sampled_from(SMALL_LCM), size=(0, 3)))
    new += [Query("n" + q.name, q.within, q.slide) for q in added]
    return old, new


@given(changes(), rates, st.sampled_from([0.0, 0.05, 0.2, math.inf]))
def test_incremental_is_within_tolerance_or_replans(change, rate: float, tolerance: float) -> None:
    old, new = change
    stored = optimize(old, rate)
    inc = incremental(stored.trees, new, rate, tolerance)
    scratch = optimize(new, rate)
    assert sorted(n for t in inc.trees for n in t.names) == sorted(q.name for q in new)
    assert inc.reference_cost == pytest.approx(scratch.cost)
    if inc.replanned:
        assert inc.plan.groups() == scratch.groups()
        assert inc.woven_cost >= (1 + tolerance) * scratch.cost * (1 - 1e-9)
    elif tolerance < math.inf:
        assert inc.plan.cost <= (1 + tolerance) * scratch.cost * (1 + 1e-9) + 1e-12
    if not inc.replanned:
        # weaving only merges: every kept part of a stored tree stays together
        where = {n: i for i, t in enumerate(inc.trees) for n in t.names}
        current = set(new)
        for t in stored.trees:
            kept = [q.name for q in t.queries if q in current]
            assert len({where[n] for n in kept}) <= 1
    assert inc.plan.cost == pytest.approx(enumerated_cost(
        [list(t.queries) for t in inc.trees], rate))
    if tolerance == math.inf:
        assert not inc.replanned


@given(changes(), rates, st.sampled_from([0.0, 0.2]))
def test_incremental_on_the_plan_cost_curve(change, rate: float, tolerance: float) -> None:
    old, new = change
    stored = optimize(old, rate)
    first = old[:1] or new[:1]
    curve = [(len(old), stored.cost), (len(first), optimize(first, rate).cost)]
    num = sum(n * c for n, c in curve)
    den = sum(n * n for n, _ in curve)
    if not den:
        with pytest.raises(OptimizerError, match="plan-cost curve needs a point"):
            incremental(stored.trees, new, rate, tolerance, curve=curve)
        return
    inc = incremental(stored.trees, new, rate, tolerance, curve=curve)
    extrapolated = num / den * len(new)
    assert inc.reference_cost == pytest.approx(extrapolated)
    bound = (1 + tolerance) * extrapolated
    if inc.replanned:
        assert inc.woven_cost >= bound * (1 - 1e-9)
        assert inc.plan.groups() == optimize(new, rate).groups()
    else:
        assert inc.woven_cost <= bound * (1 + 1e-9) + 1e-12
        assert inc.plan.cost == inc.woven_cost
