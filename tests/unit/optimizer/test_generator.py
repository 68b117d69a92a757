"""The generator (AST -> text) is the parser's inverse: ``parse(generate(ast)) == ast``, positions aside.

Checked on every parser fixture that parses, on random workload text
(``tests/randomized.py``, the same strategy the engine's differential tests
use) and on random ASTs built directly (numbers of every sign and kind,
quotes in strings, nested arithmetic, aliases, NOT, every unit). The
comparison is on ``repr`` of the position-free AST, so an int that comes
back as a float (``1`` vs ``1.0``) or a bool as a number is a failure too.
"""

from __future__ import annotations

import math
import operator
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from trendlake.optimizer import ast
from trendlake.optimizer.errors import WorkloadError
from trendlake.optimizer.generator import (
    RESERVED,
    GenerateError,
    Generator,
    aggregate,
    generate,
    generate_query,
    strip_positions,
)
from trendlake.optimizer.parser import parse_workload

from tests.randomized import once, workloads

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "parser"


def plain(node: ast.Node) -> str:
    """The position-free form of an AST, exact about value types."""
    return repr(strip_positions(node))


def _parsable() -> list[str]:
    names = []
    for path in sorted(FOLDER.glob("*.etq")):
        try:
            parse_workload(path.read_text())
        except WorkloadError:
            continue
        names.append(path.name[: -len(".etq")])
    return names


PARSABLE = _parsable()


def test_most_fixtures_parse_and_the_syntax_errors_do_not() -> None:
    all_cases = {p.name[: -len(".etq")] for p in FOLDER.glob("*.etq")}
    assert len(PARSABLE) >= 30
    assert all(name.startswith("err_syntax_") for name in all_cases - set(PARSABLE))


@pytest.mark.parametrize("name", PARSABLE)
@pytest.mark.parametrize("pretty", [True, False])
def test_every_parser_fixture_round_trips(name: str, pretty: bool) -> None:
    original = parse_workload((FOLDER / f"{name}.etq").read_text())
    text = generate(original, pretty=pretty)
    again = parse_workload(text)
    assert plain(again) == plain(original)
    assert again.to_dict().keys() == original.to_dict().keys()
    assert generate(again, pretty=pretty) == text, "generating is stable once canonical"


def test_the_layout_is_one_clause_per_line_and_keeps_aggregate_spelling() -> None:
    w = parse_workload(
        "query q return g, count(*), Sum( A . x ) as s pattern A, NOT N, B+ "
        "semantics CONTIGUOUS where [k] and A.x > -(3 - A.y) group-by g within 1 HOURS slide 90 sec;"
    )
    assert generate(w) == (
        "QUERY q\n"
        "RETURN g, count(*), Sum(A.x) AS s\n"
        "PATTERN SEQ(A, NOT N, B+)\n"
        "SEMANTICS contiguous\n"
        "WHERE [k] AND A.x > -(3 - A.y)\n"
        "GROUP-BY g\n"
        "WITHIN 1 hour SLIDE 90 seconds;\n"
    )
    assert generate_query(w.queries[0], pretty=False).startswith("QUERY q RETURN g, count(*)")


@given(workloads(max_queries=3))
def test_random_workload_text_round_trips(text: str) -> None:
    original = parse_workload(text)
    again = parse_workload(generate(original))
    assert plain(again) == plain(original)


# ---- random ASTs ----------------------------------------------------------------

# the names of [A-Za-z_][A-Za-z0-9_]{0,6}, built from text draws (st.from_regex drew the same
# language at several times the cost)
_NAME_START = string.ascii_letters + "_"
NAMES = st.builds(
    operator.add, once.sampled_from(_NAME_START), once.text(alphabet=_NAME_START + string.digits, max_size=6)
).filter(lambda s: s.lower() not in RESERVED)
NUMBERS = st.one_of(
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)
VALUES = st.one_of(NUMBERS, st.text(alphabet="ab' -\n\\", max_size=6), st.booleans())


def _neg_ok(e: ast.Expr) -> bool:
    """A minus over a number literal is that literal (the parser folds it); anything else may be negated."""
    return not (isinstance(e, ast.Literal) and isinstance(e.value, int | float) and not isinstance(e.value, bool))


