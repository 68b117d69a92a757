"""Seeded workload generators shaped after the papers' experiments (``trendlake workload``).

Each generator writes a workload (``*.etq`` text) for one stream schema: event
types and attributes come from the schema, the *shape* of the queries from the
paper's experimental section. Same kind, query count, seed, stream and
parameters → the same text, byte for byte.

| kind | paper | shape |
|---|---|---|
| ``hamlet-shared`` | Hamlet §6, first workload | different patterns around one shared Kleene ``K+``; same window, group-by, aggregates; same (or, with ``same_predicates=false``, different) predicates |
| ``hamlet-diverse`` | Hamlet §6, second workload | patterns of 1–3 types holding ``K+``, windows 5–20 min, different aggregates, group-bys and predicates |
| ``sharon-traffic`` | Sharon §VIII (q1–q7) | fixed-length sequences (routes) built from a pool of shared sub-sequences, ``[id]``, ``COUNT(*)``, 10 min sliding every minute |
| ``sharon-ecommerce`` | Sharon §VIII (q8–q11) | sequences that all start with one shared pair, 20 min sliding every minute |
| ``gloria-seq`` | GLORIA §8 SEQ workload | SEQ patterns with shareable SEQ sub-patterns, windows powers of 5 min sliding every 5 min |
| ``gloria-kleene`` | GLORIA §8 Kleene workload | one shareable flat or nested Kleene sub-pattern (length 2–10, nesting depth 1–5) inside different SEQ sub-patterns |
| ``gloria-mixed`` | GLORIA §8 mixed workload | SEQ and Kleene queries at a Kleene:SEQ ratio (1:6 … 1:2) |
| ``weaveshare`` | Weave Share §7 | one pattern, windows whose slides follow a Zipf law over a discrete range and whose ranges are slide × overlap factor (uniform in [1, ω_max]); every length is a multiple of one unit, so the windows share panes |

Attributes are chosen generically (``StreamFacts``): *keys* are strings and
open-ended longs every event type carries — the first becomes the equivalence
predicate (``[driver]``), a string one after it the GROUP-BY; *measures* are
the other numeric attributes, used in predicates and aggregates of the types
that carry them. Literal thresholds fall inside
the schema's ``min``/``max`` (or ``ranges`` given by the caller, e.g. measured
on data). A type used more than once in a pattern gets an alias per occurrence
(``Travel_1``, ``Travel_2``).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

# ---- stream facts ----------------------------------------------------------------


@dataclass(frozen=True)
class StreamFacts:
    """What a generator needs to know about a stream schema.

    *Keys* are attributes every event type carries: strings, and longs
    without a declared ``max`` (open-ended identifiers). The first key in
    schema order is the equivalence attribute (``[driver]``, ``[company]``);
    GROUP-BY takes the first string key after it, else the first bounded long
    every type carries, else another key. *Measures* are the other numeric
    attributes, per event type that carries them.
    """

    name: str
    types: tuple[str, ...]
    keys: tuple[str, ...]  # in schema order
    bounded: tuple[str, ...]  # longs every type carries, with a max (xway, lane)
    measures: dict[str, tuple[str, ...]]  # event type -> numeric non-key attributes it carries
    kinds: dict[str, str]  # attribute -> long | double | string | boolean
    ranges: dict[str, tuple[float, float]]  # numeric attribute -> (low, high) for literals

    @classmethod
    def from_schema(cls, schema: dict[str, Any], ranges: dict[str, tuple[float, float]] | None = None) -> StreamFacts:
        types = tuple(schema["event_types"])
        attrs: dict[str, dict[str, Any]] = schema.get("attributes", {})

        def carriers(spec: dict[str, Any]) -> set[str]:
            carried = spec.get("types", "*")
            return set(types) if carried == "*" else set(carried)

        keys, bounded, numeric = [], [], []
        for name, spec in attrs.items():
            kind = spec.get("type")
            everywhere = carriers(spec) >= set(types)
            if everywhere and (kind == "string" or (kind == "long" and "max" not in spec)):
                keys.append(name)
                continue
            if everywhere and kind == "long":
                bounded.append(name)
            if kind in ("long", "double"):
                numeric.append(name)
        measures = {t: tuple(a for a in numeric if t in carriers(attrs[a])) for t in types}
        given = dict(ranges or {})
        bounds: dict[str, tuple[float, float]] = {}
        for name, spec in attrs.items():
            if spec.get("type") not in ("long", "double"):
                continue
            if name in given:
                bounds[name] = (float(given[name][0]), float(given[name][1]))
                continue
            lo = float(spec.get("min", 0))
            hi = float(spec.get("max", lo + 100))
            bounds[name] = (lo, hi)
        return cls(
            name=str(schema.get("stream", "stream")),
            types=types,
            keys=tuple(keys),
            bounded=tuple(bounded),
            measures=measures,
            kinds={n: str(s.get("type")) for n, s in attrs.items()},
            ranges=bounds,
        )

    @property
    def category_keys(self) -> tuple[str, ...]:
        return tuple(k for k in self.keys if self.kinds.get(k) == "string")

    def kleene_type(self, wanted: str = "") -> str:
        """The type the shared Kleene sub-pattern repeats: ``wanted``, else the one with most
        double measures (the earliest in the schema among equals)."""
        if wanted:
            if wanted not in self.types:
                raise ValueError(f"kleene_type {wanted!r} is not an event type of stream {self.name} ({', '.join(self.types)})")
            return wanted

        def doubles(t: str) -> int:
            return sum(1 for a in self.measures[t] if self.kinds.get(a) == "double")

        return max(self.types, key=lambda t: (doubles(t), -self.types.index(t)))

    def equivalence(self) -> list[str]:
        """The equivalence attribute (the first key), as a list (empty without keys)."""
        return list(self.keys[:1])

    def group_by(self) -> list[str]:
        """The default GROUP-BY attribute, as a list (empty when there is none besides the equivalence)."""
        rest = [k for k in self.category_keys if k not in self.keys[:1]]
        if rest:
            return rest[:1]
        if self.bounded:
            return list(self.bounded[:1])
        return list(self.keys[1:2])

    def grouping_keys(self) -> list[str]:
        """Attributes a query may group by: every key but the equivalence one, and the bounded ones."""
        return [k for k in self.keys[1:]] + list(self.bounded)


# ---- patterns --------------------------------------------------------------------


@dataclass(frozen=True)
class Atom:
    type: str
    tag: str = ""  # lets a generator find an occurrence after aliasing ("kleene")


@dataclass(frozen=True)
class Seq:
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Plus:
    inner: Any


@dataclass(frozen=True)
class Occ:
    """One type occurrence of a rendered pattern: its variable name, type and tag."""

    var: str
    type: str
    tag: str
    in_kleene: bool


def _atoms(node: Any, in_kleene: bool = False) -> Iterable[tuple[Atom, bool]]:
    if isinstance(node, Atom):
        yield node, in_kleene
    elif isinstance(node, Seq):
        for item in node.items:
            yield from _atoms(item, in_kleene)
    elif isinstance(node, Plus):
        yield from _atoms(node.inner, True)


def render_pattern(node: Any) -> tuple[str, list[Occ]]:
    """Pattern text and occurrences; a type occurring more than once is aliased ``Type_k``."""
    counts: dict[str, int] = {}
    for atom, _ in _atoms(node):
        counts[atom.type] = counts.get(atom.type, 0) + 1
    seen: dict[str, int] = {}
    occs: list[Occ] = []

    def text(n: Any, in_kleene: bool) -> str:
        if isinstance(n, Atom):
            if counts[n.type] == 1:
                occs.append(Occ(n.type, n.type, n.tag, in_kleene))
                return n.type
            seen[n.type] = seen.get(n.type, 0) + 1
            var = f"{n.type}_{seen[n.type]}"
            occs.append(Occ(var, n.type, n.tag, in_kleene))
            return f"{n.type} {var}"
        if isinstance(n, Seq):
            return "SEQ(" + ", ".join(text(i, in_kleene) for i in n.items) + ")"
        if isinstance(n, Plus):
            inner = text(n.inner, True)
            return inner + "+"
        raise TypeError(n)

    out = text(node, False)
    return out, occs


def seq(*items: Any) -> Any:
    """``SEQ(items)``, or the item itself when there is one."""
    flat = [i for i in items if i is not None]
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def kleene_depth(node: Any) -> int:
    """Deepest nesting of ``+`` in a generator pattern."""
    if isinstance(node, Atom):
        return 0
    if isinstance(node, Plus):
        return 1 + kleene_depth(node.inner)
    return max((kleene_depth(i) for i in node.items), default=0)


# ---- queries ---------------------------------------------------------------------


@dataclass
class QuerySpec:
    """One generated query before rendering."""

    name: str
    pattern: Any
    aggregates: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # (fn, var, attr)
    group_by: list[str] = field(default_factory=list)
    equivalence: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)  # rendered local / adjacent predicates
    within_s: int = 600
    slide_s: int | None = None
    comment: str = ""

    def render(self) -> str:
        pattern_text, _ = render_pattern(self.pattern)
        returns = list(self.group_by)
        seen: set[str] = set()
        for fn, var, attr in self.aggregates:
            item = "COUNT(*)" if fn == "count_star" else f"COUNT({var})" if fn == "count" else f"{fn.upper()}({var}.{attr})"
            if item not in seen:
                seen.add(item)
                returns.append(item)
        lines = []
        if self.comment:
            lines.append(f"-- {self.comment}")
        lines += [f"QUERY {self.name}", "RETURN " + ", ".join(returns), f"PATTERN {pattern_text}"]
        where = []
        if self.equivalence:
            where.append("[" + ", ".join(self.equivalence) + "]")
        where += self.conditions
        if where:
            lines.append("WHERE " + " AND ".join(where))
        if self.group_by:
            lines.append("GROUP-BY " + ", ".join(self.group_by))
        window = f"WITHIN {duration_text(self.within_s)}"
        if self.slide_s is not None and self.slide_s != self.within_s:
            window += f" SLIDE {duration_text(self.slide_s)}"
        lines.append(window + ";")
        return "\n".join(lines)


def duration_text(seconds: int) -> str:
    """``5 minutes``, ``1 hour``, ``90 seconds``: the largest unit that divides."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}" + ("s" if n != 1 else "")
    return f"{seconds} second" + ("s" if seconds != 1 else "")


