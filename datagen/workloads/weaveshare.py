"""Weave Share §7 workload shape: one pattern under many windows that share panes.

Slides follow a Zipf law over a discrete range (rank 1 is the largest
slide: more skew, more large-slide queries); a window's range is its slide
times an overlap factor drawn uniformly in [1, ω_max]. Every length is a
multiple of one unit, so the windows share panes.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

from trendlake.datagen.workloads.common import (
    Kind,
    QuerySpec,
    alias_repeated,
    atom,
    build_query,
    first_in_kleene,
    occurrences,
    others,
    pick_distinct,
    plus,
    seq,
    zipf_weights,
)
from trendlake.datagen.workloads.facts import StreamFacts
from trendlake.optimizer.generator import aggregate


def weaveshare(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Weave Share §7: Zipf-distributed slides, ranges = slide × overlap factor ~ U[1, ω_max].
    Each query returns COUNT(*) and, with ``aggregates`` ``sum``, the SUM of the Kleene type's
    first measure, with ``count`` COUNT of the Kleene type (a state of counts only, which the
    ``panes`` kind shares)."""
    skew, omega_max = float(p["skew"]), float(p["max_overlap"])
    n_slides, unit = int(p["slides"]), int(p["slide_unit_seconds"])
    if n_slides < 1 or unit < 1 or omega_max < 1 or skew < 0:
        raise ValueError("need slides >= 1, slide_unit_seconds >= 1, max_overlap >= 1, skew >= 0")
    slides = list(range(n_slides, 0, -1))
    weights = zipf_weights(n_slides, skew)
    k = facts.kleene_type(p["kleene_type"])
    start = pick_distinct(rng, others(facts, [k]), 1)[0]
    pattern = alias_repeated(seq(atom(start), plus(atom(k))))
    kv = first_in_kleene(occurrences(pattern))
    measures = facts.measures.get(k, ())
    aggs = [aggregate("count_star")]
    if p["aggregates"] == "count":
        aggs.append(aggregate("count", kv.var))
    elif p["aggregates"] != "sum":
        raise ValueError(f"aggregates: sum or count, not {p['aggregates']!r}")
    elif measures:
        aggs.append(aggregate("sum", kv.var, measures[0]))
    specs = []
    for i in range(n):
        s = rng.choices(slides, weights)[0]
        omega = rng.uniform(1.0, omega_max)
        r = max(s, math.floor(omega * s))
        query = build_query(
            f"ws_{i:03d}", pattern, aggregates=aggs, group_by=facts.group_by(), equivalence=facts.equivalence(),
            within_s=r * unit, slide_s=s * unit,
        )
        comment = f"slide {s} x {unit}s, overlap factor {Fraction(r, s).limit_denominator(1000)} (drawn {omega:.2f})"
        specs.append(QuerySpec(query, comment))
    return specs


KINDS: dict[str, Kind] = {
    "weaveshare": Kind(weaveshare, "Weave Share §7 (Zipf slides, maximum overlap factor)",
                       {"skew": 0.6, "max_overlap": 10.0, "slides": 10, "slide_unit_seconds": 60, "kleene_type": "",
                        "aggregates": "sum"}),
}
