"""Every plan every planner writes passes the engine's plan check.

``engine.load_plan(plan, workload_hash)`` is what ``eval --plan``, replay and
the pipeline apply to a plan they read: content hash, JSON Schema and
``engine.check_plan`` (sharing groups included: members, types,
partitioning, windows, the kind's own rules, the merged template). A planner
that writes a plan the engine then refuses fails here, on random workloads
(``tests.randomized``, workloads built to share a Kleene type, and the
paper-shaped generators of ``datagen.workloads``) under random statistics of
the form ``trendlake stats`` / ``plan --stats-out`` write, or the stated
``--assume-uniform`` assumption.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from trendlake.datagen.workloads import KINDS, generate_workload
from trendlake.optimizer.cost import UNIFORM
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.planners import PLANNERS
from trendlake.schemas import load_stream_schema

from tests.randomized import once, workloads
from trendlake import engine, optimizer

# A failing example is reported as found, not shrunk: its message names the plan's broken rule,
# and shrinking a workload with its statistics through three planners and the plan schema took
# minutes.
AS_FOUND = [Phase.explicit, Phase.reuse, Phase.generate]
OTHER = ("A", "B", "C", "D", "E")
NEGATED = ("N", "M")


@st.composite
def sharing_workloads(draw: st.DrawFn) -> str:
    """3-8 queries with ``K+`` between other types: with or without adjacent predicates on
    ``K -> K`` (event- or type-grained), negation away from K, local predicates on K and the
    others, and now and then another window, partitioning or semantics."""
    n = draw(once.integers(3, 8))
    rising = draw(once.integers(0, 2)) == 0  # the same adjacent predicate on K -> K: an event-grained graph
    k_pred = draw(once.sampled_from(("", "K.x > 2", "K.x != 4")))  # the same on K, or ...
    same_k_pred = draw(once.booleans())  # ... one per query (type-grained: event-level snapshots)
    windows = ("WITHIN 10 seconds", "WITHIN 10 seconds SLIDE 5 seconds", "WITHIN 1 minute")
    window = draw(once.sampled_from(windows))
    queries = []
    for i in range(n):
        types = draw(once.lists(once.sampled_from(OTHER), min_size=1, max_size=3, unique=True))
        cut = draw(once.integers(0, len(types)))
        items = [t + ("+" if draw(once.integers(0, 4)) == 0 else "") for t in types]
        items = items[:cut] + ["K+"] + items[cut:]
        if len(types) >= 2 and draw(once.integers(0, 5)) == 0:  # a negation between two other types
            at = next((j for j in range(1, len(items)) if "K" not in (items[j - 1], items[j])), None)
            if at is not None:
                items.insert(at, f"NOT {draw(once.sampled_from(NEGATED))}")
        preds = []
        if rising and draw(once.integers(0, 5)):
            preds.append("K.x < NEXT(K).x")
        mine = k_pred if same_k_pred else draw(once.sampled_from(("", "K.x > 2", "K.x < 3", "K.x != 4")))
        if mine:
            preds.append(mine)
        if draw(once.booleans()):
            preds.append(f"{types[0]}.y >= {draw(once.integers(0, 4))}")
        odd = draw(once.integers(0, 9))
        semantics = " SEMANTICS skip-till-next-match" if odd == 0 else ""
        q_window = draw(once.sampled_from(windows)) if odd == 1 else window
        grouped = odd == 2 or draw(once.integers(0, 4)) == 0
        agg = draw(once.sampled_from(("COUNT(*)", "SUM(K.x)", "AVG(K.x)", "MAX(K.x)", f"COUNT({types[0]})")))
        queries.append(
            f"QUERY q{i} RETURN {'g, ' if grouped else ''}{agg} PATTERN SEQ({', '.join(items)}){semantics}"
            + (f" WHERE {' AND '.join(preds)}" if preds else "")
            + (" GROUP-BY g" if grouped else "") + f" {q_window};"
        )
    return "\n".join(queries)


@st.composite
def datagen_workloads(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A workload of a paper-shaped generator (``trendlake workload``) for the rides stream."""
    kind = draw(st.sampled_from(sorted(KINDS)))
    text = generate_workload(kind, draw(once.integers(2, 12)), draw(once.integers(0, 10_000)), RIDES)
    return text, RIDES


RIDES = load_stream_schema("rides")


