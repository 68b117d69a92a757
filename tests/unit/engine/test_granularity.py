"""The one granularity rule (trendlake.schemas.granularity, COGRA Table 14.1): its table,
and the optimizer and COGRA deciding alike on random query text."""

from __future__ import annotations

import pytest
from hypothesis import given
from trendlake.engine.plan import load_plan
from trendlake.engine.strategies import cogra
from trendlake.schemas.granularity import COARSE, Granularity, granularity

from tests.randomized import queries
from trendlake import optimizer


@pytest.mark.parametrize(
    ("any_match", "adjacent", "negation", "want"),
    [
        (True, False, False, "type"),
        (True, False, True, "type"),
        (True, True, False, "mixed"),
        (True, True, True, "mixed"),
        (False, False, False, "pattern"),
        (False, True, False, "event"),
        (False, False, True, "event"),
        (False, True, True, "event"),
    ],
)
def test_table_14_1(any_match: bool, adjacent: bool, negation: bool, want: str) -> None:
    got = granularity(any_match=any_match, adjacent=adjacent, negation=negation)
    assert got == want and got.value == want
    assert (got in COARSE) == (want != "event")


def test_the_values_are_the_plan_schemas() -> None:
    import json

    from trendlake.schemas import resource

    schema = json.loads(resource("plan.schema.json").read_text())
    found = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "granularity" in node.get("properties", {}):
                found.append(node["properties"]["granularity"]["enum"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert found and all(sorted(e) == sorted(g.value for g in Granularity) for e in found)


@given(text=queries())
def test_the_optimizer_and_cogra_decide_alike(text: str) -> None:
    """Alike wherever they see the same adjacent predicates. An adjacent predicate on a pair
    of variables no template transition joins (``SEQ(NOT N, A)`` with ``A.x < NEXT(A).x``)
    constrains no trend: the optimizer counts it, the engine's compiled query does not, and
    that input is all they differ in."""
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    (spec,) = plan["queries"]
    query = load_plan(plan).queries[spec["name"]]
    if query.has_adjacent == bool(spec["adjacent_predicates"]):
        assert cogra.granularity_of(query) == spec["granularity"]
        assert (cogra.supports(query) is None) == (spec["granularity"] != "event")
    else:
        assert not query.has_adjacent
        any_match, negation = spec["semantics"] == "skip-till-any-match", bool(query.negations)
        assert spec["granularity"] == granularity(any_match=any_match, adjacent=True, negation=negation)
        assert cogra.granularity_of(query) == granularity(any_match=any_match, adjacent=False, negation=negation)
