"""Sharon's optimizer on random Sharon graphs and on random sequence workloads.

Graphs: up to 10 vertices with random positive weights and conflicts; every independent
set is enumerated here (``itertools``, pairwise edge checks), apart from the library.

* ``sharon`` (its plan finder, and its branch and bound) and ``exhaustive`` reach the
  optimum; every search returns an independent
  set; GWMIN weighs no more than the optimum and no less than its bound (Eq. 10).
* The reduction never removes a vertex of an optimal plan (every plan through a
  conflict-ridden vertex weighs less than the optimum) and every conflict-free vertex is
  in every optimal plan.
* The plan finder generates each valid plan of a component exactly once (Lemmas 4-6).

Workloads: 2-12 fixed-length sequence queries, mostly slices of one backbone of types
(types may repeat), through the real parser and plan writer, now and then with another
window, a local predicate, an adjacent predicate, or outside the model (next-match).
The candidates are exactly the shared sub-sequences of a brute-force enumeration written
here from the drawn queries (not from the entries), with their leftmost positions; the
chosen candidates of every search never overlap in a query, their benefits are Eq. 1-8
recomputed here, conflicts among candidates and options are Def. 6's (positions
overlap in a common query), and ``sharon`` equals ``exhaustive`` where the graph is small.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.optimizer import compile_workload
from trendlake.optimizer.plan import query_entry
from trendlake.optimizer.sharon import (
    Graph,
    branch_and_bound,
    conflict_masks,
    exhaustive,
    from_entries,
    greedy,
    gwmin_bound,
    optimize,
    plan_finder,
    reduce,
    sharon,
    vertices_of,
)

from tests.randomized import drawn_on_a_fixed_seed, once

TOL = 1e-9

# random graphs -------------------------------------------------------------------------


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[float], list[tuple[int, int]]]:
    n = draw(once.integers(0, 10))
    weights = [float(draw(once.sampled_from((1, 2, 3, 5, 8, 9, 12, 15, 18, 20, 25)))) for _ in range(n)]
    density = draw(once.sampled_from((0.1, 0.25, 0.4, 0.6)))
    edges = [(a, b) for a, b in itertools.combinations(range(n), 2)
             if draw(once.floats(0, 1)) < density]
    return weights, edges


def independent_sets(n: int, edges: list[tuple[int, int]]) -> list[frozenset[int]]:
    pairs = {frozenset(e) for e in edges}
    return [frozenset(s) for k in range(n + 1) for s in itertools.combinations(range(n), k)
            if not any(frozenset(p) in pairs for p in itertools.combinations(s, 2))]


def is_independent(vertices: tuple[int, ...], edges: list[tuple[int, int]]) -> bool:
    chosen = set(vertices)
    return len(chosen) == len(vertices) and not any(a in chosen and b in chosen for a, b in edges)


@settings(max_examples=80, deadline=None)
@given(case=graphs())
def test_searches_on_random_graphs(case: tuple[list[float], list[tuple[int, int]]]) -> None:
    weights, edges = case
    g = Graph(weights, edges)
    sets = independent_sets(len(weights), edges)
    best = max(sum(weights[v] for v in s) for s in sets)
    for search in (sharon(g), exhaustive(g), greedy(g)):
        assert is_independent(search.vertices, edges)
        assert abs(search.weight - sum(weights[v] for v in search.vertices)) <= TOL * max(1.0, best)
    assert abs(sharon(g).weight - best) <= TOL * max(1.0, best)
    assert abs(sharon(g, max_plans=0).weight - best) <= TOL * max(1.0, best)  # branch and bound
    found = branch_and_bound(g, g.all)
    assert found is not None and is_independent(found[0], edges)
    assert abs(found[1] - best) <= TOL * max(1.0, best)
    assert abs(exhaustive(g).weight - best) <= TOL * max(1.0, best)
    assert gwmin_bound(g) - TOL * max(1.0, best) <= greedy(g).weight <= best + TOL * max(1.0, best)


@settings(max_examples=80, deadline=None)
@given(case=graphs())
def test_pruning_keeps_every_optimal_plan(case: tuple[list[float], list[tuple[int, int]]]) -> None:
    weights, edges = case
    g = Graph(weights, edges)
    sets = independent_sets(len(weights), edges)
    best = max(sum(weights[v] for v in s) for s in sets)
    red = reduce(g)
    assert sorted(red.remaining + red.conflict_free + red.conflict_ridden) == list(range(len(weights)))
    optimal = [s for s in sets if sum(weights[v] for v in s) >= best - TOL * max(1.0, best)]
    for v in red.conflict_ridden:
        assert not any(v in s for s in optimal)
    for v in red.conflict_free:
        assert all(v in s for s in optimal)


@settings(max_examples=80, deadline=None)
@given(case=graphs())
def test_the_plan_finder_makes_each_valid_plan_once(case: tuple[list[float], list[tuple[int, int]]]) -> None:
    weights, edges = case
    g = Graph(weights, edges)
    red = reduce(g)
    for part in g.components(sum(1 << v for v in red.remaining)):
        verts = [v for v in range(len(weights)) if part >> v & 1]
        inside = [(a, b) for a, b in edges if a in verts and b in verts]
        sub = [s for s in independent_sets(len(weights), inside) if s and s <= set(verts)]
        found = plan_finder(g, part)
        assert found is not None
        plan, score, generated = found
        assert generated == len(sub)
        assert abs(score - max(sum(weights[v] for v in s) for s in sub)) <= TOL * max(1.0, score)
        assert set(plan) <= set(verts) and is_independent(plan, edges)


# random sequence workloads --------------------------------------------------------------

TYPES = ("A", "B", "C", "D", "E", "F")


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Queries as specs (types, window, local predicates by position, positions i with an
    adjacent predicate between i and i + 1, whether in the model) and rates."""
    size = draw(once.integers(3, 6))
    if draw(once.booleans()):  # every type once in the backbone, else types may repeat
        backbone = list(draw(st.permutations(TYPES)))[:size]
    else:
        backbone = [draw(once.sampled_from(TYPES)) for _ in range(size)]
    specs = []
    for i in range(draw(once.integers(2, 12))):
        if draw(once.integers(0, 5)):
            lo = draw(once.integers(0, len(backbone) - 2))
            types = backbone[lo:draw(once.integers(lo + 2, len(backbone)))]
            if draw(once.integers(0, 3)) == 0:
                at = draw(once.integers(0, len(types)))
                types = [*types[:at], draw(once.sampled_from(TYPES)), *types[at:]]
        else:
            types = [draw(once.sampled_from(TYPES)) for _ in range(draw(once.integers(2, 5)))]
        odd = draw(once.integers(0, 11))
        local = {draw(once.integers(0, len(types) - 1)): draw(once.sampled_from(("x > 1", "x > 2")))} if odd in (1, 2) else {}
        adjacent = {draw(once.integers(0, len(types) - 2))} if odd == 3 else set()
        specs.append({"name": f"q{i}", "types": types, "window": 20 if odd == 4 else 10,
                      "local": local, "adjacent": adjacent, "model": odd != 5})
    rates = {t: float(draw(once.sampled_from((1, 2, 3, 5, 10, 20, 50)))) for t in TYPES}
    return specs, rates