@st.composite
def statistics(draw: st.DrawFn, workload: optimizer.Workload) -> dict[str, Any]:
    """Statistics in the form ``trendlake stats`` and ``plan --stats-out`` write, with random
    rates, bursts, selectivities and partition counts (or the ``--assume-uniform`` assumption)."""
    if draw(once.integers(0, 5)) == 0:
        return dict(UNIFORM)
    entries = [optimizer.plan.query_entry(q) for q in workload.queries]
    types = sorted({v["type"] for e in entries for v in e["variables"]})
    pane = draw(once.sampled_from((1_000_000, 5_000_000, 60_000_000)))
    # Hamlet's setting: the type under Kleene plus in most queries dense (mostly bursts of one),
    # the others rare
    kleene = Counter(v["type"] for e in entries for v in e["variables"]
                     if any(t["from"] == t["to"] == v["name"] for t in e["template"]["transitions"]))
    dense = bool(kleene) and draw(once.integers(0, 2)) > 0
    k = max(sorted(kleene), key=kleene.__getitem__) if dense else None
    rates = {t: draw(once.floats(100, 1000) if t == k else once.floats(0, 5)) if dense
             else draw(once.floats(0, 500)) for t in types}
    stats_types = {t: {"events": 0, "rate_mean": rates[t], "rate_max": 0} for t in types if draw(once.integers(0, 9))}

    def bursts(k_means: tuple[float, ...]) -> dict[str, Any]:
        # dense: the Kleene type's events mostly one per time stamp, so each is a step alone
        return {t: {"runs": 1, "events": 1, "max": 1,
                    "mean": draw(once.sampled_from(k_means)) if t == k else draw(once.floats(1, 40))}
                for t in types if t == k or draw(once.booleans())}

    burst_doc: dict[str, Any] = {"*": {"partition_by": [], "types": bursts((1.0,))}}
    for e in entries:
        if draw(once.booleans()):  # a query of its own: long bursts of K keep it out of a group
            burst_doc[e["name"]] = {"partition_by": e["partition_by"], "types": bursts((1.0, 400.0))}
    selectivity: dict[str, Any] = {}
    for e in entries:
        for var in e["local_predicates"]:
            if draw(once.booleans()):
                selectivity.setdefault(e["name"], {})[var] = {
                    "type": var, "events": 1, "all": draw(once.floats(0, 1, allow_nan=False)), "predicates": []}
    partitioned = [e["partition_by"] for e in entries if e["partition_by"]]
    group_by = draw(st.sampled_from(partitioned)) if partitioned and draw(once.booleans()) else None
    count = draw(once.integers(1, 500))
    groups = {"count": count, "by_type": {t: draw(once.integers(1, count)) for t in types}} if group_by else None
    return {"stream": None, "pane_us": pane, "workload_hash": None, "group_by": group_by, "events": 0,
            "panes": 1, "types": stats_types, "groups": groups, "bursts": burst_doc, "selectivity": selectivity}


def check_every_planner(text: str, schema: dict[str, Any] | None, data: st.DataObject) -> list[dict[str, Any]]:
    """Plan ``text`` with every planner and load each plan as ``eval --plan`` does; the plans."""
    workload = optimizer.compile_workload(text, stream_schema=schema)
    stats = data.draw(statistics(workload), label="statistics")
    whash = optimizer.workload_hash(text)
    plans = []
    for planner in sorted(PLANNERS):
        try:
            plan = optimizer.build_plan(workload, planner=planner, statistics=None if planner == "none" else stats)
        except OptimizerError as err:  # the exhaustive search refuses what it cannot finish, politely
            assert planner == "sharon-exhaustive" and "use the sharon or greedy search" in str(err), (planner, err)
            continue
        loaded = engine.load_plan(plan, workload_hash=whash)  # hash, schema, engine.check_plan, workload hash
        assert set(loaded.queries) == {q.name for q in workload.queries}
        plans.append(plan)
    return plans


@settings(max_examples=80, deadline=None, phases=AS_FOUND)
@given(sharing_workloads(), st.data())
def test_plans_of_workloads_that_share_pass_the_plan_check(text: str, data: st.DataObject) -> None:
    check_every_planner(text, None, data)


@settings(max_examples=15, deadline=None, phases=AS_FOUND)
@given(workloads(max_queries=4), st.data())
def test_plans_of_random_workloads_pass_the_plan_check(text: str, data: st.DataObject) -> None:
    check_every_planner(text, None, data)


@settings(max_examples=10, deadline=None, phases=AS_FOUND)
@given(datagen_workloads(), st.data())
def test_plans_of_generated_workloads_pass_the_plan_check(workload: tuple[str, dict[str, Any]],
                                                          data: st.DataObject) -> None:
    check_every_planner(*workload, data)


@pytest.mark.parametrize("grain", ["type", "event"])
def test_the_workloads_reach_groups_of_both_grains(grain: str) -> None:
    """The property above sees sharing: a workload and statistics under which a planner writes
    a group of each grain exist in its strategies (found by drawing until one is)."""

    def groups(case: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        text, stats = case
        plan = optimizer.build_plan(optimizer.compile_workload(text), planner="hamlet-static", statistics=stats)
        return plan["sharing"]

    cases = sharing_workloads().flatmap(
        lambda text: statistics(optimizer.compile_workload(text)).map(lambda s: (text, s)))
    found = find(cases, lambda c: any(("graph_entry_cost" in g["parameters"]) == (grain == "event")
                                      for g in groups(c)),
                 settings=settings(max_examples=2000, database=None, phases=[Phase.generate]))
    assert groups(found)
