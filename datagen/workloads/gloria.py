"""GLORIA §8 workload shapes: shareable SEQ and (nested) Kleene sub-patterns, windows powers of 5 minutes.

``gloria-seq``: SEQ patterns holding shareable SEQ sub-patterns.
``gloria-kleene``: one shareable flat or nested Kleene sub-pattern (length
2–10, nesting depth 1–5) inside different SEQ sub-patterns.
``gloria-mixed``: SEQ and Kleene queries at a Kleene:SEQ ratio (1:6 … 1:2).
Every query has its own group-by, predicates and aggregates.
"""

from __future__ import annotations

import random
from typing import Any

from trendlake.datagen.workloads.common import (
    Kind,
    QuerySpec,
    alias_repeated,
    atom,
    build_query,
    local_predicate,
    occurrences,
    pick_distinct,
    plus,
    random_aggregates,
    ratio_fraction,
    seq,
    sequence_with_shared,
    shared_pool,
)
from trendlake.datagen.workloads.facts import StreamFacts
from trendlake.optimizer import ast


def _window(rng: random.Random, p: dict[str, Any]) -> tuple[int, int]:
    powers = tuple(p["window_powers"])
    if not powers or min(powers) < 1:
        raise ValueError("window_powers must be positive integers (5**k minutes)")
    within = 5 ** rng.choice(powers) * 60
    slide = min(int(p["slide_minutes"]) * 60, within)
    return within, slide


def _query(rng: random.Random, facts: StreamFacts, name: str, p: dict[str, Any], pattern: ast.Pattern) -> QuerySpec:
    """The query of ``pattern`` with its own group-by, predicates and aggregates (GLORIA §8)."""
    pattern = alias_repeated(pattern)
    occs = occurrences(pattern)
    within, slide = _window(rng, p)
    keys = facts.grouping_keys()
    group_by = rng.sample(keys, rng.randint(0, min(1, len(keys)))) if keys else []
    conds = []
    for o in rng.sample(occs, min(len(occs), rng.randint(0, 2))):
        pred = local_predicate(facts, o, rng)
        if pred:
            conds.append(pred)
    aggs = random_aggregates(facts, occs, rng, rng.randint(0, 2))
    query = build_query(name, pattern, aggregates=aggs, group_by=group_by, equivalence=facts.equivalence(),
                        conditions=conds, within_s=within, slide_s=slide)
    return QuerySpec(query)


def _seq_query(rng: random.Random, facts: StreamFacts, name: str, p: dict[str, Any], pool: list[list[str]]) -> QuerySpec:
    lo, hi = int(p["min_length"]), int(p["max_length"])
    if not 1 <= lo <= hi:
        raise ValueError("need 1 <= min_length <= max_length")
    length = rng.randint(lo, hi)
    types = sequence_with_shared(rng, facts, length, [rng.choice(pool)])
    return _query(rng, facts, name, p, seq(*(atom(t) for t in types)))


def nested_kleene(types: list[str], depth: int, rng: random.Random) -> ast.Pattern:
    """A Kleene sub-pattern over ``types`` (in order) with ``depth`` nested ``+``.

    Each of the ``depth`` layers holds at least one type; the innermost is
    ``T+`` (one type) or ``SEQ(...)+``, an outer layer wraps the inner one with
    its own types before and after it: ``SEQ(C, SEQ(A, B)+, D)+``.
    """
    if not 1 <= depth <= len(types):
        raise ValueError(f"nesting depth {depth} needs 1..{len(types)} (the Kleene length)")
    # layer sizes: every layer >= 1, the rest spread at random
    sizes = [1] * depth
    for _ in range(len(types) - depth):
        sizes[rng.randrange(depth)] += 1
    # outermost layer first: its types are split around the inner layers
    layers: list[tuple[list[str], list[str]]] = []
    pos_front, pos_back = 0, len(types)
    for size in sizes[:-1]:
        before = rng.randint(0, size)
        front = types[pos_front : pos_front + before]
        back = types[pos_back - (size - before) : pos_back]
        pos_front += before
        pos_back -= size - before
        layers.append((front, back))
    inner_types = types[pos_front:pos_back]
    node: ast.Pattern = plus(seq(*(atom(t) for t in inner_types)))
    for front, back in reversed(layers):
        node = plus(seq(*(atom(t) for t in front), node, *(atom(t) for t in back)))
    return node


