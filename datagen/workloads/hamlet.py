"""Hamlet §6 workload shapes: many patterns around one shared Kleene sub-pattern ``K+``.

``hamlet-shared`` (workload 1): different patterns around one shared ``K+``,
the same window, group-by, aggregates and (with ``same_predicates``)
predicates; with ``adjacent`` every query also asks for rising trends of
``K`` (``K.a < NEXT(K).a`` on the shared attribute: event-grained queries). ``hamlet-diverse`` (workload 2): ``K+`` in patterns of 1–3 types,
windows of 5–20 minutes, different aggregates, group-bys and predicates.
``hamlet-typed``: type-grained queries ``SEQ(Ti, K+)``, ``SEQ(Ti, K+, Tj)``,
``SEQ(K+, Tj)``, each with its own threshold on ``K`` (the shape the
type-grained shared executor is measured on).
"""

from __future__ import annotations

import random
from typing import Any

from trendlake.datagen.workloads.common import (
    Kind,
    QuerySpec,
    adjacent_predicate,
    alias_repeated,
    atom,
    build_query,
    compare,
    first_in_kleene,
    literal_value,
    local_predicate,
    occurrences,
    others,
    pick_distinct,
    plus,
    random_aggregates,
    seq,
    window_minutes,
)
from trendlake.datagen.workloads.facts import StreamFacts
from trendlake.optimizer import ast
from trendlake.optimizer.generator import aggregate


