"""Analysis of checked queries: variables, templates, negations, predicate classes, panes.

* **Variables** are the pattern's type occurrences in pattern order (alias, else
  type name); negated ones are those inside a ``NOT``.
* **Template** = the Glushkov automaton over the positive variables: ``start``
  (first positions), ``end`` (last positions) and ``transitions`` (follow
  pairs, nested Kleene included; sorted by pattern position). ``SEQ(P1, NOT N, P2)`` attaches negation N to
  every transition last(P1)→first(P2); a leading NOT of the outermost SEQ goes
  to ``start_negations``, a trailing one to ``end_negations``; consecutive NOTs
  all attach. A negation is a flat sequence of negated variables (``+`` dropped,
  nested SEQ flattened). Negation ids follow their order in the pattern.
* **Predicates**: a condition with a ``NEXT(...)`` reference is adjacent (edge,
  per (from, to) variable pair), otherwise it is local to its one variable
  (vertex). ``required_attributes`` per variable = attributes of its local
  predicates and aggregates.
* **Panes**: gcd of every window length and slide in the workload (µs).
* **Granularity** (COGRA Table 14.1), per query: ``trendlake.schemas.granularity``,
  one rule for the optimizer and the engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from trendlake.optimizer import ast
from trendlake.schemas.granularity import granularity as rule

ANY = "skip-till-any-match"
NEXT = "skip-till-next-match"
CONTIGUOUS = "contiguous"
SEMANTICS = (ANY, NEXT, CONTIGUOUS)


# ---- variables and name resolution -------------------------------------------


@dataclass(frozen=True)
class Occurrence:
    """One type occurrence of the pattern."""

    atom: ast.Atom
    negated: bool

    @property
    def name(self) -> str:
        return self.atom.var

    @property
    def type(self) -> str:
        return self.atom.type


def occurrences(pattern: ast.Pattern, negated: bool = False) -> list[Occurrence]:
    """Every type occurrence in pattern order."""
    if isinstance(pattern, ast.Atom):
        return [Occurrence(pattern, negated)]
    if isinstance(pattern, ast.Seq):
        return [o for item in pattern.items for o in occurrences(item, negated)]
    if isinstance(pattern, ast.Kleene):
        return occurrences(pattern.inner, negated)
    return occurrences(pattern.inner, True)


class Scope:
    """Resolves the names used in RETURN and WHERE to pattern occurrences.

    An alias names its occurrence; a type name names the type's occurrence if
    the type occurs exactly once (aliased or not).
    """

    def __init__(self, pattern: ast.Pattern) -> None:
        self.occurrences = occurrences(pattern)
        self.by_alias: dict[str, Occurrence] = {}
        self.by_type: dict[str, list[Occurrence]] = {}
        for occ in self.occurrences:
            if occ.atom.alias is not None:
                self.by_alias.setdefault(occ.atom.alias, occ)
            self.by_type.setdefault(occ.type, []).append(occ)

    def resolve(self, name: str) -> Occurrence | str:
        """The occurrence ``name`` refers to, or an error message."""
        if name in self.by_alias:
            return self.by_alias[name]
        occs = self.by_type.get(name, [])
        if len(occs) == 1:
            return occs[0]
        if len(occs) > 1:
            aliases = [o.atom.alias for o in occs if o.atom.alias]
            hint = f"; refer to it by its alias ({' or '.join(aliases)})" if aliases else ""
            return f"event type {name} occurs more than once in the pattern{hint}"
        return f"unknown variable {name}: it is not in the pattern"

    def var(self, name: str) -> str:
        """The variable name ``name`` resolves to (the query must be checked)."""
        occ = self.resolve(name)
        assert isinstance(occ, Occurrence), occ
        return occ.name


# ---- template (Glushkov automaton) -------------------------------------------


@dataclass
class Template:
    start: list[str] = field(default_factory=list)
    end: list[str] = field(default_factory=list)
    transitions: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    start_negations: list[int] = field(default_factory=list)
    end_negations: list[int] = field(default_factory=list)
    negations: list[list[str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "transitions": [
                {"from": a, "to": b, "negations": negs} for (a, b), negs in self.transitions.items()
            ],
            "start_negations": self.start_negations,
            "end_negations": self.end_negations,
        }


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def negation_sequence(pattern: ast.Pattern) -> list[str]:
    """The negated variables of a NOT's operand as one flat sequence (``+`` dropped)."""
    return [o.name for o in occurrences(pattern)]


