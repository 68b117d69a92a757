"""The workload generator: AST -> ``.etq`` text, the inverse of the parser.

``generate(node)`` writes any AST node (a ``Workload``, a ``Query``, a
pattern, a condition, an expression, a window, ...) as text that
``parse_workload`` reads back to the same AST, source positions aside:
``strip_positions(parse_workload(generate(w))) == strip_positions(w)``.
Like sqlglot's ``Generator`` there is one method per node class
(``<snake_case name>_text``); subclass ``Generator`` to change a form.

The layout is canonical: keywords upper case, one clause per line (or all
on one line with ``pretty=False``), ``SEMANTICS`` only when it is not the
default, parentheses only where precedence needs them, a duration of 1 in
the singular (``1 hour``). An aggregate keeps its ``text`` when that text
spells the same aggregate (so ``count(*)`` stays ``count(*)``, since its
output column is named after it); build new ones with ``aggregate(...)``.

A node the language cannot express is a ``GenerateError`` naming it, never
text that parses to something else: ``A++`` (write ``SEQ(A+)+``), ``NOT``
under ``+`` or ``NOT``, a unary minus over a number literal (the parser
folds ``-5`` into the literal), an empty ``SEQ``/``RETURN``/``IN`` list,
identifiers that are not identifiers or are keywords where a keyword would
be read, non-finite numbers, unknown operators, units or semantics.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from typing import Any, TypeVar

from trendlake.optimizer import ast
from trendlake.optimizer.errors import OptimizerError

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The lexer is contextual: a keyword-looking word is a keyword only where the grammar accepts that
# keyword, so each place an identifier stands has its own reserved words (checked exhaustively against
# the parser in tests/unit/optimizer/test_generator.py); elsewhere (a query name, after a dot, inside
# [...], after GROUP-BY, AS or COUNT( ...) any identifier is fine.
TYPE_RESERVED = frozenset({"not", "seq"})  # a pattern item may start with NOT or SEQ
ALIAS_RESERVED = frozenset({"semantics", "where", "within"})  # clauses that may follow a type
RETURN_RESERVED = frozenset({"count", "sum", "avg", "min", "max"})  # a RETURN item may be an aggregate
VARIABLE_RESERVED = frozenset({"true", "false", "next"})  # an expression may start with these
RESERVED = TYPE_RESERVED | ALIAS_RESERVED | RETURN_RESERVED | VARIABLE_RESERVED
DEFAULT_SEMANTICS = "skip-till-any-match"
SEMANTICS = ("skip-till-any-match", "skip-till-next-match", "contiguous")
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}
UNARY = 3  # unary minus and negative number literals
ATOM = 4  # literals, attribute references, parenthesised expressions
SINGULAR = {"seconds": "second", "minutes": "minute", "hours": "hour", "days": "day"}
AGGREGATE_TEXT = re.compile(
    r"(?i)(?:(count)\(\*\)|(count)\(([A-Za-z_]\w*)\)|(sum|avg|min|max)\(([A-Za-z_]\w*)\.([A-Za-z_]\w*)\))"
)

N = TypeVar("N", bound=ast.Node)


class GenerateError(OptimizerError, ValueError):
    """An AST node the query language cannot express."""


def generate(node: ast.Node, *, pretty: bool = True) -> str:
    """The ``.etq`` text of ``node``; a workload ends with a newline."""
    return Generator(pretty=pretty).generate(node)


def generate_query(query: ast.Query, *, pretty: bool = True) -> str:
    """The text of one query, ending with ``;`` (no newline)."""
    return Generator(pretty=pretty).query_text(query)


def strip_positions(node: N) -> N:
    """``node`` with every source position (line, column) set to 0, for comparing ASTs."""
    return _strip(node)


def _strip(value: Any) -> Any:
    if isinstance(value, ast.Node):
        changes = {
            f.name: _strip(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name not in ("line", "column")
        }
        return dataclasses.replace(value, line=0, column=0, **changes)
    if isinstance(value, tuple):
        return tuple(_strip(v) for v in value)
    return value


def aggregate_text(fn: str, var: str | None = None, attr: str | None = None) -> str:
    """The canonical text of an aggregate: ``COUNT(*)``, ``COUNT(E)``, ``SUM(E.a)``."""
    if fn == "count_star":
        return "COUNT(*)"
    if fn == "count":
        if var is None:
            raise GenerateError("COUNT(var) needs a variable")
        return f"COUNT({var})"
    if fn not in ("sum", "avg", "min", "max"):
        raise GenerateError(f"unknown aggregate function {fn!r} (count_star, count, sum, avg, min, max)")
    if var is None or attr is None:
        raise GenerateError(f"{fn.upper()} needs a variable and an attribute")
    return f"{fn.upper()}({var}.{attr})"


def aggregate(
    fn: str, var: str | None = None, attr: str | None = None, alias: str | None = None
) -> ast.Aggregate:
    """A new ``Aggregate`` node whose ``text`` is the canonical one (what the parser would record)."""
    return ast.Aggregate(fn, var, attr, alias, aggregate_text(fn, var, attr))


def _spells(text: str, agg: ast.Aggregate) -> bool:
    """Whether ``text`` (as the parser records it) is the aggregate ``agg``."""
    m = AGGREGATE_TEXT.fullmatch(text)
    if m is None:
        return False
    star, count, count_var, fn, var, attr = m.groups()
    if star:
        return agg.fn == "count_star"
    if count:
        return agg.fn == "count" and agg.var == count_var
    return (fn.lower(), var, attr) == (agg.fn, agg.var, agg.attr)


def _number(value: int | float, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GenerateError(f"{what} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise GenerateError(f"{what} {value!r} cannot be written (numbers are finite)")
    return repr(value) if isinstance(value, float) else str(value)


class Generator:
    """Writes AST nodes as text; ``generate`` dispatches on the node's class."""

    def __init__(self, *, pretty: bool = True) -> None:
        self.pretty = pretty

    def generate(self, node: ast.Node) -> str:
        method = getattr(self, _method_name(type(node)), None)
        if method is None:
            raise GenerateError(f"cannot write a {type(node).__name__} node")
        return method(node)

    # ---- names ---------------------------------------------------------------

    def identifier(self, name: Any, what: str, reserved: frozenset[str] = frozenset()) -> str:
        """``name`` if it is an identifier the parser reads as one where it stands (not in ``reserved``)."""
        if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
            raise GenerateError(f"{what} {name!r} is not an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        if name.lower() in reserved:
            raise GenerateError(f"{what} {name!r} would be read as the keyword {name.upper()} there")
        return name

    # ---- workload and query --------------------------------------------------

    def workload_text(self, node: ast.Workload) -> str:
        if not node.queries:
            return ""
        sep = "\n\n" if self.pretty else "\n"
        return sep.join(self.query_text(q) for q in node.queries) + "\n"

    def query_text(self, node: ast.Query) -> str:
        clauses = [f"QUERY {self.identifier(node.name, 'query name')}"]
        if not node.returns:
            raise GenerateError(f"query {node.name}: RETURN needs at least one item")
        clauses.append("RETURN " + ", ".join(self.return_item(r) for r in node.returns))
        clauses.append("PATTERN " + self.generate(node.pattern))
        if node.semantics not in SEMANTICS:
            raise GenerateError(f"query {node.name}: unknown semantics {node.semantics!r} ({', '.join(SEMANTICS)})")
        if node.semantics != DEFAULT_SEMANTICS:
            clauses.append(f"SEMANTICS {node.semantics}")
        if node.conditions:
            clauses.append("WHERE " + " AND ".join(self.generate(c) for c in node.conditions))
        if node.group_by:
            clauses.append("GROUP-BY " + ", ".join(self.name_text(n) for n in node.group_by))
        if node.window is not None:
            clauses.append(self.window_text(node.window))
        return ("\n" if self.pretty else " ").join(clauses) + ";"

    def return_item(self, node: ast.ReturnItem) -> str:
        if isinstance(node, ast.Name):
            return self.identifier(node.name, "RETURN attribute", RETURN_RESERVED)
        if isinstance(node, ast.Aggregate):
            return self.generate(node)
        raise GenerateError(f"a RETURN item is a Name or an Aggregate, not {type(node).__name__}")

    def name_text(self, node: ast.Name) -> str:
        return self.identifier(node.name, "attribute name")

    def aggregate_text(self, node: ast.Aggregate) -> str:
        if node.var is not None:
            self.identifier(node.var, "aggregate variable")
        if node.attr is not None:
            self.identifier(node.attr, "aggregate attribute")
        text = node.text if _spells(node.text, node) else aggregate_text(node.fn, node.var, node.attr)
        if node.alias is not None:
            text += f" AS {self.identifier(node.alias, 'alias')}"
        return text

    # ---- patterns ------------------------------------------------------------

    def atom_text(self, node: ast.Atom) -> str:
        text = self.identifier(node.type, "event type", TYPE_RESERVED)
        if node.alias is not None:
            text += " " + self.identifier(node.alias, "alias", ALIAS_RESERVED)
        return text

    def seq_text(self, node: ast.Seq) -> str:
        if not node.items:
            raise GenerateError("SEQ needs at least one sub-pattern")
        return "SEQ(" + ", ".join(self.generate(i) for i in node.items) + ")"

    def kleene_text(self, node: ast.Kleene) -> str:
        if not isinstance(node.inner, ast.Atom | ast.Seq):
            raise GenerateError(
                f"+ applies to a type or a SEQ, not to {type(node.inner).__name__} "
                "(write SEQ(P)+ for a repeated Kleene pattern)"
            )
        return self.generate(node.inner) + "+"

    def not_text(self, node: ast.Not) -> str:
        if isinstance(node.inner, ast.Not):
            raise GenerateError("NOT cannot negate a NOT")
        return "NOT " + self.generate(node.inner)

    # ---- conditions ----------------------------------------------------------

    def equivalence_text(self, node: ast.Equivalence) -> str:
        if not node.attrs:
            raise GenerateError("an equivalence [a, ...] needs at least one attribute")
        return "[" + ", ".join(self.identifier(a.name, "attribute name") for a in node.attrs) + "]"

    def comparison_text(self, node: ast.Comparison) -> str:
        if node.op not in COMPARISONS:
            raise GenerateError(f"unknown comparison {node.op!r} ({' '.join(COMPARISONS)})")
        return f"{self.generate(node.left)} {node.op} {self.generate(node.right)}"

    def in_list_text(self, node: ast.InList) -> str:
        if not node.values:
            raise GenerateError("IN needs at least one value")
        return f"{self.generate(node.expr)} IN ({', '.join(self.value(v) for v in node.values)})"

    # ---- expressions ---------------------------------------------------------

    def value(self, value: Any) -> str:
        """A literal value: a number, a string in single quotes, true or false."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return _number(value, "literal")

    def literal_text(self, node: ast.Literal) -> str:
        return self.value(node.value)

    def attr_ref_text(self, node: ast.AttrRef) -> str:
        attr = self.identifier(node.attr, "attribute")
        if node.next:
            return f"NEXT({self.identifier(node.var, 'variable')}).{attr}"
        return f"{self.identifier(node.var, 'variable', VARIABLE_RESERVED)}.{attr}"

    def bin_op_text(self, node: ast.BinOp) -> str:
        prec = PRECEDENCE.get(node.op)
        if prec is None:
            raise GenerateError(f"unknown arithmetic operator {node.op!r} (+ - * / %)")
        left = self.operand(node.left, prec, right=False)
        right = self.operand(node.right, prec, right=True)
        return f"{left} {node.op} {right}"

    def neg_text(self, node: ast.Neg) -> str:
        inner = node.operand
        if isinstance(inner, ast.Literal) and isinstance(inner.value, int | float) and not isinstance(inner.value, bool):
            raise GenerateError(
                f"a minus over the number {inner.value!r} is written as the literal {-inner.value!r} "
                "(the parser folds it): use Literal(-n)"
            )
        text = self.generate(inner)
        if _precedence(inner) < ATOM:  # also keeps "- -x" from becoming a "--" comment
            text = f"({text})"
        return "-" + text

    def operand(self, node: ast.Expr, prec: int, *, right: bool) -> str:
        text = self.generate(node)
        own = _precedence(node)
        if own < prec or (right and own == prec):
            return f"({text})"
        return text

    # ---- windows -------------------------------------------------------------

    def duration_text(self, node: ast.Duration) -> str:
        if node.unit not in SINGULAR:
            raise GenerateError(f"unknown time unit {node.unit!r} ({', '.join(SINGULAR)})")
        value = _number(node.value, "duration")
        return f"{value} {SINGULAR[node.unit] if node.value == 1 else node.unit}"

    def window_text(self, node: ast.Window) -> str:
        text = f"WITHIN {self.duration_text(node.within)}"
        if node.slide is not None:
            text += f" SLIDE {self.duration_text(node.slide)}"
        return text


@functools.cache
def _method_name(cls: type) -> str:
    """``BinOp`` -> ``bin_op_text``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower() + "_text"


def _precedence(node: ast.Expr) -> int:
    if isinstance(node, ast.BinOp):
        return PRECEDENCE.get(node.op, 0)
    if isinstance(node, ast.Neg):
        return UNARY
    if isinstance(node, ast.Literal) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return UNARY if node.value < 0 or (node.value == 0 and math.copysign(1, node.value) < 0) else ATOM
    return ATOM