def _literal(facts: StreamFacts, attr: str, rng: random.Random) -> str:
    lo, hi = facts.ranges.get(attr, (0.0, 100.0))
    lo, hi = lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)
    value = rng.uniform(lo, hi)
    if facts.kinds.get(attr) == "long":
        return str(int(round(value)))
    return f"{value:.1f}"


def local_predicate(facts: StreamFacts, occ: Occ, rng: random.Random, attr: str | None = None, op: str | None = None) -> str | None:
    """``var.attr < literal`` (or ``>``) on a measure of the occurrence's type, if it has one."""
    measures = facts.measures.get(occ.type, ())
    if not measures:
        return None
    attr = attr or rng.choice(measures)
    op = op or rng.choice(("<", ">"))
    return f"{occ.var}.{attr} {op} {_literal(facts, attr, rng)}"


def adjacent_predicate(facts: StreamFacts, occ: Occ, rng: random.Random) -> str | None:
    """``var.attr < NEXT(var).attr`` on a Kleene occurrence (a trend that rises or falls)."""
    measures = facts.measures.get(occ.type, ())
    if not measures:
        return None
    attr = rng.choice(measures)
    op = rng.choice(("<", ">"))
    return f"{occ.var}.{attr} {op} NEXT({occ.var}).{attr}"