EXPRS = st.recursive(
    st.one_of(
        st.builds(ast.Literal, VALUES),
        st.builds(ast.AttrRef, NAMES, NAMES, st.booleans()),
    ),
    lambda inner: st.one_of(
        st.builds(ast.BinOp, st.sampled_from("+-*/%"), inner, inner),
        st.builds(ast.Neg, inner.filter(_neg_ok)),
    ),
    max_leaves=8,
)
CONDITIONS = st.one_of(
    st.builds(ast.Equivalence, st.lists(st.builds(ast.Name, NAMES), min_size=1, max_size=3).map(tuple)),
    st.builds(ast.Comparison, st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), EXPRS, EXPRS),
    st.builds(ast.InList, EXPRS, st.lists(VALUES, min_size=1, max_size=4).map(tuple)),
)
ATOMS = st.builds(ast.Atom, NAMES, st.none() | NAMES)


def _patterns(inner: st.SearchStrategy[ast.Pattern]) -> st.SearchStrategy[ast.Pattern]:
    seqs = once.lists(inner, min_size=1, max_size=4).map(lambda items: ast.Seq(tuple(items)))
    return once.one_of(
        seqs,
        once.one_of(ATOMS, seqs).map(ast.Kleene),
        inner.filter(lambda p: not isinstance(p, ast.Not)).map(ast.Not),
    )


PATTERNS = st.recursive(ATOMS, _patterns, max_leaves=8)


@st.composite
def aggregates(draw: st.DrawFn) -> ast.Aggregate:
    fn = draw(once.sampled_from(("count_star", "count", "sum", "avg", "min", "max")))
    alias = draw(once.none() | NAMES)
    if fn == "count_star":
        return aggregate(fn, alias=alias)
    if fn == "count":
        return aggregate(fn, draw(NAMES), alias=alias)
    return aggregate(fn, draw(NAMES), draw(NAMES), alias)


DURATIONS = st.builds(
    ast.Duration,
    st.one_of(st.integers(-100, 10**6), st.floats(0.001, 1e6)),
    st.sampled_from(["seconds", "minutes", "hours", "days"]),
)


@st.composite
def ast_queries(draw: st.DrawFn, name: str) -> ast.Query:
    returns = draw(once.lists(once.one_of(st.builds(ast.Name, NAMES), aggregates()), min_size=1, max_size=4))
    window = draw(once.none() | st.builds(ast.Window, DURATIONS, once.none() | DURATIONS))
    return ast.Query(
        name,
        tuple(returns),
        draw(PATTERNS),
        draw(once.sampled_from(("skip-till-any-match", "skip-till-next-match", "contiguous"))),
        tuple(draw(once.lists(CONDITIONS, max_size=3))),
        tuple(draw(st.lists(st.builds(ast.Name, NAMES), max_size=3))),
        window,
    )


@st.composite
def ast_workloads(draw: st.DrawFn) -> ast.Workload:
    n = draw(once.integers(0, 3))
    return ast.Workload(tuple(draw(ast_queries(f"q{i}")) for i in range(n)))


@given(ast_workloads(), st.booleans())
def test_random_asts_round_trip(workload: ast.Workload, pretty: bool) -> None:
    text = generate(workload, pretty=pretty)
    assert plain(parse_workload(text)) == plain(workload), text


@given(EXPRS)
def test_expressions_keep_their_structure_and_value_types(expr: ast.Expr) -> None:
    query = ast.Query("q", (aggregate("count_star"),), ast.Atom("A"), "skip-till-any-match",
                      (ast.Comparison("=", expr, expr),), (), None)
    back = parse_workload(generate(query)).queries[0].conditions[0]
    assert plain(back) == plain(ast.Comparison("=", expr, expr))


# ---- what the language cannot say -------------------------------------------------------


