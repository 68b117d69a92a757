"""GLORIA's planners on random small workloads.

Workloads are query text (2-8 queries over 3-6 event types: SEQ patterns, flat and
nested Kleene, now and then another window, partitioning, semantics or a local
predicate) through the real parser and ``optimizer.plan.query_entry``, with random rates.

* Every plan of ``gloria``, ``gloria-noprune`` and ``gloria-greedy`` covers each query's
  transitions exactly once, and its Q-sets group only queries that may share (checked
  here from the query entries, not from the model's keys).
* Where the pool graph is a forest (``stats.exact``), the pruned search finds a plan of the
  same cost as the search without pruning, and on tiny workloads (2-4 queries) the same
  cost as a brute-force enumeration, written here, of every workload sharing plan the
  generation rules allow (docs/gloria.md, "The plan space"), each costed by
  ``cost.plan_cost`` from the plan alone; Greedy never costs less than the optimum.
* The path weight the search reports is the plan's cost (Lemma 4.4).
"""

from __future__ import annotations

import itertools
from typing import Any
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st
from trendlake.optimizer import compile_workload
from trendlake.optimizer.gloria import (
    Constants,
    from_entries,
    greedy,
    optimize,
    plan_cost,
    search,
    validate,
)
from trendlake.optimizer.gloria.search import _build
from trendlake.optimizer.plan import query_entry

from tests.randomized import drawn_on_a_fixed_seed, once

TYPES = ("A", "B", "C", "D", "E", "F")


@st.composite
def items(draw: st.DrawFn, pool: list[str]) -> str:
    """One item of a SEQ using up types from ``pool``: an atom, X+, SEQ(X, Y)+,
    SEQ(X, Y+)+ or SEQ(X, SEQ(Y, Z)+)+."""
    shape = draw(once.sampled_from(("atom", "atom", "atom", "atom", "atom", "plus", "flat", "nested", "deep")))
    need = {"atom": 1, "plus": 1, "flat": 2, "nested": 2, "deep": 3}[shape]
    if len(pool) < need:
        shape, need = "atom", 1
    picked = [pool.pop(0) for _ in range(need)]
    return {
        "atom": lambda: picked[0],
        "plus": lambda: f"{picked[0]}+",
        "flat": lambda: f"SEQ({picked[0]}, {picked[1]})+",
        "nested": lambda: f"SEQ({picked[0]}, {picked[1]}+)+",
        "deep": lambda: f"SEQ({picked[0]}, SEQ({picked[1]}, {picked[2]})+)+",
    }[shape]()


@st.composite
def workloads(draw: st.DrawFn, min_queries: int = 2, max_queries: int = 8) -> tuple[str, dict[str, float]]:
    """Most queries take a slice of one backbone of items (so that they share
    transitions and cycles), now and then with a detour through another type (two routes
    between two pools: a pool graph that is not a forest), some are drawn on their own."""
    ntypes = draw(once.integers(3, 6))
    types = list(TYPES[:ntypes])
    pool = list(draw(st.permutations(types)))
    backbone = []
    while pool:
        backbone.append(draw(items(pool)))
    n = draw(once.integers(min_queries, max_queries))
    queries = []
    for i in range(n):
        if draw(once.integers(0, 7)):
            lo = draw(once.integers(0, len(backbone) - 1))
            hi = draw(once.integers(lo + 1, len(backbone)))
            parts = backbone[lo:hi]
            extra = [t for t in types if t not in "".join(parts)]
            if extra and draw(once.integers(0, 3)) == 0:  # a detour: two routes between pools
                at = draw(once.integers(0, len(parts)))
                parts = [*parts[:at], draw(once.sampled_from(tuple(extra))), *parts[at:]]
        else:
            own = list(draw(st.permutations(types)))[: draw(once.integers(2, ntypes))]
            parts = []
            while own and len(parts) < 4:
                parts.append(draw(items(own)))
        pattern = parts[0] if len(parts) == 1 else "SEQ(" + ", ".join(parts) + ")"
        odd = draw(once.integers(0, 15))
        window = "WITHIN 20 seconds" if odd == 0 else "WITHIN 10 seconds"
        semantics = "\nSEMANTICS skip-till-next-match" if odd == 1 else ""
        group = "\nGROUP-BY g" if odd == 2 else ""
        ret = "g, COUNT(*)" if odd == 2 else "COUNT(*)"
        used = [t for t in types if t in pattern]
        where = f"\nWHERE {used[0]}.x > 1" if odd == 3 else ""
        queries.append(f"QUERY q{i}\nRETURN {ret}\nPATTERN {pattern}{semantics}{where}{group}\n{window};")
    rates = {t: float(draw(once.sampled_from((1, 2, 3, 5, 10, 20, 50)))) for t in types}
    return "\n\n".join(queries), rates


def entries_of(text: str) -> list[dict[str, Any]]:
    return [query_entry(q) for q in compile_workload(text).queries]


