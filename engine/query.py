"""A plan query compiled for execution: template, predicates, windows, aggregates.

``CompiledQuery`` is what every strategy (reference, GRETA, COGRA) consumes.
It is built from one entry of the plan's ``queries`` list and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.errors import EngineError
from trendlake.engine.expr import Attrs, compile_adjacent, compile_local
from trendlake.engine.timeline import window_bounds, window_range

ANY = "skip-till-any-match"
NEXT = "skip-till-next-match"
CONTIGUOUS = "contiguous"
SEMANTICS = (ANY, NEXT, CONTIGUOUS)


class Unsupported(EngineError):
    """A strategy cannot evaluate a query; the message says which feature and why."""


@dataclass(frozen=True)
class Variable:
    """One type occurrence of the pattern (alias or type name)."""

    name: str
    type: str
    negated: bool
    local: Callable[[Attrs], bool] | None
    # its local predicates and required attributes as canonical text, the variable's own name
    # replaced (two variables with equal keys match the same events of their type)
    key: str = ""

    def matches(self, etype: str, attrs: Attrs) -> bool:
        return etype == self.type and (self.local is None or self.local(attrs))


@dataclass(frozen=True)
class Transition:
    """Consecutive positions ``src -> dst`` of the template with their negations."""

    src: str
    dst: str
    negations: tuple[int, ...]
    adjacent: Callable[[Attrs, Attrs], bool] | None
    # the adjacent predicates as canonical text, ``src`` and ``dst`` replaced by roles ("" without)
    adjacent_key: str = ""


@dataclass(frozen=True)
class Aggregate:
    name: str
    fn: str  # count_star | count | sum | avg | min | max
    var: str | None = None
    attr: str | None = None


@dataclass
class CompiledQuery:
    name: str
    semantics: str
    within: int  # µs
    slide: int  # µs
    group_by: tuple[str, ...]
    equivalence: tuple[str, ...]
    partition_by: tuple[str, ...]
    variables: dict[str, Variable]
    start: frozenset[str]
    end: frozenset[str]
    transitions: tuple[Transition, ...]
    start_negations: tuple[int, ...]
    end_negations: tuple[int, ...]
    negations: tuple[tuple[str, ...], ...]
    aggregates: tuple[Aggregate, ...]
    returns: tuple[str, ...]
    granularity: str
    # derived
    positive: tuple[str, ...] = field(init=False)
    vars_by_type: dict[str, tuple[str, ...]] = field(init=False)
    negated_by_type: dict[str, tuple[str, ...]] = field(init=False)
    successors: dict[str, tuple[Transition, ...]] = field(init=False)
    predecessors: dict[str, tuple[Transition, ...]] = field(init=False)
    needs: Needs = field(init=False)

    def __post_init__(self) -> None:
        self.positive = tuple(v for v, var in self.variables.items() if not var.negated)
        by_type: dict[str, list[str]] = {}
        neg_by_type: dict[str, list[str]] = {}
        for name, var in self.variables.items():
            (neg_by_type if var.negated else by_type).setdefault(var.type, []).append(name)
        self.vars_by_type = {t: tuple(v) for t, v in by_type.items()}
        self.negated_by_type = {t: tuple(v) for t, v in neg_by_type.items()}
        succ: dict[str, list[Transition]] = {v: [] for v in self.positive}
        pred: dict[str, list[Transition]] = {v: [] for v in self.positive}
        for t in self.transitions:
            succ[t.src].append(t)
            pred[t.dst].append(t)
        self.successors = {v: tuple(ts) for v, ts in succ.items()}
        self.predecessors = {v: tuple(ts) for v, ts in pred.items()}
        self.needs = Needs.of(self.aggregates)

    @property
    def has_adjacent(self) -> bool:
        return any(t.adjacent is not None for t in self.transitions)

    @property
    def has_negation(self) -> bool:
        return bool(self.negations)

    @property
    def pattern_types(self) -> frozenset[str]:
        return frozenset(v.type for v in self.variables.values())

    def window_range(self, ts: int) -> range:
        """Indexes k of the windows ``[k*slide, k*slide + within)`` containing ``ts``."""
        return window_range(ts, self.within, self.slide)

    def window_bounds(self, k: int) -> tuple[int, int]:
        """Start and end (exclusive) of window ``k``."""
        return window_bounds(k, self.within, self.slide)


@dataclass(frozen=True)
class Needs:
    """Which per-window quantities a strategy must compute for the aggregates."""

    counts: frozenset[str]  # COUNT(E) / AVG denominators: E events over all trends
    sums: frozenset[tuple[str, str]]
    mins: frozenset[tuple[str, str]]
    maxs: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, aggregates: tuple[Aggregate, ...]) -> Needs:
        counts, sums, mins, maxs = set(), set(), set(), set()
        for a in aggregates:
            if a.fn in ("count", "avg"):
                counts.add(a.var)
            if a.fn in ("sum", "avg"):
                sums.add((a.var, a.attr))
            if a.fn == "min":
                mins.add((a.var, a.attr))
            if a.fn == "max":
                maxs.add((a.var, a.attr))
        return cls(frozenset(counts), frozenset(sums), frozenset(mins), frozenset(maxs))


def compile_query(spec: dict[str, Any]) -> CompiledQuery:
    """Compile one plan query entry."""
    locals_ = spec.get("local_predicates", {})
    required = spec.get("required_attributes", {})
    variables = {
        v["name"]: Variable(
            name=v["name"],
            type=v["type"],
            negated=bool(v.get("negated", False)),
            local=compile_local(locals_.get(v["name"], []), required.get(v["name"], [])),
            key=canonical_predicates(
                [locals_.get(v["name"], []), sorted(required.get(v["name"], []))], {v["name"]: "$"}
            ),
        )
        for v in spec["variables"]
    }
    adjacent: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for a in spec.get("adjacent_predicates", []):
        adjacent.setdefault((a["from"], a["to"]), []).append(a["expr"])
    template = spec["template"]
    transitions = tuple(
        Transition(
            src=t["from"],
            dst=t["to"],
            negations=tuple(t.get("negations", [])),
            adjacent=compile_adjacent(adjacent[(t["from"], t["to"])])
            if (t["from"], t["to"]) in adjacent
            else None,
            adjacent_key=canonical_predicates(adjacent[(t["from"], t["to"])], {t["from"]: "$src", t["to"]: "$dst"})
            if (t["from"], t["to"]) in adjacent
            else "",
        )
        for t in template["transitions"]
    )
    negations_by_id = {n["id"]: tuple(n["sequence"]) for n in spec.get("negations", [])}
    negations = tuple(negations_by_id[i] for i in range(len(negations_by_id)))
    window = spec["window"]
    return CompiledQuery(
        name=spec["name"],
        semantics=spec.get("semantics", ANY),
        within=int(window["within_us"]),
        slide=int(window.get("slide_us") or window["within_us"]),
        group_by=tuple(spec.get("group_by", [])),
        equivalence=tuple(spec.get("equivalence", [])),
        partition_by=tuple(spec.get("partition_by", [])),
        variables=variables,
        start=frozenset(template["start"]),
        end=frozenset(template["end"]),
        transitions=transitions,
        start_negations=tuple(template.get("start_negations", [])),
        end_negations=tuple(template.get("end_negations", [])),
        negations=negations,
        aggregates=tuple(
            Aggregate(a["name"], a["fn"], a.get("var"), a.get("attr")) for a in spec["aggregates"]
        ),
        returns=tuple(spec.get("returns", [])),
        granularity=spec.get("granularity", "event"),
    )


def canonical_predicates(value: Any, roles: dict[str, str]) -> str:
    """Canonical JSON of predicate expressions with variable names replaced by ``roles``."""

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: (roles.get(v, v) if k == "var" and isinstance(v, str) else walk(v)) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return json.dumps(walk(value), sort_keys=True, separators=(",", ":"))


def has_cycle(edges: Any) -> bool:
    """Whether the directed edges ``(src, dst)`` close a cycle other than a self-loop (a
    template's nested Kleene)."""
    succ: dict[str, list[str]] = {}
    for src, dst in edges:
        if src != dst:
            succ.setdefault(src, []).append(dst)
    state: dict[str, int] = {}

    def visit(v: str) -> bool:
        state[v] = 1
        for w in succ.get(v, ()):
            if state.get(w) == 1 or (w not in state and visit(w)):
                return True
        state[v] = 2
        return False

    return any(v not in state and visit(v) for v in list(succ))
