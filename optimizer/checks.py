"""Semantic checks of a parsed workload; every error is collected, then raised at once.

``check_workload`` raises ``WorkloadError`` listing one ``Diagnostic`` per
problem (docs/language.md §Errors lists the messages).
"""

from __future__ import annotations

from typing import Any

from trendlake.optimizer import ast
from trendlake.optimizer.analysis import Occurrence, Scope, condition_refs, occurrences
from trendlake.optimizer.errors import Diagnostic, WorkloadError

MAX_NAME_LENGTH = 128  # a query name names a result table (a folder) and a SQL view


def check_workload(workload: ast.Workload, stream_schema: dict[str, Any] | None = None) -> None:
    """Raise ``WorkloadError`` with every problem of the workload; return None if it is valid."""
    diags: list[Diagnostic] = []
    seen: dict[str, ast.Query] = {}
    folded: dict[str, ast.Query] = {}
    for query in workload.queries:
        if len(query.name) > MAX_NAME_LENGTH:
            diags.append(Diagnostic(
                query.name, query.line, query.column,
                f"query name is {len(query.name)} characters long; at most {MAX_NAME_LENGTH} "
                "(it names the result table)",
            ))
        other = folded.get(query.name.lower())
        if other is not None and other.name != query.name:
            diags.append(Diagnostic(
                query.name, query.line, query.column,
                f"query name {query.name} differs from query {other.name} (line {other.line}) only in case; "
                "result tables and SQL views ignore case",
            ))
        folded.setdefault(query.name.lower(), query)
        if query.name in seen:
            first = seen[query.name]
            diags.append(
                Diagnostic(
                    query.name,
                    query.line,
                    query.column,
                    f"duplicate query name {query.name} (first defined at line {first.line})",
                )
            )
        else:
            seen[query.name] = query
        diags.extend(_QueryChecker(query, stream_schema).run())
    if not workload.queries:
        diags.append(Diagnostic(None, 1, 1, "the workload has no query (each query starts with QUERY)"))
    if diags:
        diags.sort(key=Diagnostic.sort_key)
        raise WorkloadError(diags, workload.path)