def _query(pattern: ast.Pattern | None = None, **changes) -> ast.Query:
    base = {"name": "q", "returns": (aggregate("count_star"),), "pattern": pattern or ast.Atom("A"),
            "semantics": "skip-till-any-match", "conditions": (), "group_by": (), "window": None}
    base.update(changes)
    return ast.Query(**base)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (_query(ast.Kleene(ast.Kleene(ast.Atom("A")))), r"\+ applies to a type or a SEQ"),
        (_query(ast.Seq((ast.Atom("A"), ast.Not(ast.Not(ast.Atom("N")))))), "NOT cannot negate a NOT"),
        (_query(ast.Seq(())), "SEQ needs at least one"),
        (_query(ast.Atom("A", "Within")), "alias 'Within' would be read as the keyword WITHIN"),
        (_query(ast.Atom("seq")), "event type 'seq' would be read as the keyword SEQ"),
        (_query(ast.Atom("A", "my alias")), "alias 'my alias' is not an identifier"),
        (_query(returns=()), "RETURN needs at least one item"),
        (_query(semantics="greedy"), "unknown semantics 'greedy'"),
        (ast.Neg(ast.Literal(5)), "written as the literal -5"),
        (ast.Literal(math.inf), "cannot be written"),
        (ast.BinOp("**", ast.Literal(2), ast.Literal(3)), "unknown arithmetic operator"),
        (ast.Comparison("<>", ast.Literal(2), ast.Literal(3)), "unknown comparison"),
        (ast.InList(ast.AttrRef("A", "x"), ()), "IN needs at least one value"),
        (ast.Duration(5, "weeks"), "unknown time unit 'weeks'"),
        (ast.Duration(True, "seconds"), "duration must be a number"),
    ],
)
def test_what_the_language_cannot_say_is_an_error_naming_it(node: ast.Node, message: str) -> None:
    with pytest.raises(GenerateError, match=message):
        generate(node)


def test_a_keyword_is_fine_as_a_query_name_and_after_a_dot() -> None:
    q = _query(name="within", conditions=(ast.Comparison(">", ast.AttrRef("A", "count"), ast.Literal(1)),))
    assert plain(parse_workload(generate(q)).queries[0]) == plain(q)


# ---- keywords as names: exactly the ones the parser would misread are refused ----------

WORDS = (
    "query return pattern semantics where within slide seq not and as in next count sum avg min max true false "
    "group second seconds sec secs minute minutes min mins hour hours day days"
).split()


def _positions(w: str) -> dict[str, ast.Node]:
    one = ast.Literal(1)
    cond = lambda c: _query(conditions=(c,))  # noqa: E731
    return {
        "query name": _query(name=w),
        "event type": _query(ast.Atom(w)),
        "event type in a SEQ": _query(ast.Seq((ast.Atom("A"), ast.Atom(w)))),
        "alias": _query(ast.Atom("A", w)),
        "RETURN attribute": _query(returns=(ast.Name(w), aggregate("count_star")), group_by=(ast.Name(w),)),
        "GROUP-BY attribute": _query(group_by=(ast.Name(w), ast.Name(w + "2"))),
        "equivalence attribute": cond(ast.Equivalence((ast.Name(w), ast.Name(w)))),
        "variable": cond(ast.Comparison(">", ast.AttrRef(w, "x"), one)),
        "variable after an operator": cond(ast.Comparison(">", one, ast.BinOp("*", one, ast.AttrRef(w, "x")))),
        "NEXT variable": cond(ast.Comparison(">", ast.AttrRef("A", "x"), ast.AttrRef(w, "x", True))),
        "attribute": cond(ast.Comparison(">", ast.AttrRef("A", w), ast.AttrRef("A", w, True))),
        "IN expression": cond(ast.InList(ast.AttrRef(w, "x"), (1,))),
        "COUNT variable": _query(returns=(aggregate("count", w),)),
        "SUM variable and attribute": _query(returns=(aggregate("sum", w, w),)),
        "aggregate alias": _query(returns=(aggregate("count_star", alias=w),)),
    }


class _Unchecked(Generator):
    def identifier(self, name, what, reserved=frozenset()):  # noqa: ANN001, ANN201
        return name


@pytest.mark.parametrize("word", WORDS)
def test_a_keyword_as_a_name_is_refused_exactly_where_the_parser_would_misread_it(word: str) -> None:
    for where, node in _positions(word).items():
        naive = _Unchecked().generate(node)
        try:
            text = generate(node)
        except GenerateError:
            try:
                back = parse_workload(naive).queries[0]
            except WorkloadError:
                continue
            assert plain(back) != plain(node), f"{word!r} as {where} was refused, yet {naive!r} reads back fine"
            continue
        assert plain(parse_workload(text).queries[0]) == plain(node), (word, where, text)