def selectivity(entries: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """A variable with a local predicate matches 40% of its type."""
    return {(e["name"], v): 0.4 for e in entries for v in e["local_predicates"]}


def check_valid(plan: Any, entries: list[dict[str, Any]]) -> None:
    by_name = {e["name"]: e for e in entries}
    covered: dict[str, list[tuple[str, str]]] = {e["name"]: [] for e in entries}
    for t in plan.transitions:
        seen = [q for qs in t.qsets for q in qs.queries]
        assert len(seen) == len(set(seen)), f"{t}: a query in two Q-sets"
        for qs in t.qsets:
            assert (qs.snapshot is None) == (len(qs.queries) == 1), t
            for q in qs.queries:
                covered[q].append((t.source, t.target))
            if len(qs.queries) > 1:
                first = by_name[qs.queries[0]]
                for q in qs.queries:
                    e = by_name[q]
                    types = {v["name"]: v["type"] for v in e["variables"]}
                    assert e["semantics"] == "skip-till-any-match" and not e["negations"]
                    assert (e["partition_by"], e["window"]) == (first["partition_by"], first["window"]), t
                    preds = {types[v]: p for v, p in e["local_predicates"].items()}
                    fpreds = {v["type"]: first["local_predicates"].get(v["name"]) for v in first["variables"]}
                    for ty in (t.source, t.target):
                        assert preds.get(ty) == (fpreds.get(ty) or None) or (not preds.get(ty) and not fpreds.get(ty)), t
    for name, got in covered.items():
        e = by_name[name]
        types = {v["name"]: v["type"] for v in e["variables"]}
        want = sorted((types[x["from"]], types[x["to"]]) for x in e["template"]["transitions"])
        assert sorted(got) == want, f"{name}: transitions covered {sorted(got)}, template {want}"


def brute_force(wl: Any, c: Constants) -> float:
    """The least ``plan_cost`` over every plan the generation rules allow (see module doc)."""
    best = [float("inf")]
    order = list(wl.order)

    def partitions(xs: list[str]) -> Any:
        if not xs:
            yield []
            return
        first, rest = xs[0], xs[1:]
        for p in partitions(rest):
            yield [[first], *p]
            for i in range(len(p)):
                yield [*p[:i], [first, *p[i]], *p[i + 1:]]

    def qset_of(plan: dict[str, Any], u: str, q: str) -> Any:
        for m, s in plan[u]:
            if q in m:
                return m, s
        return None

    def candidates(v: str, plan: dict[str, Any]) -> Any:
        unit = wl.units[v]
        members = list(wl.members[v])
        key = {q: wl.by_name[q].keys[v] for q in members}
        if unit.kind == "alone":
            yield ()
            return
        if unit.kind == "kleene":
            classes: dict[Any, list[str]] = {}
            for q in members:
                classes.setdefault(key[q], []).append(q)
            opts = [[None] + ([(frozenset(cl), t) for t in unit.types] if len(cl) > 1 else []) for cl in classes.values()]
            for combo in itertools.product(*opts):
                yield tuple(x for x in combo if x is not None)
            return
        at = unit.source
        for part in partitions(members):
            if any(len({key[q] for q in b}) > 1 for b in part):
                continue
            blocks = [frozenset(b) for b in part if len(b) > 1]
            snaps = []
            for b in blocks:
                opts = {at}
                for q in b:
                    u = wl.prev(q, v)
                    if u is not None and (x := qset_of(plan, u, q)) is not None:
                        opts.add(x[1])
                snaps.append(sorted(opts))
            for chosen in itertools.product(*snaps):
                qsets = tuple(zip(blocks, chosen, strict=True))
                if allowed(v, qsets, plan, key):
                    yield qsets

    def piece(v: str, q: str, plan: dict[str, Any]) -> Any:
        u = wl.prev(q, v)
        if u is None or (x := qset_of(plan, u, q)) is None:
            return None
        m, s = x
        p = frozenset(y for y in m if v in wl.by_name[y].units and wl.prev(y, v) == u
                      and wl.by_name[y].keys[v] == wl.by_name[q].keys[v])
        return (p, s) if len(p) > 1 else None

    def cnt(m: frozenset[str], t: str) -> float:
        return max(wl.by_name[q].count(t) for q in m)

    def allowed(v: str, qsets: Any, plan: dict[str, Any], key: dict[str, Any]) -> bool:
        at = wl.units[v].source
        merged: dict[Any, int] = {}
        shared = set()
        for m, t in qsets:
            shared |= m
            q = next(iter(m))
            p = piece(v, q, plan)
            if p is not None and p[0] == m and t == p[1]:
                continue  # reuse
            if p is not None and p[0] == m and t == at and cnt(m, at) < cnt(m, p[1]):
                continue  # local snapshots
            if t != at:
                return False
            merged[key[q]] = merged.get(key[q], 0) + 1
        for k, n in merged.items():
            if n > 1 or any(key[q] == k and q not in shared for q in wl.members[v]):
                return False
        return True

    def walk(i: int, plan: dict[str, Any]) -> None:
        if i == len(order):
            best[0] = min(best[0], plan_cost(wl, plan, c))
            return
        v = order[i]
        for qsets in list(candidates(v, plan)):
            plan[v] = qsets
            walk(i + 1, plan)
        del plan[v]

    walk(0, {})
    return best[0]


CONSTANTS = st.builds(Constants, evaluate=once.sampled_from((0.5, 1.0, 2.0)), insert=once.sampled_from((0.0, 1.0)))


@given(case=workloads(), c=CONSTANTS)
def test_plans_are_valid_and_pruning_keeps_the_optimum(case: tuple[str, dict[str, float]], c: Constants) -> None:
    text, rates = case
    entries = entries_of(text)
    wl = from_entries(entries, rates, selectivity(entries))
    pruned, full, greed = optimize(wl, c), optimize(wl, c, prune=False), greedy(wl, c)
    for plan in (pruned, full, greed):
        check_valid(plan, entries)
        assert validate(wl, plan.by_unit()) == []
        assert abs(plan_cost(wl, plan.by_unit(), c) - plan.cost) <= 1e-9 * max(1.0, plan.cost)
        assert plan.cost <= plan.non_shared_cost + 1e-9 or plan is greed
    if pruned.stats.exact:
        assert abs(pruned.cost - full.cost) <= 1e-9 * max(1.0, full.cost)
        assert greed.cost >= pruned.cost - 1e-9 * max(1.0, greed.cost)
        assert pruned.stats.nodes_generated <= full.stats.nodes_generated
        weight = sum(c.start * q.count(t) for q in wl.queries if not q.units for t in q.start)
        for part in search.components(wl):  # the planner plans parts apart
            if part.order:
                weight += _build(part, c, True)[1].search().weight
        assert abs(weight - pruned.cost) <= 1e-9 * max(1.0, pruned.cost)


@given(case=workloads(max_queries=4), c=CONSTANTS)
def test_gloria_finds_the_brute_force_optimum(case: tuple[str, dict[str, float]], c: Constants) -> None:
    text, rates = case
    entries = entries_of(text)
    wl = from_entries(entries, rates, selectivity(entries))
    plan = optimize(wl, c)
    best = brute_force(wl, c)
    assert plan.cost >= best - 1e-9 * max(1.0, best)
    assert greedy(wl, c).cost >= best - 1e-9 * max(1.0, best)
    if plan.stats.exact:
        assert abs(plan.cost - best) <= 1e-9 * max(1.0, best), (plan.to_dict(), best)


def labels(case: tuple[str, dict[str, float]]) -> list[str]:
    text, rates = case
    entries = entries_of(text)
    wl = from_entries(entries, rates, selectivity(entries))
    plan, greed = optimize(wl), greedy(wl)
    out = ["case"]
    shared = plan.shared()
    if shared:
        out.append("shares")
    if any(t.unit[0] != "K" for t in shared):
        out.append("seq shared")
    if any(t.unit[0] == "K" for t in shared):
        out.append("kleene shared")
    if any(t.unit[0] == "K" and len({a for a, _ in wl.units[t.unit].transitions}) > 1 for t in shared):
        out.append("multi-type cycle shared")
    if plan.stats.nodes_pruned:
        out.append("pruned")
    if greed.cost > plan.cost + 1e-9:
        out.append("greedy worse")
    if not plan.stats.exact:
        out.append("cut")
    return out


def test_the_generator_gives_workloads_that_share() -> None:
    """Coverage floors (docs/testing.md) on the fixed seed's 150 workloads: the planners
    share on a good part of them, SEQ and Kleene sub-patterns both, pruning acts, Greedy
    misses the optimum now and then, and some pool graphs are cut."""
    counts = drawn_on_a_fixed_seed(workloads(), labels, 150)
    print(dict(counts))
    assert counts["shares"] >= 30
    assert counts["seq shared"] >= 10 and counts["kleene shared"] >= 10
    assert counts["multi-type cycle shared"] >= 5
    assert counts["pruned"] >= 20 and counts["greedy worse"] >= 5
    assert counts["cut"] >= 1


@given(case=workloads(), c=CONSTANTS)
def test_coarse_generation_past_the_limit_gives_valid_plans(case: tuple[str, dict[str, float]],
                                                            c: Constants) -> None:
    """With the candidate limit at 2, pools are generated coarsely (one choice for all the
    pieces of a node): plans stay valid, are costed from the plan, never cost more than
    sharing nothing, and are not claimed exact."""
    text, rates = case
    entries = entries_of(text)
    wl = from_entries(entries, rates, selectivity(entries))
    with mock.patch.object(search, "LIMIT", 2):
        plan = optimize(wl, c)
        coarse = sum(_build(part, c, True)[0].coarse for part in search.components(wl) if part.order)
    check_valid(plan, entries)
    assert validate(wl, plan.by_unit()) == []
    assert abs(plan_cost(wl, plan.by_unit(), c) - plan.cost) <= 1e-9 * max(1.0, plan.cost)
    assert plan.cost <= plan.non_shared_cost + 1e-9 * max(1.0, plan.cost)
    if coarse:
        assert not plan.stats.exact