def random_aggregates(facts: StreamFacts, occs: list[Occ], rng: random.Random, extra: int) -> list[tuple[str, str | None, str | None]]:
    """``COUNT(*)`` plus ``extra`` random COUNT/SUM/AVG/MIN/MAX over the pattern's variables."""
    aggs: list[tuple[str, str | None, str | None]] = [("count_star", None, None)]
    with_measures = [o for o in occs if facts.measures.get(o.type)]
    for _ in range(extra):
        fn = rng.choice(("count", "sum", "avg", "min", "max"))
        if fn == "count" or not with_measures:
            aggs.append(("count", rng.choice(occs).var, None))
        else:
            o = rng.choice(with_measures)
            aggs.append((fn, o.var, rng.choice(facts.measures[o.type])))
    return aggs


def _find(occs: list[Occ], tag: str) -> Occ:
    return next(o for o in occs if o.tag == tag)


def _others(facts: StreamFacts, exclude: Iterable[str]) -> list[str]:
    excluded = set(exclude)
    rest = [t for t in facts.types if t not in excluded]
    return rest or list(facts.types)


def _pick_distinct(rng: random.Random, pool: list[str], k: int, avoid: Iterable[str] = ()) -> list[str]:
    """``k`` types, distinct and outside ``avoid`` while the pool allows, repeating after that."""
    avoid = set(avoid)
    fresh = [t for t in pool if t not in avoid]
    rng.shuffle(fresh)
    out = fresh[:k]
    while len(out) < k:
        out.append(rng.choice(pool))
    return out