def hamlet_shared(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Hamlet §6 workload 1: different patterns, one shared ``K+``, everything else equal."""
    k = facts.kleene_type(p["kleene_type"])
    rest = others(facts, [k])
    shapes: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for a in rest:
        shapes.append(((a,), ()))
        for c in rest:
            if c != a:
                shapes.append(((a,), (c,)))
                shapes.append(((c, a), ()))
    rng.shuffle(shapes)
    within, slide = window_minutes(p)
    measures = facts.measures.get(k, ())
    shared_attr = measures[0] if measures else None
    shared_literal = literal_value(facts, shared_attr, rng) if shared_attr else None
    specs = []
    for i in range(n):
        before, after = shapes[i % len(shapes)]
        pattern = alias_repeated(seq(*(atom(t) for t in before), plus(atom(k)), *(atom(t) for t in after)))
        kv = first_in_kleene(occurrences(pattern))
        aggs = [aggregate("count_star")]
        if shared_attr:
            aggs.append(aggregate("sum", kv.var, shared_attr))
        conds: list[ast.Condition] = []
        if p["same_predicates"]:
            if shared_attr and shared_literal is not None:
                conds.append(compare("<", kv.var, shared_attr, shared_literal))
        else:
            pred = local_predicate(facts, kv, rng)
            if pred:
                conds.append(pred)
        if p["adjacent"] and shared_attr:
            conds.append(ast.Comparison("<", ast.AttrRef(kv.var, shared_attr), ast.AttrRef(kv.var, shared_attr, next=True)))
        query = build_query(
            f"hs_{i:03d}", pattern, aggregates=aggs, group_by=facts.group_by(), equivalence=facts.equivalence(),
            conditions=conds, within_s=within, slide_s=slide,
        )
        specs.append(QuerySpec(query))
    return specs


def hamlet_typed(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Type-grained queries around one shared ``K+``, each with its own threshold on ``K``:
    ``SEQ(Ti, K+)``, ``SEQ(Ti, K+, Tj)`` and ``SEQ(K+, Tj)`` in turn, ``K.x < c`` with ``c``
    drawn per query (the classes of ``K`` events they match are nested; with
    ``same_threshold`` one for all), ``COUNT(*)``, the
    stream's group-by, one window. No equivalence predicate, no adjacent predicate: every
    query is type-grained."""
    k = facts.kleene_type(p["kleene_type"])
    rest = others(facts, [k])
    measures = facts.measures.get(k, ())
    attr = p["attribute"] or (measures[0] if measures else "")
    if attr and attr not in measures:
        raise ValueError(f"attribute {attr!r} is not a measure of {k} ({', '.join(measures) or 'none'})")
    shapes: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for a in rest:
        shapes.append(((a,), ()))
        for c in rest:
            if c != a:
                shapes.append(((a,), (c,)))
        shapes.append(((), (a,)))
    order = {"before": 0, "both": 1, "after": 2}
    shapes.sort(key=lambda sh: order["both" if sh[0] and sh[1] else "before" if sh[0] else "after"])
    by_form = [[sh for sh in shapes if bool(sh[0]) == b and bool(sh[1]) == a] for b, a in ((True, False), (True, True), (False, True))]
    for forms in by_form:
        rng.shuffle(forms)
    by_form = [forms for forms in by_form if forms]  # a stream of one other type has no SEQ(Ti, K+, Tj)
    within, slide = window_minutes(p)
    same = literal_value(facts, attr, rng) if attr and p["same_threshold"] else None
    specs = []
    for i in range(n):
        forms = by_form[i % len(by_form)]
        before, after = forms[(i // len(by_form)) % len(forms)]
        pattern = alias_repeated(seq(*(atom(t) for t in before), plus(atom(k)), *(atom(t) for t in after)))
        kv = first_in_kleene(occurrences(pattern))
        threshold = same if same is not None else literal_value(facts, attr, rng) if attr else None
        conds = [compare("<", kv.var, attr, threshold)] if threshold is not None else []
        query = build_query(
            f"ht_{i:03d}", pattern, aggregates=[aggregate("count_star")], group_by=facts.group_by(), equivalence=[],
            conditions=conds, within_s=within, slide_s=slide,
        )
        specs.append(QuerySpec(query))
    return specs


def hamlet_diverse(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Hamlet §6 workload 2: ``K+`` in patterns of 1–3 types, windows 5–20 min, varied clauses."""
    k = facts.kleene_type(p["kleene_type"])
    lo_len, hi_len = int(p["min_length"]), int(p["max_length"])
    if not 1 <= lo_len <= hi_len:
        raise ValueError("need 1 <= min_length <= max_length")
    lo_w, hi_w = int(p["min_window_minutes"]), int(p["max_window_minutes"])
    if not 1 <= lo_w <= hi_w:
        raise ValueError("need 1 <= min_window_minutes <= max_window_minutes")
    rest = others(facts, [k])
    keys = facts.grouping_keys()
    specs = []
    for i in range(n):
        length = rng.randint(lo_len, hi_len)
        extra = pick_distinct(rng, rest, length - 1)
        cut = rng.randint(0, len(extra))
        pattern = alias_repeated(seq(*(atom(t) for t in extra[:cut]), plus(atom(k)), *(atom(t) for t in extra[cut:])))
        occs = occurrences(pattern)
        conds: list[ast.Condition] = []
        for o in rng.sample(occs, min(len(occs), rng.randint(0, 2))):
            pred = local_predicate(facts, o, rng)
            if pred:
                conds.append(pred)
        if rng.random() < 0.3:
            adjacent = adjacent_predicate(facts, first_in_kleene(occs), rng)
            if adjacent:
                conds.append(adjacent)
        group_by = rng.sample(keys, rng.randint(0, min(1, len(keys)))) if keys else []
        equivalence = [a for a in facts.equivalence() if a not in group_by] if rng.random() < 0.7 else []
        within_min = rng.randint(lo_w, hi_w)
        slide_min = rng.choice([s for s in (1, 2, 5, within_min) if s <= within_min])
        query = build_query(
            f"hd_{i:03d}", pattern, aggregates=random_aggregates(facts, occs, rng, rng.randint(1, 2)),
            group_by=group_by, equivalence=equivalence, conditions=conds,
            within_s=within_min * 60, slide_s=slide_min * 60,
        )
        specs.append(QuerySpec(query))
    return specs


KINDS: dict[str, Kind] = {
    "hamlet-shared": Kind(hamlet_shared, "Hamlet §6 (workload 1: shared Kleene sub-pattern)",
                          {"same_predicates": True, "adjacent": False, "kleene_type": "", "window_minutes": 10,
                           "slide_minutes": 0}),
    "hamlet-typed": Kind(hamlet_typed, "Hamlet §6 (type-grained queries around K+, a threshold on K each)",
                         {"kleene_type": "", "attribute": "", "same_threshold": False, "window_minutes": 10,
                          "slide_minutes": 5}),
    "hamlet-diverse": Kind(hamlet_diverse, "Hamlet §6 (workload 2: diverse)",
                           {"kleene_type": "", "min_length": 1, "max_length": 3, "min_window_minutes": 5,
                            "max_window_minutes": 20}),
}