def template(pattern: ast.Pattern) -> Template:
    """The template of a checked pattern."""
    tpl = Template()

    def add(src: str, dst: str, negs: list[int]) -> None:
        merged = tpl.transitions.setdefault((src, dst), [])
        merged.extend(n for n in negs if n not in merged)

    def negation(node: ast.Not) -> int:
        tpl.negations.append(negation_sequence(node.inner))
        return len(tpl.negations) - 1

    def walk(node: ast.Pattern, outermost: bool) -> tuple[list[str], list[str]]:
        """(first, last) variables of ``node``, adding its inner transitions."""
        if isinstance(node, ast.Atom):
            return [node.var], [node.var]
        if isinstance(node, ast.Kleene):
            first, last = walk(node.inner, False)
            for a in last:
                for b in first:
                    add(a, b, [])
            return first, last
        assert isinstance(node, ast.Seq)
        first: list[str] | None = None
        last: list[str] = []
        pending: list[int] = []
        for item in node.items:
            if isinstance(item, ast.Not):
                pending.append(negation(item))
                continue
            f, lst = walk(item, False)
            if first is None:
                first = f
                if outermost:
                    tpl.start_negations.extend(pending)
            else:
                for a in last:
                    for b in f:
                        add(a, b, pending)
            pending = []
            last = lst
        if outermost:
            tpl.end_negations.extend(pending)
        return first or [], last

    first, last = walk(pattern, isinstance(pattern, ast.Seq))
    order = {o.name: i for i, o in enumerate(occurrences(pattern))}
    tpl.start = sorted(_unique(first), key=order.__getitem__)
    tpl.end = sorted(_unique(last), key=order.__getitem__)
    tpl.transitions = {
        pair: tpl.transitions[pair]
        for pair in sorted(tpl.transitions, key=lambda p: (order[p[0]], order[p[1]]))
    }
    return tpl


# ---- predicates ------------------------------------------------------------------


def attr_refs(expr: ast.Expr) -> list[ast.AttrRef]:
    """Every attribute reference of an expression, left to right."""
    if isinstance(expr, ast.AttrRef):
        return [expr]
    if isinstance(expr, ast.BinOp):
        return attr_refs(expr.left) + attr_refs(expr.right)
    if isinstance(expr, ast.Neg):
        return attr_refs(expr.operand)
    return []


def condition_refs(cond: ast.Condition) -> list[ast.AttrRef]:
    if isinstance(cond, ast.Comparison):
        return attr_refs(cond.left) + attr_refs(cond.right)
    if isinstance(cond, ast.InList):
        return attr_refs(cond.expr)
    return []


def expr_to_plan(expr: ast.Expr, scope: Scope) -> dict[str, Any]:
    """A plan expression (docs/plan-format.md §Expressions) with variables resolved."""
    if isinstance(expr, ast.Literal):
        return {"lit": expr.value}
    if isinstance(expr, ast.AttrRef):
        out: dict[str, Any] = {"attr": expr.attr, "var": scope.var(expr.var)}
        if expr.next:
            out["next"] = True
        return out
    if isinstance(expr, ast.Neg):
        return {"op": "neg", "args": [expr_to_plan(expr.operand, scope)]}
    return {"op": expr.op, "args": [expr_to_plan(expr.left, scope), expr_to_plan(expr.right, scope)]}


def condition_to_plan(cond: ast.Comparison | ast.InList, scope: Scope) -> dict[str, Any]:
    if isinstance(cond, ast.InList):
        return {"op": "in", "args": [expr_to_plan(cond.expr, scope)], "values": list(cond.values)}
    return {"op": cond.op, "args": [expr_to_plan(cond.left, scope), expr_to_plan(cond.right, scope)]}


@dataclass
class Predicates:
    equivalence: list[str] = field(default_factory=list)
    local: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    adjacent: list[dict[str, Any]] = field(default_factory=list)
    required: dict[str, list[str]] = field(default_factory=dict)


def predicates(query: ast.Query, scope: Scope | None = None) -> Predicates:
    """Classify the WHERE conditions of a checked query."""
    scope = scope or Scope(query.pattern)
    out = Predicates()
    required: dict[str, set[str]] = {}
    for cond in query.conditions:
        if isinstance(cond, ast.Equivalence):
            out.equivalence.extend(a.name for a in cond.attrs if a.name not in out.equivalence)
            continue
        refs = condition_refs(cond)
        expr = condition_to_plan(cond, scope)
        nxt = [r for r in refs if r.next]
        if nxt:
            src = next(scope.var(r.var) for r in refs if not r.next)
            out.adjacent.append({"from": src, "to": scope.var(nxt[0].var), "expr": expr})
        else:
            var = scope.var(refs[0].var)
            out.local.setdefault(var, []).append(expr)
            required.setdefault(var, set()).update(r.attr for r in refs)
    for item in query.returns:
        if isinstance(item, ast.Aggregate) and item.attr is not None and item.var is not None:
            required.setdefault(scope.var(item.var), set()).add(item.attr)
    order = [o.name for o in scope.occurrences]
    out.required = {v: sorted(required[v]) for v in order if required.get(v)}
    out.local = {v: out.local[v] for v in order if v in out.local}
    return out


# ---- granularity and panes ---------------------------------------------------------


def granularity(query: ast.Query, preds: Predicates | None = None) -> str:
    """The COGRA granularity of a checked query (``trendlake.schemas.granularity``, the rule
    the engine follows too)."""
    preds = preds or predicates(query)
    return rule(
        any_match=query.semantics == ANY,
        adjacent=bool(preds.adjacent),
        negation=any(o.negated for o in occurrences(query.pattern)),
    ).value


def panes_us(workload: ast.Workload) -> int:
    """gcd of every window length and slide of the workload, in µs (0 if none)."""
    values = []
    for q in workload.queries:
        if q.window is not None:
            values += [q.window.within_us, q.window.slide_us]
    return math.gcd(*values) if values else 0
