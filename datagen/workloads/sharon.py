"""Sharon §VIII workload shapes: fixed-length sequences sharing sub-sequences (no Kleene).

``sharon-traffic`` (q1–q7): routes of ``length`` types built from a pool of
shared sub-sequences (a few popular road segments, Zipf), ``[id]``,
``COUNT(*)``, 10 minutes sliding every minute. ``sharon-ecommerce``
(q8–q11): item sequences that all start with one shared pair, 20 minutes
sliding every minute.
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
    others,
    pick_distinct,
    seq,
    sequence_with_shared,
    shared_pool,
    window_minutes,
    zipf_weights,
)
from trendlake.datagen.workloads.facts import StreamFacts
from trendlake.optimizer.generator import aggregate


def sharon_traffic(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Sharon §VIII traffic workload: routes of ``length`` types sharing sub-sequences; COUNT(*)."""
    length, shared_len = int(p["length"]), int(p["shared_length"])
    if length < 1 or shared_len < 1:
        raise ValueError("length and shared_length must be at least 1")
    pool_size = int(p["shared_patterns"]) or max(2, n // 3)
    pool = shared_pool(rng, facts, pool_size, min(shared_len, length))
    weights = zipf_weights(len(pool), 1.0)  # a few popular road segments
    within, slide = window_minutes(p)
    specs = []
    for i in range(n):
        pieces = [pool[j] for j in sorted(set(rng.choices(range(len(pool)), weights, k=rng.randint(1, 2))))]
        types = sequence_with_shared(rng, facts, length, pieces)
        query = build_query(
            f"st_{i:03d}", alias_repeated(seq(*(atom(t) for t in types))), aggregates=[aggregate("count_star")],
            equivalence=facts.equivalence(), within_s=within, slide_s=slide,
        )
        specs.append(QuerySpec(query))
    return specs


def sharon_ecommerce(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Sharon §VIII e-commerce workload: item sequences that all start with one shared pair."""
    length, shared_len = int(p["length"]), int(p["shared_length"])
    if length < shared_len or shared_len < 1:
        raise ValueError("need 1 <= shared_length <= length")
    prefix = pick_distinct(rng, list(facts.types), shared_len)
    rest_types = others(facts, prefix)
    tails = [pick_distinct(rng, rest_types, min(2, length - shared_len) or 1) for _ in range(max(1, n // 4))]
    within, slide = window_minutes(p)
    specs = []
    for i in range(n):
        rest = length - shared_len
        pieces = [rng.choice(tails)] if rest >= 2 and rng.random() < 0.5 else []
        body = sequence_with_shared(rng, facts, rest, pieces, avoid=prefix) if rest else []
        query = build_query(
            f"se_{i:03d}", alias_repeated(seq(*(atom(t) for t in [*prefix, *body]))),
            aggregates=[aggregate("count_star")], equivalence=facts.equivalence(), within_s=within, slide_s=slide,
        )
        specs.append(QuerySpec(query))
    return specs


KINDS: dict[str, Kind] = {
    "sharon-traffic": Kind(sharon_traffic, "Sharon §VIII (traffic, q1-q7)",
                           {"length": 5, "shared_length": 2, "shared_patterns": 0, "window_minutes": 10,
                            "slide_minutes": 1}),
    "sharon-ecommerce": Kind(sharon_ecommerce, "Sharon §VIII (e-commerce, q8-q11)",
                             {"length": 4, "shared_length": 2, "window_minutes": 20, "slide_minutes": 1}),
}
