"""Parse workload text (``grammar.lark``, LALR + contextual lexer) into the AST.

Syntax errors become a ``WorkloadError`` whose message names the query being
parsed, the position, the unexpected input and, in readable words, what was
expected there. ``canonical_tokens`` gives the token stream the workload hash
is computed from.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from trendlake.optimizer import ast
from trendlake.optimizer.errors import Diagnostic, WorkloadError

KEYWORDS = frozenset(
    "QUERY RETURN PATTERN SEMANTICS WHERE GROUP_BY WITHIN SLIDE SEQ NOT AND AS IN NEXT "
    "COUNT SUM AVG MIN MAX TRUE FALSE SEMANTICS_NAME UNIT".split()
)

READABLE = {
    "NAME": "identifier",
    "NUMBER": "number",
    "STRING": "string literal",
    "COMP_OP": "comparison operator",
    "SEMANTICS_NAME": "skip-till-any-match, skip-till-next-match or contiguous",
    "UNIT": "time unit (seconds, minutes, hours or days)",
    "GROUP_BY": "'GROUP-BY'",
    "$END": "end of input",
}
PUNCTUATION = {
    "PLUS": "+", "MINUS": "-", "STAR": "*", "SLASH": "/", "PERCENT": "%", "LPAR": "(",
    "RPAR": ")", "LSQB": "[", "RSQB": "]", "COMMA": ",", "DOT": ".", "SEMICOLON": ";",
}  # fmt: skip

UNITS = {
    "second": "seconds", "seconds": "seconds", "sec": "seconds", "secs": "seconds",
    "minute": "minutes", "minutes": "minutes", "mins": "minutes", "min": "minutes",
    "hour": "hours", "hours": "hours", "day": "days", "days": "days",
}  # fmt: skip

AGG_FN = {"SUM": "sum", "AVG": "avg", "MIN": "min", "MAX": "max"}


@functools.cache
def _lark() -> Lark:
    return Lark(
        resources.files("trendlake.optimizer").joinpath("grammar.lark").read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
    )


def readable_terminal(name: str) -> str:
    """A terminal name as a user reads it: ``'SEQ'``, ``identifier``, ``';'``."""
    if name in READABLE:
        return READABLE[name]
    if name in PUNCTUATION:
        return f"'{PUNCTUATION[name]}'"
    if name in KEYWORDS:
        return f"'{name}'"
    return name.lower()


def _expected(names: set[str] | frozenset[str]) -> str:
    words = sorted({readable_terminal(n) for n in names})
    if not words:
        return "nothing"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _current_query(tokens: list[Token]) -> str | None:
    """The name of the query the last token belongs to (None between queries)."""
    name = None
    for i, tok in enumerate(tokens[:-1] if tokens else []):
        if tok.type == "QUERY" and tokens[i + 1].type == "NAME":
            name = str(tokens[i + 1])
        elif tok.type == "SEMICOLON":
            name = None
    return name


def _syntax_error(err: UnexpectedInput, tokens: list[Token], text: str) -> Diagnostic:
    if isinstance(err, UnexpectedCharacters):
        char = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        if char == "'":
            message = "syntax error: unterminated string literal (strings end with ')"
        else:
            allowed = getattr(err, "accepted", None) or err.allowed or set()
            message = f"syntax error: unexpected character '{char}'; expected {_expected(allowed)}"
        return Diagnostic(_current_query(tokens + [Token("X", "")]), err.line, err.column, message)
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = getattr(err, "accepted", None) or err.accepts or err.expected
        if tok.type == "$END":
            last = tokens[-1] if tokens else None
            line = last.end_line if last is not None else 1
            column = last.end_column if last is not None else 1
            return Diagnostic(
                _current_query(tokens + [tok]),
                line or 1,
                column or 1,
                f"syntax error: unexpected end of input; expected {_expected(expected)}",
            )
        history = tokens if tokens and tokens[-1] is tok else tokens + [tok]
        return Diagnostic(
            _current_query(history),
            tok.line or 1,
            tok.column or 1,
            f"syntax error: unexpected '{tok}'; expected {_expected(expected)}",
        )
    assert isinstance(err, UnexpectedEOF)
    return Diagnostic(
        _current_query(tokens),
        1,
        1,
        f"syntax error: unexpected end of input; expected {_expected(set(err.expected))}",
    )


@functools.lru_cache(maxsize=8)
def _parse_tree(text: str) -> tuple[Tree, tuple[Token, ...]]:
    """The parse tree and the consumed tokens; raises UnexpectedInput (tokens in ``err.tokens``).

    Kept for the last few texts: planning parses a workload and then hashes its
    tokens (``canonical_tokens``), and a parse is most of a small plan's cost.
    Callers do not change the tree.
    """
    parser = _lark().parse_interactive(text)
    tokens: list[Token] = []
    try:
        for tok in parser.iter_parse():
            tokens.append(tok)
        tree = parser.feed_eof(tokens[-1] if tokens else None)
    except UnexpectedInput as err:
        err.tokens = tokens  # type: ignore[attr-defined]
        try:
            # what the parser accepts in its state at the error (exact, unlike LALR lookaheads)
            err.accepted = parser.accepts()  # type: ignore[attr-defined]
        except Exception:  # fall back to lark's expected set
            err.accepted = None  # type: ignore[attr-defined]
        raise
    return tree, tuple(tokens)


def canonical_tokens(text: str) -> list[str]:
    """The canonical token stream: keywords upper-cased, comments and whitespace dropped.

    A workload that does not parse is tokenized by the grammar's context-free
    lexer, or, if even that fails, split on whitespace.
    """
    try:
        _, tokens = _parse_tree(text)
    except UnexpectedInput:
        try:
            tokens = list(_lark().lex(text))
        except UnexpectedInput:
            return re.sub(r"--[^\n]*", " ", text).split()
    return [str(t).upper() if t.type in KEYWORDS else str(t) for t in tokens]


def parse_workload(text: str, path: str | None = None) -> ast.Workload:
    """Parse workload text into a ``Workload``; a syntax error raises ``WorkloadError``."""
    try:
        tree, _ = _parse_tree(text)
    except UnexpectedInput as err:
        diag = _syntax_error(err, getattr(err, "tokens", []), text)
        raise WorkloadError([diag], path) from None
    deep = [d for q in tree.children if isinstance(q, Tree) and (d := _too_deep(q)) is not None]
    if deep:
        raise WorkloadError(deep, path)
    builder = _Builder(text)
    queries = tuple(builder.query(q) for q in tree.children if isinstance(q, Tree))
    return ast.Workload(queries, path=path, text=text, line=1, column=1)


MAX_NESTING = 100  # levels of SEQ / NOT / + / parentheses / operators in one pattern or expression
_NESTING = frozenset({"seq", "kleene_plus", "negation", "binop", "neg", "paren"})


def _too_deep(query: Tree) -> Diagnostic | None:
    """A diagnostic when a pattern or expression of ``query`` nests deeper than ``MAX_NESTING``.

    Checked on the parse tree without recursion, so that the recursive AST
    builder and checks never meet Python's recursion limit.
    """
    names = [c for c in query.children if isinstance(c, Token) and c.type == "NAME"]
    name = str(names[0]) if names else None
    stack: list[tuple[Tree, int]] = [(query, 0)]
    while stack:
        node, depth = stack.pop()
        if node.data in _NESTING:
            depth += 1
            if depth > MAX_NESTING:
                return Diagnostic(
                    name, node.meta.line, node.meta.column,
                    f"pattern or expression nested more than {MAX_NESTING} levels deep (each SEQ, NOT, +, "
                    "parenthesis and operator is a level); split it up",
                )
        stack.extend((c, depth) for c in node.children if isinstance(c, Tree))
    return None


# ---- tree -> AST ---------------------------------------------------------------


def _pos(node: Tree | Token) -> dict[str, int]:
    if isinstance(node, Token):
        return {"line": node.line or 0, "column": node.column or 0}
    return {"line": node.meta.line, "column": node.meta.column}


def _trees(node: Tree) -> list[Tree]:
    return [c for c in node.children if isinstance(c, Tree)]


def _tokens(node: Tree, *types: str) -> list[Token]:
    return [c for c in node.children if isinstance(c, Token) and (not types or c.type in types)]


def _number(tok: Token) -> int | float:
    text = str(tok)
    return int(text) if text.isdigit() else float(text)


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text

    def query(self, node: Tree) -> ast.Query:
        name = _tokens(node, "NAME")[0]
        returns: tuple[ast.ReturnItem, ...] = ()
        pattern: ast.Pattern | None = None
        semantics = "skip-till-any-match"
        conditions: tuple[ast.Condition, ...] = ()
        group_by: tuple[ast.Name, ...] = ()
        window = None
        for clause in _trees(node):
            kind = clause.data
            if kind == "return_clause":
                returns = tuple(self.return_item(i) for i in _trees(clause))
            elif kind == "pattern_clause":
                pattern = self.pattern_list(_trees(clause)[0], top=True)
            elif kind == "semantics_clause":
                semantics = str(_tokens(clause, "SEMANTICS_NAME")[0]).lower()
            elif kind == "where_clause":
                conditions = tuple(self.condition(c) for c in _trees(clause))
            elif kind == "group_clause":
                group_by = tuple(ast.Name(str(t), **_pos(t)) for t in _tokens(clause, "NAME"))
            elif kind == "within_clause":
                durations = [self.duration(d) for d in _trees(clause)]
                window = ast.Window(
                    durations[0], durations[1] if len(durations) > 1 else None, **_pos(clause)
                )
        assert pattern is not None
        return ast.Query(
            str(name), returns, pattern, semantics, conditions, group_by, window, **_pos(node)
        )

    # RETURN
    def return_item(self, node: Tree) -> ast.ReturnItem:
        if node.data == "group_item":
            tok = _tokens(node, "NAME")[0]
            return ast.Name(str(tok), **_pos(tok))
        agg = _trees(node)[0]
        alias_tok = _tokens(node, "NAME")
        alias = str(alias_tok[0]) if alias_tok else None
        text = re.sub(r"\s+", "", self.text[agg.meta.start_pos : agg.meta.end_pos])
        if agg.data == "count_star":
            return ast.Aggregate("count_star", None, None, alias, text, **_pos(agg))
        if agg.data == "count_var":
            var = str(_tokens(agg, "NAME")[0])
            return ast.Aggregate("count", var, None, alias, text, **_pos(agg))
        fn = AGG_FN[str(agg.children[0]).upper()]
        var_tok, attr_tok = _tokens(_trees(agg)[0], "NAME")
        return ast.Aggregate(fn, str(var_tok), str(attr_tok), alias, text, **_pos(agg))

    # PATTERN
    def pattern_list(self, node: Tree, top: bool = False) -> ast.Pattern:
        items = tuple(self.pattern(c) for c in _trees(node))
        if top and len(items) == 1:
            return items[0]
        return ast.Seq(items, **_pos(node))

    def pattern(self, node: Tree) -> ast.Pattern:
        kind = node.data
        if kind == "atom":
            names = _tokens(node, "NAME")
            alias = str(names[1]) if len(names) > 1 else None
            return ast.Atom(str(names[0]), alias, **_pos(node))
        if kind == "seq":
            seq = self.pattern_list(_trees(node)[0])
            return ast.Seq(seq.items, **_pos(node)) if isinstance(seq, ast.Seq) else seq
        if kind == "kleene_plus":
            return ast.Kleene(self.pattern(_trees(node)[0]), **_pos(node))
        if kind == "negation":
            return ast.Not(self.pattern(_trees(node)[0]), **_pos(node))
        raise AssertionError(f"unexpected pattern node {kind}")

    # WHERE
    def condition(self, node: Tree) -> ast.Condition:
        kind = node.data
        if kind == "equivalence":
            names = tuple(ast.Name(str(t), **_pos(t)) for t in _tokens(node, "NAME"))
            return ast.Equivalence(names, **_pos(node))
        if kind == "comparison":
            left, right = _trees(node)
            op = str(_tokens(node, "COMP_OP")[0])
            return ast.Comparison(op, self.expr(left), self.expr(right), **_pos(node))
        if kind == "in_list":
            expr, *values = _trees(node)
            return ast.InList(self.expr(expr), tuple(self.literal(v) for v in values), **_pos(node))
        raise AssertionError(f"unexpected condition node {kind}")

    def literal(self, node: Tree) -> int | float | str | bool:
        kind = node.data
        if kind == "number":
            return _number(node.children[0])
        if kind == "neg_number":
            return -_number(_tokens(node, "NUMBER")[0])
        if kind == "string":
            return str(node.children[0])[1:-1].replace("''", "'")
        return kind == "true"

    def expr(self, node: Tree) -> ast.Expr:
        kind = node.data
        if kind in ("number", "string", "true", "false"):
            return ast.Literal(self.literal(node), **_pos(node))
        if kind == "attr":
            var, attr = _tokens(node, "NAME")
            return ast.AttrRef(str(var), str(attr), False, **_pos(node))
        if kind == "next_attr":
            var, attr = _tokens(node, "NAME")
            return ast.AttrRef(str(var), str(attr), True, **_pos(node))
        if kind == "paren":
            return self.expr(_trees(node)[0])
        if kind == "neg":
            inner = self.expr(_trees(node)[0])
            if isinstance(inner, ast.Literal) and isinstance(inner.value, int | float):
                if not isinstance(inner.value, bool):
                    return ast.Literal(-inner.value, **_pos(node))
            return ast.Neg(inner, **_pos(node))
        if kind == "binop":
            left, right = _trees(node)
            op = str([t for t in node.children if isinstance(t, Token)][0])
            return ast.BinOp(op, self.expr(left), self.expr(right), **_pos(node))
        raise AssertionError(f"unexpected expression node {kind}")

    # WITHIN
    def duration(self, node: Tree) -> ast.Duration:
        value = _number(_tokens(node, "NUMBER")[0])
        if _tokens(node, "MINUS"):
            value = -value
        unit = UNITS[str(_tokens(node, "UNIT")[0]).lower()]
        return ast.Duration(value, unit, **_pos(node))