def text_of(specs: list[dict[str, Any]]) -> str:
    out = []
    for s in specs:
        pattern = ", ".join(f"{t} v{i}" for i, t in enumerate(s["types"]))
        conds = [f"v{i}.{p}" for i, p in s["local"].items()]
        conds += [f"v{i}.x < NEXT(v{i + 1}).x" for i in s["adjacent"]]
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        sem = "" if s["model"] else " SEMANTICS skip-till-next-match"
        out.append(f"QUERY {s['name']} RETURN COUNT(*) PATTERN SEQ({pattern}){sem}{where} "
                   f"WITHIN {s['window']} seconds;")
    return "\n".join(out)


def brute_candidates(specs: list[dict[str, Any]]) -> Counter[Any]:
    """(pattern, {query: leftmost position}) of every shared sub-sequence, by enumeration."""
    groups: dict[Any, dict[str, int]] = {}
    for s in specs:
        if not s["model"]:
            continue
        n = len(s["types"])
        for m in range(n):
            for length in range(2, n - m + 1):
                last = m + length - 1
                if (m > 0 and m - 1 in s["adjacent"]) or (last < n - 1 and last in s["adjacent"]):
                    continue
                key = (s["window"], tuple(s["local"].get(m + i) for i in range(length)),
                       tuple(m + i in s["adjacent"] for i in range(length - 1)))
                groups.setdefault((tuple(s["types"][m:m + length]), key), {}).setdefault(s["name"], m)
    return Counter((p, frozenset(qs.items())) for (p, _), qs in groups.items() if len(qs) >= 2)


