"""Building blocks of the workload generators, on the language's own AST (``trendlake.optimizer.ast``).

A generator builds a pattern from plain ``Atom``/``Seq``/``Kleene`` nodes,
gives every type that occurs more than once an alias per occurrence
(``alias_repeated``: ``Travel Travel_1``, ``Travel Travel_2``), reads the
occurrences back (``occurrences``) to place predicates and aggregates, and
assembles a ``Query`` (``build_query``); the optimizer's generator writes the
text. ``Kind`` is a workload kind's registry entry.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from trendlake.datagen.workloads.facts import StreamFacts
from trendlake.optimizer import ast
from trendlake.optimizer.generator import aggregate, generate_query

DEFAULT_SEMANTICS = "skip-till-any-match"

# ---- patterns --------------------------------------------------------------------


def atom(type_: str) -> ast.Atom:
    """One occurrence of an event type (aliased later, if the type repeats)."""
    return ast.Atom(type_)


def seq(*items: ast.Pattern | None) -> ast.Pattern:
    """``SEQ(items)``, or the item itself when there is one."""
    flat = [i for i in items if i is not None]
    return flat[0] if len(flat) == 1 else ast.Seq(tuple(flat))


def plus(inner: ast.Pattern) -> ast.Kleene:
    """``inner+``."""
    return ast.Kleene(inner)


def _atoms(node: ast.Pattern, in_kleene: bool = False) -> Iterator[tuple[ast.Atom, bool]]:
    if isinstance(node, ast.Atom):
        yield node, in_kleene
    elif isinstance(node, ast.Seq):
        for item in node.items:
            yield from _atoms(item, in_kleene)
    elif isinstance(node, ast.Kleene):
        yield from _atoms(node.inner, True)
    elif isinstance(node, ast.Not):
        yield from _atoms(node.inner, in_kleene)


def alias_repeated(pattern: ast.Pattern) -> ast.Pattern:
    """``pattern`` with an alias ``Type_k`` on every occurrence of a type that occurs more than once."""
    counts: dict[str, int] = {}
    for a, _ in _atoms(pattern):
        counts[a.type] = counts.get(a.type, 0) + 1
    seen: dict[str, int] = {}

    def walk(node: ast.Pattern) -> ast.Pattern:
        if isinstance(node, ast.Atom):
            if counts[node.type] == 1:
                return node
            seen[node.type] = seen.get(node.type, 0) + 1
            return ast.Atom(node.type, f"{node.type}_{seen[node.type]}")
        if isinstance(node, ast.Seq):
            return ast.Seq(tuple(walk(i) for i in node.items))
        if isinstance(node, ast.Kleene):
            return ast.Kleene(walk(node.inner))
        if isinstance(node, ast.Not):
            return ast.Not(walk(node.inner))
        raise TypeError(f"not a pattern node: {node!r}")

    return walk(pattern)


@dataclass(frozen=True)
class Occurrence:
    """One type occurrence of a pattern: its variable name, its type, whether it is under ``+``."""

    var: str
    type: str
    in_kleene: bool


def occurrences(pattern: ast.Pattern) -> list[Occurrence]:
    """The occurrences of ``pattern`` in pattern order."""
    return [Occurrence(a.var, a.type, k) for a, k in _atoms(pattern)]


def first_in_kleene(occs: list[Occurrence]) -> Occurrence:
    """The first occurrence under ``+`` (the shared Kleene type of the Hamlet and Weave Share shapes)."""
    return next(o for o in occs if o.in_kleene)


def kleene_depth(node: ast.Pattern) -> int:
    """Deepest nesting of ``+`` in a pattern."""
    if isinstance(node, ast.Atom):
        return 0
    if isinstance(node, ast.Kleene):
        return 1 + kleene_depth(node.inner)
    if isinstance(node, ast.Not):
        return kleene_depth(node.inner)
    return max((kleene_depth(i) for i in node.items), default=0)


# ---- clauses ---------------------------------------------------------------------


def duration(seconds: int) -> ast.Duration:
    """``5 minutes``, ``1 hour``, ``90 seconds``: the largest unit that divides."""
    for unit, size in (("hours", 3600), ("minutes", 60)):
        if seconds % size == 0:
            return ast.Duration(seconds // size, unit)
    return ast.Duration(seconds, "seconds")


def window(within_s: int, slide_s: int | None) -> ast.Window:
    """``WITHIN within_s``, with ``SLIDE slide_s`` unless that is the same (tumbling)."""
    slide = duration(slide_s) if slide_s is not None and slide_s != within_s else None
    return ast.Window(duration(within_s), slide)


def literal_value(facts: StreamFacts, attr: str, rng: random.Random) -> int | float:
    """A threshold inside the attribute's range (its middle 80%): a whole number for longs, one decimal else."""
    lo, hi = facts.ranges.get(attr, (0.0, 100.0))
    lo, hi = lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)
    value = rng.uniform(lo, hi)
    if facts.kinds.get(attr) == "long":
        return int(round(value))
    return float(f"{value:.1f}")


def compare(op: str, var: str, attr: str, value: int | float) -> ast.Comparison:
    """``var.attr op value``."""
    return ast.Comparison(op, ast.AttrRef(var, attr), ast.Literal(value))


def local_predicate(
    facts: StreamFacts, occ: Occurrence, rng: random.Random, attr: str | None = None, op: str | None = None
) -> ast.Comparison | None:
    """``var.attr < literal`` (or ``>``) on a measure of the occurrence's type, if it has one."""
    measures = facts.measures.get(occ.type, ())
    if not measures:
        return None
    attr = attr or rng.choice(measures)
    op = op or rng.choice(("<", ">"))
    return compare(op, occ.var, attr, literal_value(facts, attr, rng))