class _QueryChecker:
    def __init__(self, query: ast.Query, schema: dict[str, Any] | None) -> None:
        self.q = query
        self.schema = schema
        self.diags: list[Diagnostic] = []
        self.scope = Scope(query.pattern)

    def error(self, node: ast.Node, message: str) -> None:
        self.diags.append(Diagnostic(self.q.name, node.line, node.column, message))

    def run(self) -> list[Diagnostic]:
        self.pattern_structure(self.q.pattern, parent=None, outermost=True, in_not=False)
        self.variables()
        self.returns()
        self.conditions()
        self.group_by()
        self.window()
        return self.diags

    # ---- pattern --------------------------------------------------------------------

    def pattern_structure(
        self, node: ast.Pattern, parent: ast.Pattern | None, outermost: bool, in_not: bool
    ) -> None:
        if isinstance(node, ast.Not):
            if in_not:
                self.error(node, "NOT inside a negated pattern is not supported")
            elif parent is None:
                self.error(
                    node,
                    "NOT outside a SEQ: a negated pattern must stand inside a SEQ, "
                    "e.g. SEQ(A, NOT N, B)",
                )
            self.pattern_structure(node.inner, node, False, True)
        elif isinstance(node, ast.Kleene):
            self.pattern_structure(node.inner, node, False, in_not)
        elif isinstance(node, ast.Seq):
            positive = [i for i in node.items if not isinstance(i, ast.Not)]
            if not positive and not in_not:
                self.error(node, "SEQ has no positive sub-pattern (only NOTs)")
            for k, item in enumerate(node.items):
                if isinstance(item, ast.Not) and not in_not and not outermost and positive:
                    before = any(not isinstance(i, ast.Not) for i in node.items[:k])
                    after = any(not isinstance(i, ast.Not) for i in node.items[k + 1 :])
                    if not (before and after):
                        where = "start" if not before else "end"
                        self.error(
                            item,
                            f"NOT at the {where} of a nested SEQ: a NOT must stand between two "
                            "sub-patterns (it may be first or last only in the outermost SEQ)",
                        )
                self.pattern_structure(item, node, False, in_not)

    def variables(self) -> None:
        occs = occurrences(self.q.pattern)
        by_type: dict[str, list[Occurrence]] = {}
        for occ in occs:
            by_type.setdefault(occ.type, []).append(occ)
        for typ, group in by_type.items():
            if len(group) > 1:
                for occ in group:
                    if occ.atom.alias is None:
                        self.error(
                            occ.atom,
                            f"event type {typ} occurs more than once in the pattern; give each "
                            f"occurrence an alias (e.g. {typ} {typ[:1].upper()}{len(group)})",
                        )
        names: dict[str, Occurrence] = {}
        for occ in occs:
            prior = names.get(occ.name)
            if prior is not None and (occ.atom.alias or prior.atom.alias):
                self.error(
                    occ.atom,
                    f"duplicate variable name {occ.name} (already used at line {prior.atom.line}, "
                    f"column {prior.atom.column})",
                )
            names.setdefault(occ.name, occ)
            if self.schema is not None:
                known = self.schema.get("event_types", [])
                if occ.type not in known:
                    self.error(
                        occ.atom,
                        f"unknown event type {occ.type} (stream {self.schema.get('stream', '?')} "
                        f"has {', '.join(known)})",
                    )

    # ---- references -------------------------------------------------------------------

    def resolve(self, node: ast.Node, name: str) -> Occurrence | None:
        occ = self.scope.resolve(name)
        if isinstance(occ, str):
            self.error(node, occ)
            return None
        return occ

    def attribute(self, node: ast.Node, occ: Occurrence | None, attr: str) -> None:
        """Check that ``attr`` exists in the stream and that the variable's type carries it."""
        if self.schema is None:
            return
        spec = self.schema.get("attributes", {}).get(attr)
        if spec is None:
            self.error(node, f"unknown attribute {attr} (not in stream {self.schema.get('stream', '?')})")
            return
        if occ is None or occ.type not in self.schema.get("event_types", []):
            return
        types = spec.get("types", "*")
        if types != "*" and occ.type not in types:
            self.error(node, f"event type {occ.type} has no attribute {attr} (variable {occ.name})")

    def plain_attribute(self, node: ast.Name, what: str) -> None:
        if self.schema is not None and node.name not in self.schema.get("attributes", {}):
            self.error(
                node,
                f"unknown {what} attribute {node.name} (not in stream {self.schema.get('stream', '?')})",
            )

    def returns(self) -> None:
        group = {g.name for g in self.q.group_by}
        outputs: dict[str, ast.Node] = {}
        for item in self.q.returns:
            if isinstance(item, ast.Name):
                if item.name not in group:
                    self.error(item, f"RETURN attribute {item.name} is not a GROUP-BY attribute")
                name = item.name
            else:
                name = item.output_name
                if item.var is not None:
                    occ = self.resolve(item, item.var)
                    if occ is not None and occ.negated:
                        self.error(
                            item,
                            f"aggregate {item.text} is over {occ.name}, which is only in a NOT: "
                            "negated events are never part of a trend",
                        )
                    if item.attr is not None:
                        self.attribute(item, occ, item.attr)
            if name in outputs:
                self.error(item, f"duplicate output column {name} in RETURN")
            outputs.setdefault(name, item)

    def conditions(self) -> None:
        for cond in self.q.conditions:
            if isinstance(cond, ast.Equivalence):
                for attr in cond.attrs:
                    self.plain_attribute(attr, "equivalence")
                continue
            refs = condition_refs(cond)
            occs = {}
            for ref in refs:
                occ = self.resolve(ref, ref.var)
                occs[id(ref)] = occ
                self.attribute(ref, occ, ref.attr)
            self.literal_types(cond, occs)
            current = _names(r.var for r in refs if not r.next)
            nxt = _names(r.var for r in refs if r.next)
            if not refs:
                self.error(cond, "predicate mentions no event attribute (write E.attr)")
            elif nxt:
                if len(current) != 1 or len(nxt) != 1:
                    self.error(
                        cond,
                        "adjacent predicate needs exactly one current-event variable and one "
                        f"NEXT variable (found current: {', '.join(current) or 'none'}; "
                        f"NEXT: {', '.join(nxt)})",
                    )
                for ref in refs:
                    occ = occs[id(ref)]
                    if occ is not None and occ.negated:
                        self.error(
                            ref,
                            f"adjacent predicate over negated variable {occ.name}: negated events "
                            "are never consecutive events of a trend",
                        )
                        break
            elif len(current) > 1:
                self.error(
                    cond,
                    f"predicate mentions two different variables ({' and '.join(current)}); this is "
                    "not supported: a predicate is local to one event, or adjacent between an "
                    "event and NEXT(...) of the following trend event",
                )

    def literal_types(self, cond: ast.Comparison | ast.InList, occs: dict[int, Any]) -> None:
        """A bare attribute compared with a literal of the wrong kind is always false: an error."""
        if self.schema is None:
            return
        if isinstance(cond, ast.InList):
            pairs = [(cond.expr, v) for v in cond.values]
        else:
            pairs = [(cond.left, _lit(cond.right)), (cond.right, _lit(cond.left))]
        for ref, value in pairs:
            if not isinstance(ref, ast.AttrRef) or value is None or occs.get(id(ref)) is None:
                continue
            spec = self.schema.get("attributes", {}).get(ref.attr)
            kind = _KIND.get(spec.get("type")) if spec else None
            got = "boolean" if isinstance(value, bool) else "number" if isinstance(value, int | float) else "string"
            if kind is not None and kind != got:
                self.error(
                    cond,
                    f"{ref.var}.{ref.attr} is a {spec['type']} attribute compared with a {got}; "
                    "such a comparison is always false",
                )
                return

    def group_by(self) -> None:
        seen: set[str] = set()
        for attr in self.q.group_by:
            if attr.name in seen:
                self.error(attr, f"duplicate GROUP-BY attribute {attr.name}")
            seen.add(attr.name)
            self.plain_attribute(attr, "GROUP-BY")

    def window(self) -> None:
        window = self.q.window
        if window is None:
            self.error(
                self.q, "missing WITHIN clause: every query needs a window, e.g. WITHIN 10 minutes"
            )
            return
        ok = True
        for label, dur in (("WITHIN", window.within), ("SLIDE", window.slide)):
            if dur is None:
                continue
            text = f"{_num(dur.value)} {dur.unit}"
            if dur.value <= 0:
                self.error(dur, f"{label} duration must be positive (got {text})")
                ok = False
            elif dur.value * ast.UNIT_MICROSECONDS[dur.unit] != dur.microseconds or dur.microseconds == 0:
                self.error(dur, f"{label} duration {text} is not a whole number of microseconds")
                ok = False
        if ok and window.slide is not None and window.slide_us > window.within_us:
            self.error(
                window.slide,
                f"SLIDE {_num(window.slide.value)} {window.slide.unit} is larger than WITHIN "
                f"{_num(window.within.value)} {window.within.unit}",
            )


_KIND = {"long": "number", "double": "number", "string": "string", "boolean": "boolean"}


def _lit(expr: ast.Expr) -> int | float | str | bool | None:
    return expr.value if isinstance(expr, ast.Literal) else None


def _names(names: Any) -> list[str]:
    return list(dict.fromkeys(names))


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