# ---- parameters ------------------------------------------------------------------


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _coerce(name: str, value: Any, default: Any) -> Any:
    try:
        if isinstance(default, bool):
            return _as_bool(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        if isinstance(default, tuple):
            items = value if isinstance(value, (list, tuple)) else str(value).split(",")
            return tuple(int(str(i).strip()) for i in items)
        return str(value)
    except ValueError:
        raise ValueError(f"parameter {name}: cannot read {value!r} as {type(default).__name__}") from None


def ratio_fraction(value: Any) -> float:
    """A Kleene share from ``"1:6"`` (1 Kleene per 6 SEQ → 1/7) or a fraction like ``0.25``."""
    text = str(value)
    if ":" in text:
        a, b = (float(x) for x in text.split(":", 1))
        if a < 0 or b < 0 or a + b == 0:
            raise ValueError(f"bad ratio {value!r}")
        return a / (a + b)
    share = float(text)
    if not 0 <= share <= 1:
        raise ValueError(f"kleene_ratio {value!r} must be 'K:S' or a fraction in [0, 1]")
    return share


def zipf_weights(n: int, skew: float) -> list[float]:
    """Zipf probabilities of ranks 1..n (``1/k**skew``, normalised); skew 0 is uniform."""
    raw = [1.0 / (k**skew) for k in range(1, n + 1)]
    total = sum(raw)
    return [w / total for w in raw]


# ---- generators -----------------------------------------------------------------

Generator = Callable[[random.Random, StreamFacts, int, dict[str, Any]], list[QuerySpec]]


def _window(params: dict[str, Any]) -> tuple[int, int | None]:
    within = int(params["window_minutes"]) * 60
    slide = int(params.get("slide_minutes", 0)) * 60
    return within, (slide or None)


def hamlet_shared(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Hamlet §6 workload 1: different patterns, one shared ``K+``, everything else equal."""
    k = facts.kleene_type(p["kleene_type"])
    others = _others(facts, [k])
    shapes: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for a in others:
        shapes.append(((a,), ()))
        for c in others:
            if c != a:
                shapes.append(((a,), (c,)))
                shapes.append(((c, a), ()))
    rng.shuffle(shapes)
    within, slide = _window(p)
    measures = facts.measures.get(k, ())
    shared_attr = measures[0] if measures else None
    shared_literal = _literal(facts, shared_attr, rng) if shared_attr else None
    specs = []
    for i in range(n):
        before, after = shapes[i % len(shapes)]
        pattern = seq(*(Atom(t) for t in before), Plus(Atom(k, "kleene")), *(Atom(t) for t in after))
        _, occs = render_pattern(pattern)
        kv = _find(occs, "kleene")
        aggs: list[tuple[str, str | None, str | None]] = [("count_star", None, None)]
        if shared_attr:
            aggs.append(("sum", kv.var, shared_attr))
        if p["same_predicates"]:
            conds = [f"{kv.var}.{shared_attr} < {shared_literal}"] if shared_attr else []
        else:
            pred = local_predicate(facts, kv, rng)
            conds = [pred] if pred else []
        specs.append(
            QuerySpec(
                name=f"hs_{i:03d}",
                pattern=pattern,
                aggregates=aggs,
                group_by=facts.group_by(),
                equivalence=facts.equivalence(),
                conditions=conds,
                within_s=within,
                slide_s=slide,
            )
        )
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
    others = _others(facts, [k])
    keys = facts.grouping_keys()
    specs = []
    for i in range(n):
        length = rng.randint(lo_len, hi_len)
        extra = _pick_distinct(rng, others, length - 1)
        cut = rng.randint(0, len(extra))
        pattern = seq(*(Atom(t) for t in extra[:cut]), Plus(Atom(k, "kleene")), *(Atom(t) for t in extra[cut:]))
        _, occs = render_pattern(pattern)
        conds = []
        for o in rng.sample(occs, min(len(occs), rng.randint(0, 2))):
            pred = local_predicate(facts, o, rng)
            if pred:
                conds.append(pred)
        if rng.random() < 0.3:
            pred = adjacent_predicate(facts, _find(occs, "kleene"), rng)
            if pred:
                conds.append(pred)
        group_by = rng.sample(keys, rng.randint(0, min(1, len(keys)))) if keys else []
        equivalence = [a for a in facts.equivalence() if a not in group_by] if rng.random() < 0.7 else []
        within_min = rng.randint(lo_w, hi_w)
        slide_min = rng.choice([s for s in (1, 2, 5, within_min) if s <= within_min])
        specs.append(
            QuerySpec(
                name=f"hd_{i:03d}",
                pattern=pattern,
                aggregates=random_aggregates(facts, occs, rng, rng.randint(1, 2)),
                group_by=group_by,
                equivalence=equivalence,
                conditions=conds,
                within_s=within_min * 60,
                slide_s=slide_min * 60,
            )
        )
    return specs


def _shared_pool(rng: random.Random, facts: StreamFacts, size: int, length: int) -> list[list[str]]:
    """``size`` sub-sequences of ``length`` distinct types (distinct from each other when possible)."""
    pool: list[list[str]] = []
    attempts = 0
    while len(pool) < size:
        cand = _pick_distinct(rng, list(facts.types), length)
        attempts += 1
        if cand not in pool or attempts > 50:
            pool.append(cand)
    return pool


def _sequence_with_shared(
    rng: random.Random, facts: StreamFacts, length: int, pieces: list[list[str]], avoid: Iterable[str] = ()
) -> list[str]:
    """A sequence of ``length`` types holding the ``pieces`` (contiguous, in random places), filled with other types."""
    chosen: list[list[str]] = []
    used = 0
    for piece in pieces:
        if used + len(piece) <= length:
            chosen.append(piece)
            used += len(piece)
    in_pieces = {t for piece in chosen for t in piece}
    fillers = _pick_distinct(rng, list(facts.types), length - used, avoid=in_pieces | set(avoid))
    blocks: list[list[str]] = [list(piece) for piece in chosen] + [[t] for t in fillers]
    rng.shuffle(blocks)
    return [t for block in blocks for t in block]


def sharon_traffic(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Sharon §VIII traffic workload: routes of ``length`` types sharing sub-sequences; COUNT(*)."""
    length, shared_len = int(p["length"]), int(p["shared_length"])
    if length < 1 or shared_len < 1:
        raise ValueError("length and shared_length must be at least 1")
    pool_size = int(p["shared_patterns"]) or max(2, n // 3)
    pool = _shared_pool(rng, facts, pool_size, min(shared_len, length))
    weights = zipf_weights(len(pool), 1.0)  # a few popular road segments
    within, slide = _window(p)
    specs = []
    for i in range(n):
        pieces = [pool[j] for j in sorted(set(rng.choices(range(len(pool)), weights, k=rng.randint(1, 2))))]
        types = _sequence_with_shared(rng, facts, length, pieces)
        specs.append(
            QuerySpec(
                name=f"st_{i:03d}",
                pattern=seq(*(Atom(t) for t in types)),
                aggregates=[("count_star", None, None)],
                equivalence=facts.equivalence(),
                within_s=within,
                slide_s=slide,
            )
        )
    return specs


def sharon_ecommerce(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Sharon §VIII e-commerce workload: item sequences that all start with one shared pair."""
    length, shared_len = int(p["length"]), int(p["shared_length"])
    if length < shared_len or shared_len < 1:
        raise ValueError("need 1 <= shared_length <= length")
    prefix = _pick_distinct(rng, list(facts.types), shared_len)
    rest_types = _others(facts, prefix)
    tails = [_pick_distinct(rng, rest_types, min(2, length - shared_len) or 1) for _ in range(max(1, n // 4))]
    within, slide = _window(p)
    specs = []
    for i in range(n):
        rest = length - shared_len
        pieces = [rng.choice(tails)] if rest >= 2 and rng.random() < 0.5 else []
        body = _sequence_with_shared(rng, facts, rest, pieces, avoid=prefix) if rest else []
        specs.append(
            QuerySpec(
                name=f"se_{i:03d}",
                pattern=seq(*(Atom(t) for t in [*prefix, *body])),
                aggregates=[("count_star", None, None)],
                equivalence=facts.equivalence(),
                within_s=within,
                slide_s=slide,
            )
        )
    return specs


def _gloria_window(rng: random.Random, p: dict[str, Any]) -> tuple[int, int]:
    powers = tuple(p["window_powers"])
    if not powers or min(powers) < 1:
        raise ValueError("window_powers must be positive integers (5**k minutes)")
    within = 5 ** rng.choice(powers) * 60
    slide = min(int(p["slide_minutes"]) * 60, within)
    return within, slide


def _gloria_clauses(rng: random.Random, facts: StreamFacts, occs: list[Occ]) -> dict[str, Any]:
    """Different group-by, predicates and aggregates per query (GLORIA §8)."""
    keys = facts.grouping_keys()
    group_by = rng.sample(keys, rng.randint(0, min(1, len(keys)))) if keys else []
    conds = []
    for o in rng.sample(occs, min(len(occs), rng.randint(0, 2))):
        pred = local_predicate(facts, o, rng)
        if pred:
            conds.append(pred)
    return {
        "group_by": group_by,
        "equivalence": facts.equivalence(),
        "conditions": conds,
        "aggregates": random_aggregates(facts, occs, rng, rng.randint(0, 2)),
    }


def _gloria_seq_query(rng: random.Random, facts: StreamFacts, name: str, p: dict[str, Any], pool: list[list[str]]) -> QuerySpec:
    lo, hi = int(p["min_length"]), int(p["max_length"])
    if not 1 <= lo <= hi:
        raise ValueError("need 1 <= min_length <= max_length")
    length = rng.randint(lo, hi)
    types = _sequence_with_shared(rng, facts, length, [rng.choice(pool)])
    pattern = seq(*(Atom(t) for t in types))
    _, occs = render_pattern(pattern)
    within, slide = _gloria_window(rng, p)
    return QuerySpec(name=name, pattern=pattern, within_s=within, slide_s=slide, **_gloria_clauses(rng, facts, occs))


def nested_kleene(types: list[str], depth: int, rng: random.Random) -> Any:
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
    node: Any = Plus(seq(*(Atom(t, "kleene") for t in inner_types)))
    for front, back in reversed(layers):
        node = Plus(seq(*(Atom(t, "kleene") for t in front), node, *(Atom(t, "kleene") for t in back)))
    return node


def _gloria_kleene_query(rng: random.Random, facts: StreamFacts, name: str, p: dict[str, Any], kleene: Any, kleene_types: list[str]) -> QuerySpec:
    max_seq = int(p["max_seq"])
    n_before = rng.randint(0, max_seq)
    n_after = rng.randint(0 if n_before else 1, max(1, max_seq))
    extra = _pick_distinct(rng, list(facts.types), n_before + n_after, avoid=kleene_types)
    pattern = seq(*(Atom(t) for t in extra[:n_before]), kleene, *(Atom(t) for t in extra[n_before:]))
    _, occs = render_pattern(pattern)
    within, slide = _gloria_window(rng, p)
    return QuerySpec(name=name, pattern=pattern, within_s=within, slide_s=slide, **_gloria_clauses(rng, facts, occs))


def _shared_kleene(rng: random.Random, facts: StreamFacts, p: dict[str, Any]) -> tuple[Any, list[str]]:
    length, depth = int(p["kleene_length"]), int(p["nesting"])
    if length < 1:
        raise ValueError("kleene_length must be at least 1")
    types = _pick_distinct(rng, list(facts.types), length)
    return nested_kleene(types, depth, rng), types


def gloria_seq(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """GLORIA §8 SEQ workload."""
    pool = _shared_pool(rng, facts, max(2, n // 3), min(int(p["shared_length"]), int(p["min_length"])))
    return [_gloria_seq_query(rng, facts, f"gs_{i:03d}", p, pool) for i in range(n)]


def gloria_kleene(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """GLORIA §8 Kleene workload: one shared (nested) Kleene sub-pattern, different SEQ parts."""
    kleene, types = _shared_kleene(rng, facts, p)
    return [_gloria_kleene_query(rng, facts, f"gk_{i:03d}", p, kleene, types) for i in range(n)]


def gloria_mixed(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """GLORIA §8 mixed workload: Kleene and SEQ queries at ``kleene_ratio`` (K:S)."""
    share = ratio_fraction(p["kleene_ratio"])
    n_kleene = round(n * share)
    if share > 0 and n >= 2:
        n_kleene = max(1, n_kleene)
    kinds = ["kleene"] * n_kleene + ["seq"] * (n - n_kleene)
    rng.shuffle(kinds)
    kleene, ktypes = _shared_kleene(rng, facts, p)
    pool = _shared_pool(rng, facts, max(2, n // 3), min(int(p["shared_length"]), int(p["min_length"])))
    specs = []
    for i, kind in enumerate(kinds):
        if kind == "kleene":
            specs.append(_gloria_kleene_query(rng, facts, f"gm_{i:03d}", p, kleene, ktypes))
        else:
            specs.append(_gloria_seq_query(rng, facts, f"gm_{i:03d}", p, pool))
    return specs


def weaveshare(rng: random.Random, facts: StreamFacts, n: int, p: dict[str, Any]) -> list[QuerySpec]:
    """Weave Share §7: Zipf-distributed slides, ranges = slide × overlap factor ~ U[1, ω_max]."""
    skew, omega_max = float(p["skew"]), float(p["max_overlap"])
    n_slides, unit = int(p["slides"]), int(p["slide_unit_seconds"])
    if n_slides < 1 or unit < 1 or omega_max < 1 or skew < 0:
        raise ValueError("need slides >= 1, slide_unit_seconds >= 1, max_overlap >= 1, skew >= 0")
    # rank 1 is the largest slide: more skew, more large-slide queries (Weave Share §7)
    slides = list(range(n_slides, 0, -1))
    weights = zipf_weights(n_slides, skew)
    k = facts.kleene_type(p["kleene_type"])
    start = _pick_distinct(rng, _others(facts, [k]), 1)[0]
    pattern = seq(Atom(start), Plus(Atom(k, "kleene")))
    _, occs = render_pattern(pattern)
    kv = _find(occs, "kleene")
    measures = facts.measures.get(k, ())
    aggs: list[tuple[str, str | None, str | None]] = [("count_star", None, None)]
    if measures:
        aggs.append(("sum", kv.var, measures[0]))
    specs = []
    for i in range(n):
        s = rng.choices(slides, weights)[0]
        omega = rng.uniform(1.0, omega_max)
        r = max(s, math.floor(omega * s))
        specs.append(
            QuerySpec(
                name=f"ws_{i:03d}",
                pattern=pattern,
                aggregates=aggs,
                group_by=facts.group_by(),
                equivalence=facts.equivalence(),
                within_s=r * unit,
                slide_s=s * unit,
                comment=f"slide {s} x {unit}s, overlap factor {Fraction(r, s).limit_denominator(1000)} (drawn {omega:.2f})",
            )
        )
    return specs


@dataclass(frozen=True)
class Kind:
    generate: Generator
    paper: str
    defaults: dict[str, Any]


_SEQ_DEFAULTS = {"min_length": 3, "max_length": 5, "shared_length": 2, "window_powers": (1, 2), "slide_minutes": 5}
_KLEENE_DEFAULTS = {"kleene_length": 3, "nesting": 1, "max_seq": 2, "window_powers": (1, 2), "slide_minutes": 5}

KINDS: dict[str, Kind] = {
    "hamlet-shared": Kind(hamlet_shared, "Hamlet §6 (workload 1: shared Kleene sub-pattern)",
                          {"same_predicates": True, "kleene_type": "", "window_minutes": 10, "slide_minutes": 0}),
    "hamlet-diverse": Kind(hamlet_diverse, "Hamlet §6 (workload 2: diverse)",
                           {"kleene_type": "", "min_length": 1, "max_length": 3, "min_window_minutes": 5, "max_window_minutes": 20}),
    "sharon-traffic": Kind(sharon_traffic, "Sharon §VIII (traffic, q1-q7)",
                           {"length": 5, "shared_length": 2, "shared_patterns": 0, "window_minutes": 10, "slide_minutes": 1}),
    "sharon-ecommerce": Kind(sharon_ecommerce, "Sharon §VIII (e-commerce, q8-q11)",
                             {"length": 4, "shared_length": 2, "window_minutes": 20, "slide_minutes": 1}),
    "gloria-seq": Kind(gloria_seq, "GLORIA §8 (SEQ workload)", dict(_SEQ_DEFAULTS)),
    "gloria-kleene": Kind(gloria_kleene, "GLORIA §8 (Kleene workload)", dict(_KLEENE_DEFAULTS)),
    "gloria-mixed": Kind(gloria_mixed, "GLORIA §8 (mixed workload)", {**_SEQ_DEFAULTS, **_KLEENE_DEFAULTS, "kleene_ratio": "1:6"}),
    "weaveshare": Kind(weaveshare, "Weave Share §7 (Zipf slides, maximum overlap factor)",
                       {"skew": 0.6, "max_overlap": 10.0, "slides": 10, "slide_unit_seconds": 60, "kleene_type": ""}),
}


def resolve_params(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    """The kind's defaults overridden by ``params`` (coerced); unknown names are an error."""
    if kind not in KINDS:
        raise ValueError(f"unknown workload kind {kind!r} (known: {', '.join(KINDS)})")
    defaults = KINDS[kind].defaults
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for {kind} (known: {', '.join(defaults)})")
    return {name: _coerce(name, params.get(name, d), d) for name, d in defaults.items()}


def generate_specs(
    kind: str,
    queries: int,
    seed: int = 0,
    stream: str | dict[str, Any] = "rides",
    *,
    ranges: dict[str, tuple[float, float]] | None = None,
    **params: Any,
) -> list[QuerySpec]:
    """The generated queries before rendering (see ``generate_workload``)."""
    if queries < 1:
        raise ValueError("a workload needs at least one query")
    resolved = resolve_params(kind, params)
    schema = _schema(stream)
    facts = StreamFacts.from_schema(schema, ranges)
    rng = random.Random(f"trendlake-workload:{kind}:{seed}")
    return KINDS[kind].generate(rng, facts, queries, resolved)


def generate_workload(
    kind: str,
    queries: int,
    seed: int = 0,
    stream: str | dict[str, Any] = "rides",
    *,
    ranges: dict[str, tuple[float, float]] | None = None,
    **params: Any,
) -> str:
    """Workload text of ``queries`` queries of ``kind`` for ``stream`` (a bundled name or a schema dict).

    ``params`` override the kind's defaults (``KINDS[kind].defaults``);
    ``ranges`` maps numeric attributes to (low, high) for predicate literals.
    """
    resolved = resolve_params(kind, params)
    specs = generate_specs(kind, queries, seed, stream, ranges=ranges, **resolved)
    schema = _schema(stream)
    shown = " ".join(f"{k}={_show(v)}" for k, v in resolved.items())
    header = [
        f"-- {kind}: {KINDS[kind].paper}",
        f"-- generated by: trendlake workload {kind} --queries {queries} --seed {seed} --stream {schema.get('stream', '?')}",
        f"-- parameters: {shown}",
    ]
    return "\n".join(header) + "\n\n" + "\n\n".join(s.render() for s in specs) + "\n"


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value != "" else "auto"


def _schema(stream: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(stream, dict):
        return stream
    from trendlake.schemas import load_stream_schema

    return load_stream_schema(stream)


# ---- CLI -------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction) -> None:
    kinds_help = "; ".join(f"{name}: {k.paper}" for name, k in KINDS.items())
    p = sub.add_parser(
        "workload",
        help="generate a seeded workload shaped after a paper's experiments",
        description=(
            "Write a workload (*.etq) of N queries of KIND for a stream schema. The same kind, "
            "count, seed, stream and parameters give the same text. Kinds: " + kinds_help + "."
        ),
    )
    p.add_argument("kind", choices=sorted(KINDS), metavar="KIND", help="workload kind: " + ", ".join(KINDS))
    p.add_argument("--queries", type=int, default=10, metavar="N", help="number of queries (default: 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--stream", default="rides", help="stream schema: bundled name or JSON path (default: rides)")
    p.add_argument("--out", type=Path, metavar="FILE.etq", help="write here instead of stdout")
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE",
        help="override a kind parameter, repeatable (see --list-params)",
    )
    p.add_argument("--list-params", action="store_true", help="print the kind's parameters and defaults, then exit")
    p.set_defaults(func=run_workload)


def run_workload(args: argparse.Namespace) -> int:
    from trendlake.schemas import load_stream_schema

    from trendlake import optimizer

    if args.list_params:
        for name, default in KINDS[args.kind].defaults.items():
            print(f"{name}={_show(default)}")
        return 0
    params: dict[str, Any] = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep:
            print(f"trendlake: error: --param {item!r}: expected NAME=VALUE", file=sys.stderr)
            return 2
        params[name.strip()] = value.strip()
    try:
        schema = load_stream_schema(args.stream)
        text = generate_workload(args.kind, args.queries, args.seed, schema, **params)
        optimizer.compile_workload(text, schema, path=str(args.out or "<generated>"))
    except (ValueError, FileNotFoundError, optimizer.WorkloadError) as err:
        print(f"trendlake: error: {err}", file=sys.stderr)
        return 2
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.queries} {args.kind} queries for stream {schema['stream']} to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
