"""Compiled queries (engine/query.py): variables, transitions and what the aggregates need.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). A compiled plan is shared by every
strategy, partition and executor, so its variables and transitions are
values: immutable and hashable. A variable matches an event of its type whose
local predicate holds; the aggregates say which per-window quantities a
strategy computes (COUNT(E) and AVG need E's count, SUM and AVG the sum, MIN
the minimum, MAX the maximum).
"""

from __future__ import annotations

import dataclasses

import pytest
from trendlake.engine.query import Aggregate, Needs

from trendlake import engine, optimizer


def compiled(text: str):
    return engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text))).queries["q"]


Q = compiled("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B+, NOT C, D) WHERE A.x > 1 AND A.x < NEXT(A).x "
             "WITHIN 10 seconds;")


def test_variables_and_transitions_are_values() -> None:
    var = Q.variables["A"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        var.type = "B"  # type: ignore[misc]
    assert hash(var) == hash(var)
    tr = Q.transitions[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tr.src = "Z"  # type: ignore[misc]
    assert len({tr, *Q.transitions}) == len(Q.transitions)


def test_a_variable_matches_its_type_when_its_predicate_holds() -> None:
    a, b = Q.variables["A"], Q.variables["B"]
    assert a.matches("A", {"x": 2})
    assert not a.matches("A", {"x": 1})  # A.x > 1 fails
    assert not a.matches("A", {})  # missing x
    assert not a.matches("B", {"x": 2})
    for other in ("AA", "C", "Z", "a", ""):  # any other type, before or after "A"
        assert not a.matches(other, {"x": 2})
    assert b.matches("B", {})
    assert not b.matches("C", {}) and not b.matches("A", {})


def test_needs_of_the_aggregates() -> None:
    aggs = (
        Aggregate("c", "count_star"),
        Aggregate("n", "count", "A"),
        Aggregate("s", "sum", "B", "y"),
        Aggregate("m", "avg", "D", "z"),
        Aggregate("lo", "min", "A", "x"),
        Aggregate("hi", "max", "B", "w"),
    )
    needs = Needs.of(aggs)
    assert needs.counts == {"A", "D"}
    assert needs.sums == {("B", "y"), ("D", "z")}
    assert needs.mins == {("A", "x")}
    assert needs.maxs == {("B", "w")}
    assert Needs.of((Aggregate("c", "count_star"),)) == Needs(frozenset(), frozenset(), frozenset(), frozenset())