def bvalue(rates: dict[str, float], specs: dict[str, dict[str, Any]], pattern: tuple[str, ...],
           queries: tuple[str, ...], positions: tuple[int, ...]) -> float:
    """Eq. 1-8 written out: the non-shared minus the shared cost."""
    def r(q: str, i: int) -> float:
        return rates[specs[q]["types"][i]]

    total = 0.0
    for q, m in zip(queries, positions, strict=True):
        n, end = len(specs[q]["types"]), m + len(pattern)
        total += r(q, 0) * sum(r(q, i) for i in range(n))
        if m:
            total -= r(q, 0) * sum(r(q, i) for i in range(m))
        if end < n:
            total -= r(q, end) * sum(r(q, i) for i in range(end, n))
        if m or end < n:
            total -= (r(q, 0) if m else 1) * r(q, m) * (r(q, end) if end < n else 1)
    return total - rates[pattern[0]] * sum(rates[t] for t in pattern)


@settings(max_examples=60, deadline=None)
@given(case=workloads())
def test_sharon_on_random_sequence_workloads(case: tuple[list[dict[str, Any]], dict[str, float]]) -> None:
    specs, rates = case
    wl = from_entries([query_entry(q) for q in compile_workload(text_of(specs)).queries], rates)
    assert Counter((c.pattern, frozenset(c.positions.items())) for c in wl.candidates) == brute_candidates(specs)
    by_name = {s["name"]: s for s in specs}
    options = [c for c, _ in vertices_of(wl)] + list(wl.candidates)
    masks = conflict_masks(options)
    for (i, a), (j, b) in itertools.combinations(enumerate(options), 2):  # Def. 6, written out
        overlap = any(a.positions[q] < b.positions[q] + b.length and b.positions[q] < a.positions[q] + a.length
                      for q in set(a.queries) & set(b.queries))
        assert bool(masks[i] >> j & 1) == bool(masks[j] >> i & 1) == overlap
    plans = {s: optimize(wl, s) for s in ("sharon", "greedy")}
    plans["sharon-core"] = optimize(wl, "sharon", expanded=False)
    plans["greedy-options"] = optimize(wl, "greedy", expanded=True)
    if len(vertices_of(wl)) <= 12:
        plans["exhaustive"] = optimize(wl, "exhaustive")
        assert abs(plans["exhaustive"].score - plans["sharon"].score) <= TOL * max(1.0, plans["sharon"].score)
    for plan in plans.values():
        used: dict[str, set[int]] = {}
        for s in plan.shared:
            assert s.benefit > 0
            assert abs(s.benefit - bvalue(rates, by_name, s.pattern, s.queries, s.positions)) <= TOL * max(1.0, s.benefit)
            for q, m in zip(s.queries, s.positions, strict=True):
                assert tuple(by_name[q]["types"][m:m + len(s.pattern)]) == s.pattern
                span = set(range(m, m + len(s.pattern)))
                assert not used.get(q, set()) & span, (q, plan.to_dict())
                used.setdefault(q, set()).update(span)
        assert abs(plan.score - sum(s.benefit for s in plan.shared)) <= TOL * max(1.0, plan.score)
    best = plans["sharon"].score
    core = plans["sharon-core"].score  # greedy searches the graph of candidates by default
    assert plans["greedy"].score <= core + TOL * max(1.0, core)
    assert plans["greedy-options"].score <= best + TOL * max(1.0, best)
    assert core <= best + TOL * max(1.0, best)  # options only add plans


def labels(case: tuple[list[dict[str, Any]], dict[str, float]]) -> list[str]:
    specs, rates = case
    wl = from_entries([query_entry(q) for q in compile_workload(text_of(specs)).queries], rates)
    plan, core, gre = optimize(wl), optimize(wl, expanded=False), optimize(wl, "greedy")
    out = ["case"]
    if plan.shared:
        out.append("shares")
    if any(s.origin for s in plan.shared):
        out.append("an option chosen")
    if plan.score > core.score + TOL:
        out.append("options pay")
    if plan.stats.conflict_ridden:
        out.append("conflict-ridden pruned")
    if gre.score < plan.score - TOL:
        out.append("greedy worse")
    if any(len(set(s["types"])) < len(s["types"]) for s in specs):
        out.append("repeated type")
    if any("#" in c.id for c in wl.candidates):
        out.append("one pattern, two keys")
    return out


def test_the_generator_gives_workloads_that_share() -> None:
    counts = drawn_on_a_fixed_seed(workloads(), labels, 100)
    assert counts["case"] == 100
    assert counts["shares"] >= 40
    assert counts["an option chosen"] >= 5
    assert counts["options pay"] >= 5
    assert counts["conflict-ridden pruned"] >= 15
    assert counts["greedy worse"] >= 2
    assert counts["repeated type"] >= 20
    assert counts["one pattern, two keys"] >= 2