def adjacent_predicate(facts: StreamFacts, occ: Occurrence, rng: random.Random) -> ast.Comparison | None:
    """``var.attr < NEXT(var).attr`` on a Kleene occurrence (a trend that rises or falls)."""
    measures = facts.measures.get(occ.type, ())
    if not measures:
        return None
    attr = rng.choice(measures)
    op = rng.choice(("<", ">"))
    return ast.Comparison(op, ast.AttrRef(occ.var, attr), ast.AttrRef(occ.var, attr, next=True))


def random_aggregates(facts: StreamFacts, occs: list[Occurrence], rng: random.Random, extra: int) -> list[ast.Aggregate]:
    """``COUNT(*)`` plus ``extra`` random COUNT/SUM/AVG/MIN/MAX over the pattern's variables."""
    aggs = [aggregate("count_star")]
    with_measures = [o for o in occs if facts.measures.get(o.type)]
    for _ in range(extra):
        fn = rng.choice(("count", "sum", "avg", "min", "max"))
        if fn == "count" or not with_measures:
            aggs.append(aggregate("count", rng.choice(occs).var))
        else:
            o = rng.choice(with_measures)
            aggs.append(aggregate(fn, o.var, rng.choice(facts.measures[o.type])))
    return aggs


def build_query(
    name: str,
    pattern: ast.Pattern,
    *,
    aggregates: Iterable[ast.Aggregate] = (),
    group_by: Iterable[str] = (),
    equivalence: Iterable[str] = (),
    conditions: Iterable[ast.Condition] = (),
    within_s: int = 600,
    slide_s: int | None = None,
) -> ast.Query:
    """A query: RETURN the group-by attributes and the aggregates (each once), WHERE the
    equivalence and then the conditions, the window from seconds."""
    group = [ast.Name(g) for g in group_by]
    returns: list[ast.ReturnItem] = list(group)
    seen: set[str] = set()
    for agg in aggregates:
        if agg.text not in seen:
            seen.add(agg.text)
            returns.append(agg)
    where: list[ast.Condition] = []
    equal = [ast.Name(a) for a in equivalence]
    if equal:
        where.append(ast.Equivalence(tuple(equal)))
    where += list(conditions)
    return ast.Query(name, tuple(returns), pattern, DEFAULT_SEMANTICS, tuple(where), tuple(group),
                     window(within_s, slide_s))


@dataclass(frozen=True)
class QuerySpec:
    """One generated query (the AST) and the comment written above it."""

    query: ast.Query
    comment: str = ""

    @property
    def name(self) -> str:
        return self.query.name

    def render(self) -> str:
        """The query's text, after its comment line if it has one."""
        text = generate_query(self.query)
        return f"-- {self.comment}\n{text}" if self.comment else text


# ---- choosing types ----------------------------------------------------------------


def others(facts: StreamFacts, exclude: Iterable[str]) -> list[str]:
    """The stream's types outside ``exclude`` (all of them if none is left)."""
    excluded = set(exclude)
    rest = [t for t in facts.types if t not in excluded]
    return rest or list(facts.types)


def pick_distinct(rng: random.Random, pool: list[str], k: int, avoid: Iterable[str] = ()) -> list[str]:
    """``k`` types, distinct and outside ``avoid`` while the pool allows, repeating after that."""
    avoid = set(avoid)
    fresh = [t for t in pool if t not in avoid]
    rng.shuffle(fresh)
    out = fresh[:k]
    while len(out) < k:
        out.append(rng.choice(pool))
    return out


def shared_pool(rng: random.Random, facts: StreamFacts, size: int, length: int) -> list[list[str]]:
    """``size`` sub-sequences of ``length`` distinct types (distinct from each other when possible)."""
    pool: list[list[str]] = []
    attempts = 0
    while len(pool) < size:
        cand = pick_distinct(rng, list(facts.types), length)
        attempts += 1
        if cand not in pool or attempts > 50:
            pool.append(cand)
    return pool


def sequence_with_shared(
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
    fillers = pick_distinct(rng, list(facts.types), length - used, avoid=in_pieces | set(avoid))
    blocks: list[list[str]] = [list(piece) for piece in chosen] + [[t] for t in fillers]
    rng.shuffle(blocks)
    return [t for block in blocks for t in block]


def window_minutes(params: dict[str, Any]) -> tuple[int, int | None]:
    """(within, slide or None) in seconds from ``window_minutes`` / ``slide_minutes`` (0 = tumbling)."""
    within = int(params["window_minutes"]) * 60
    slide = int(params.get("slide_minutes", 0)) * 60
    return within, (slide or None)


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


def coerce(name: str, value: Any, default: Any) -> Any:
    """``value`` read as the type of the parameter's ``default`` (``"1,2"`` for a tuple of ints)."""
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


def show(value: Any) -> str:
    """A parameter value as ``--param`` takes it (``auto`` for an empty text)."""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value != "" else "auto"


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


# ---- the registry entry ------------------------------------------------------------

Generator = Callable[[random.Random, StreamFacts, int, dict[str, Any]], list[QuerySpec]]


@dataclass(frozen=True)
class Kind:
    """A workload kind: its generator, the paper section it follows, its parameters' defaults."""

    generate: Generator
    paper: str
    defaults: dict[str, Any]
