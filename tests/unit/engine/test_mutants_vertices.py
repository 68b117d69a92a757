"""GRETA's kept vertices (engine/vertices.py): pruning keeps exactly the live ones.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). A ``VarList`` holds a variable's
vertices in time order; ``prune(kmin, blocked_before)`` drops the ones whose
windows all ended (last window < kmin) and those before a negation bound,
and may compact the list; whatever it does, the live vertices from
``offset`` on must be exactly the expected ones, and ``from_time(t)`` the
first live one at or after ``t``. Expected values are worked out by hand.
"""

from __future__ import annotations

import pytest
from trendlake.engine.vertices import VarList, Vertex


def var_list(n: int) -> VarList:
    vl = VarList()
    for i in range(n):
        vl.append(Vertex(ts=10 * i, attrs={"i": i}, var="A", prop={}, last_window=i))
    return vl


def live(vl: VarList) -> list[int]:
    return [v.attrs["i"] for v in vl.vertices[vl.offset:]]


@pytest.mark.parametrize("n", [0, 1, 5, 40, 100, 400])
@pytest.mark.parametrize("kmin", [0, 1, 3, 34, 51, 99, 300, 1000])
def test_prune_keeps_the_vertices_with_an_open_window(n: int, kmin: int) -> None:
    vl = var_list(n)
    vl.prune(kmin, None)
    assert live(vl) == list(range(min(kmin, n), n))
    assert len(vl.vertices) == len(vl.stamps)
    assert vl.stamps[vl.offset:] == [10 * i for i in range(min(kmin, n), n)]


def test_repeated_prunes_and_appends_keep_the_live_vertices() -> None:
    vl = var_list(0)
    for step in range(200):
        vl.append(Vertex(ts=10 * step, attrs={"i": step}, var="A", prop={}, last_window=step))
        vl.prune(step - 5, None)
        assert live(vl) == list(range(max(0, step - 5), step + 1))
        assert vl.from_time(None) == vl.offset
        assert [v.attrs["i"] for v in vl.vertices[vl.from_time(10 * step - 20):]] == list(
            range(max(0, step - 5, step - 2), step + 1))


def test_a_negation_bound_drops_the_vertices_before_it() -> None:
    vl = var_list(100)
    vl.prune(0, 505)  # vertices at 0, 10, ..., 500 are before 505
    assert live(vl) == list(range(51, 100))
    vl.prune(60, 700)  # windows: 60 on; bound: 700 on -> from 70
    assert live(vl) == list(range(70, 100))
    vl.prune(0, 720)  # at the bound itself is kept
    assert live(vl) == list(range(72, 100))


def test_from_time_is_the_first_live_vertex_at_or_after() -> None:
    vl = var_list(10)
    vl.prune(3, None)
    assert vl.from_time(None) == vl.offset
    assert vl.vertices[vl.from_time(0)].attrs["i"] == 3  # before the live ones: the first live
    assert vl.vertices[vl.from_time(55)].attrs["i"] == 6
    assert vl.vertices[vl.from_time(60)].attrs["i"] == 6
    assert vl.from_time(91) == len(vl.vertices)