def _kleene_query(rng: random.Random, facts: StreamFacts, name: str, p: dict[str, Any], kleene: ast.Pattern,
                  kleene_types: list[str]) -> QuerySpec:
    max_seq = int(p["max_seq"])
    n_before = rng.randint(0, max_seq)
    n_after = rng.randint(0 if n_before else 1, max(1, max_seq))
    extra = pick_distinct(rng, list(facts.types), n_before + n_after, avoid=kleene_types)
    pattern = seq(*(atom(t) for t in extra[:n_before]), kleene, *(atom(t) for t in extra[n_before:]))
    return _query(rng, facts, name, p, pattern)


def _shared_kleene(rng: random.Random, facts: StreamFacts, p: dict[str, Any]) -> tuple[ast.Pattern, list[str]]:
    length, depth = int(p["kleene_length"]), int(p["nesting"])
    if length < 1:
        raise ValueError("kleene_length must be at least 1")
    types = pick_distinct(rng, list(facts.types), length)
    return nested_kleene(types, depth, rng), types


def gloria_seq(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """GLORIA §8 SEQ workload."""
    pool = shared_pool(rng, facts, max(2, n // 3), min(int(p["shared_length"]), int(p["min_length"])))
    return [_seq_query(rng, facts, f"gs_{i:03d}", p, pool) for i in range(n)]


def gloria_kleene(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """GLORIA §8 Kleene workload: one shared (nested) Kleene sub-pattern, different SEQ parts."""
    kleene, types = _shared_kleene(rng, facts, p)
    return [_kleene_query(rng, facts, f"gk_{i:03d}", p, kleene, types) for i in range(n)]


def gloria_mixed(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """GLORIA §8 mixed workload: Kleene and SEQ queries at ``kleene_ratio`` (K:S)."""
    share = ratio_fraction(p["kleene_ratio"])
    n_kleene = round(n * share)
    if share > 0 and n >= 2:
        n_kleene = max(1, n_kleene)
    kinds = ["kleene"] * n_kleene + ["seq"] * (n - n_kleene)
    rng.shuffle(kinds)
    kleene, ktypes = _shared_kleene(rng, facts, p)
    pool = shared_pool(rng, facts, max(2, n // 3), min(int(p["shared_length"]), int(p["min_length"])))
    specs = []
    for i, kind in enumerate(kinds):
        if kind == "kleene":
            specs.append(_kleene_query(rng, facts, f"gm_{i:03d}", p, kleene, ktypes))
        else:
            specs.append(_seq_query(rng, facts, f"gm_{i:03d}", p, pool))
    return specs


_SEQ_DEFAULTS = {"min_length": 3, "max_length": 5, "shared_length": 2, "window_powers": (1, 2), "slide_minutes": 5}
_KLEENE_DEFAULTS = {"kleene_length": 3, "nesting": 1, "max_seq": 2, "window_powers": (1, 2), "slide_minutes": 5}

KINDS: dict[str, Kind] = {
    "gloria-seq": Kind(gloria_seq, "GLORIA §8 (SEQ workload)", dict(_SEQ_DEFAULTS)),
    "gloria-kleene": Kind(gloria_kleene, "GLORIA §8 (Kleene workload)", dict(_KLEENE_DEFAULTS)),
    "gloria-mixed": Kind(gloria_mixed, "GLORIA §8 (mixed workload)",
                         {**_SEQ_DEFAULTS, **_KLEENE_DEFAULTS, "kleene_ratio": "1:6"}),
}
