"""Hypothesis strategies for random workloads (as query text) and random event streams.

Workloads go through the real parser, checks and plan writer, so the
differential tests exercise the whole path a user's query takes. Streams are
small (the two-step reference enumerates every trend) with many equal
timestamps, missing attributes and irrelevant event types.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st


class _Once:
    """hypothesis' strategy builders, each distinct call built once: ``once.integers(0, 3)``.

    Inside a ``@composite`` a strategy written as ``st.integers(0, 3)`` is looked
    up in hypothesis' own argument cache, or built and validated anew (lists
    are not hashable), on every draw; a strategy built once costs about half as
    much to draw from. Arguments must be hashable: tuples, not lists. The
    cache is bounded, for strategies built from drawn values.
    """

    def __getattr__(self, name: str) -> Any:
        builder = functools.lru_cache(maxsize=4096)(getattr(st, name))
        setattr(self, name, builder)
        return builder


once = _Once()

# The seed of the draws that coverage floors are asserted on (docs/testing.md, "Coverage floors").
FLOOR_SEED = 20261127


def drawn_on_a_fixed_seed(
    strategy: st.SearchStrategy[Any], classify: Callable[[Any], Iterable[str]], examples: int
) -> Counter[str]:
    """How often each label comes up over ``examples`` cases of ``strategy`` drawn on one
    fixed seed (``FLOOR_SEED``): ``classify(case)`` gives a case's labels.

    The same cases are drawn on every run, whatever ``--hypothesis-seed``, profile or
    example database: ``@seed`` takes precedence over all of them, and only the generate
    phase runs. A share asserted on these counts (a coverage floor) therefore fails only
    when the generator, the code ``classify`` runs or hypothesis itself changes, never on
    an unlucky random draw; the randomized property keeps its own cases."""
    counts: Counter[str] = Counter()

    @seed(FLOOR_SEED)
    @settings(max_examples=examples, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def draw(case: Any) -> None:
        counts.update(classify(case))

    draw()
    return counts

TYPES = ("A", "B", "C", "D")
NEG_TYPES = ("N", "M")
ATTRS = ("x", "y")
SEMANTICS = ("skip-till-any-match", "skip-till-next-match", "contiguous")


@functools.cache  # one strategy object per argument list (see ``_Once``)
@st.composite
def patterns(draw: st.DrawFn, types: tuple[str, ...], depth: int = 0) -> tuple[str, list[str]]:
    """A positive pattern over ``types`` (each used once): its text and its variables."""
    if len(types) == 1 or depth >= 2 or draw(once.integers(0, 3)) == 0:
        t = types[0]
        text = t if len(types) == 1 else t
        used = [t]
        if draw(once.booleans()):
            text += "+"
        rest = types[1:]
        if not rest:
            return text, used
        # fold remaining types into a flat SEQ
        items = [text]
        for r in rest:
            items.append(r + ("+" if draw(once.booleans()) else ""))
            used.append(r)
        return "SEQ(" + ", ".join(items) + ")", used
    split = draw(once.integers(1, len(types) - 1))
    left, left_vars = draw(patterns(types[:split], depth + 1))
    right, right_vars = draw(patterns(types[split:], depth + 1))
    text = f"SEQ({left}, {right})"
    if draw(once.integers(0, 2)) == 0:
        text += "+"
    return text, left_vars + right_vars


@functools.cache  # one strategy object per argument list (see ``_Once``)
@st.composite
def negated(draw: st.DrawFn) -> str:
    kind = draw(once.integers(0, 2))
    if kind == 0:
        return "NOT N"
    if kind == 1:
        return "NOT M"
    return "NOT SEQ(N, M)"


@functools.cache  # one strategy object per argument list (see ``_Once``)
@st.composite
def full_patterns(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """Pattern text with optional negation: (text, positive variables, negated variables)."""
    n = draw(once.integers(1, 3))
    types = TYPES[:n]
    body, used = draw(patterns(types))
    negs: list[str] = []
    if draw(once.integers(0, 2)) == 0 and n >= 2:
        # a NOT between two top-level items of a flat SEQ
        items = [t + ("+" if draw(once.booleans()) else "") for t in types]
        at = draw(once.integers(1, n - 1))
        neg = draw(negated())
        items.insert(at, neg)
        body = ", ".join(items)
        used = list(types)
        negs = ["N", "M"] if "SEQ" in neg else [neg.split()[-1]]
    elif draw(once.integers(0, 3)) == 0:
        neg = draw(negated())
        where = draw(once.sampled_from(("lead", "trail")))
        body = f"SEQ({neg}, {body})" if where == "lead" else f"SEQ({body}, {neg})"
        negs = ["N", "M"] if "SEQ" in neg else [neg.split()[-1]]
    return body, used, negs


@functools.cache  # one strategy object per argument list (see ``_Once``)
@st.composite
def local_predicates(draw: st.DrawFn, var: str) -> str:
    attr = draw(once.sampled_from(ATTRS))
    form = draw(once.integers(0, 4))
    k = draw(once.integers(0, 3))
    if form == 0:
        return f"{var}.{attr} {draw(once.sampled_from(('<', '<=', '>', '>=', '=', '!=')))} {k}"
    if form == 1:
        values = draw(once.lists(once.integers(0, 3), min_size=1, max_size=3, unique=True))
        return f"{var}.{attr} IN ({', '.join(map(str, values))})"
    if form == 2:
        return f"{var}.{attr} + 1 > {k}"
    if form == 3:
        return f"{var}.x * 2 - {var}.y >= {k}"
    return f"{var}.{attr} % 2 = {k % 2}"


@functools.cache  # one strategy object per argument list (see ``_Once``)
@st.composite
def adjacent_predicates(draw: st.DrawFn, src: str, dst: str) -> str:
    a, b = draw(once.sampled_from(ATTRS)), draw(once.sampled_from(ATTRS))
    op = draw(once.sampled_from(("<", "<=", ">", ">=", "=", "!=")))
    if draw(once.booleans()):
        return f"{src}.{a} {op} NEXT({dst}).{b}"
    return f"{src}.{a} + 1 {op} NEXT({dst}).{b}"


@functools.cache  # one strategy object per argument list (see ``_Once``)
@st.composite
def queries(draw: st.DrawFn, name: str = "q") -> str:
    pattern, used, negs = draw(full_patterns())
    semantics = draw(once.sampled_from(SEMANTICS))
    conditions = []
    if draw(once.integers(0, 3)) == 0:
        conditions.append("[g]")
    for var in used + negs:
        if draw(once.integers(0, 3)) == 0:
            conditions.append(draw(local_predicates(var)))
    if draw(once.integers(0, 2)) == 0:
        src, dst = draw(st.sampled_from(used)), draw(st.sampled_from(used))
        conditions.append(draw(adjacent_predicates(src, dst)))
    group = draw(once.booleans())
    aggs = ["COUNT(*)"]
    for var in used:
        pick = draw(once.integers(0, 6))
        attr = draw(once.sampled_from(ATTRS))
        aggs += [
            [],
            [f"COUNT({var})"],
            [f"SUM({var}.{attr})"],
            [f"AVG({var}.{attr})"],
            [f"MIN({var}.{attr})"],
            [f"MAX({var}.{attr})"],
            [f"COUNT({var})", f"SUM({var}.{attr}) AS s_{var}"],
        ][pick]
    within = draw(once.integers(2, 12))
    slide = draw(once.one_of(once.none(), once.integers(1, within)))
    lines = [
        f"QUERY {name}",
        "RETURN " + ", ".join((["h"] if group else []) + aggs),
        f"PATTERN {pattern}",
        f"SEMANTICS {semantics}",
    ]
    if conditions:
        lines.append("WHERE " + " AND ".join(conditions))
    if group:
        lines.append("GROUP-BY h")
    lines.append(f"WITHIN {within} seconds" + (f" SLIDE {slide} seconds" if slide else "") + ";")
    return "\n".join(lines)


@st.composite
def workloads(draw: st.DrawFn, max_queries: int = 2) -> str:
    n = draw(once.integers(1, max_queries))
    return "\n\n".join(draw(queries(name=f"q{i}")) for i in range(n))


@st.composite
def event_rows(draw: st.DrawFn, max_events: int = 10) -> list[dict[str, Any]]:
    """Rows with small integer timestamps (many equal), some missing attributes."""
    n = draw(once.integers(0, max_events))
    rows = []
    ts = draw(once.integers(0, 3))
    for i in range(n):
        ts += draw(once.sampled_from((0, 1, 1, 1, 2, 3)))
        row: dict[str, Any] = {
            "type": draw(once.sampled_from(TYPES + NEG_TYPES + ("Z",))),
            "ts": ts,
            "seq": i,
        }
        for attr in ATTRS:
            if draw(once.integers(0, 9)):
                row[attr] = draw(once.integers(0, 3))
        if draw(once.integers(0, 9)):
            row["g"] = draw(once.integers(0, 1))
        if draw(once.integers(0, 9)):
            row["h"] = draw(once.sampled_from(("p", "q")))
        rows.append(row)
    return rows
