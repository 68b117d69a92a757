"""GRETA (engine.strategies.greta) against the reference (worked examples: test_worked_examples.py).

The differential test builds random queries at the engine level: a random
pattern tree of SEQ / + / NOT over 2-4 types is turned into a template by a
small Glushkov construction below, with random local and adjacent predicates,
windows, aggregates and semantics, and compared with ``engine.strategies.reference`` on
random streams of at most 12 events with many equal time stamps.
Long run: ``HYPOTHESIS_PROFILE=thorough pytest tests/engine/test_greta.py``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.events import Event, make_events
from trendlake.engine.plan import load_plan
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import finalize, is_equal
from trendlake.engine.strategies import greta, reference

from tests.randomized import once
from tests.unit.engine.handplans import SECOND, plan_of, query_spec
from trendlake import engine

ANY = "skip-till-any-match"
NEXT = "skip-till-next-match"
CONT = "contiguous"


def compiled(spec: dict[str, Any]) -> CompiledQuery:
    return load_plan(plan_of(spec)).queries[spec["name"]]


def stream(text: str, **attrs: dict[str, Any]) -> list[Event]:
    """``"a1 b2 c5"`` -> events (type upper-cased, ts in seconds); attrs by event name."""
    rows = []
    for i, name in enumerate(text.split()):
        row: dict[str, Any] = {"type": name[0].upper(), "ts": int(name[1:]), "seq": i}
        row.update(attrs.get(name, {}))
        rows.append(row)
    return make_events(rows)


def final(
    spec: dict[str, Any], events: list[Event], run: Any = greta.run
) -> dict[int, dict[str, Any]]:
    query = compiled(spec)
    return {k: finalize(query, r) for k, r in run(query, events).items()}


def only(results: dict[int, dict[str, Any]]) -> dict[str, Any]:
    assert len(results) == 1, results
    return next(iter(results.values()))


FIG_2_3 = "a1 b2 a3 a4 c5 b6 a7 b8"
FIG_11_1 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"


def kleene_a(n: int) -> tuple[dict[str, Any], list[Event]]:
    spec = query_spec(
        variables=[("A", "A")],
        start=["A"],
        end=["A"],
        transitions=[("A", "A")],
        aggregates=[
            {"name": "COUNT(*)", "fn": "count_star"},
            {"name": "SUM(A.x)", "fn": "sum", "var": "A", "attr": "x"},
        ],
        required={"A": ["x"]},
    )
    rows = [{"type": "A", "ts": i + 1, "x": 0} for i in range(n)]
    return spec, make_events(rows)


def test_count_is_exact_up_to_the_cap_then_overflow() -> None:
    spec, events = kleene_a(100)
    assert only(final(spec, events)) == {"COUNT(*)": 2**100 - 1, "SUM(A.x)": 0}
    spec, events = kleene_a(140)
    assert only(final(spec, events))["COUNT(*)"] is engine.OVERFLOW
    assert only(final(spec, events))["SUM(A.x)"] == 0


# ---------------------------------------------------------------------------
# random hand-built queries against the reference

TYPES = ("A", "B", "C", "D")
ATTRS = ("x", "y")
OPS = ("<", "<=", ">", ">=", "=", "!=")

Node = tuple[Any, ...]  # ("leaf", var) | ("plus", node) | ("seq", [node | ("not", [var, ...])])


class _Names:
    def __init__(self) -> None:
        self.variables: list[tuple[str, str, bool]] = []
        self.negations: list[list[str]] = []

    def var(self, etype: str, negated: bool = False) -> str:
        name = f"{'n' if negated else 'v'}{len(self.variables)}{etype}"
        self.variables.append((name, etype, negated))
        return name


@st.composite
def pattern_trees(draw: st.DrawFn, names: _Names, types: list[str], size: int, top: bool) -> Node:
    """A pattern with ``size`` positive positions."""
    if size == 1:
        node: Node = ("leaf", names.var(draw(st.sampled_from(types))))
        return ("plus", node) if draw(once.booleans()) else node
    parts = draw(once.integers(2, min(3, size)))
    cuts = sorted(
        draw(
            once.lists(once.integers(1, size - 1), min_size=parts - 1, max_size=parts - 1, unique=True)
        )
    )
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
    items: list[Node] = []
    for i, part in enumerate(sizes):
        if i and draw(once.integers(0, 3)) == 0:
            items.append(draw(negation(names, types)))
        items.append(draw(pattern_trees(names, types, part, False)))
    if top and draw(once.integers(0, 4)) == 0:
        items.insert(0, draw(negation(names, types)))
    if top and draw(once.integers(0, 4)) == 0:
        items.append(draw(negation(names, types)))
    node = ("seq", items)
    if items[0][0] != "not" and items[-1][0] != "not" and draw(once.integers(0, 2)) == 0:
        node = ("plus", node)
    return node


@st.composite
def negation(draw: st.DrawFn, names: _Names, types: list[str]) -> Node:
    length = draw(once.integers(1, 2))
    seq = [names.var(draw(st.sampled_from(types + ["N"])), negated=True) for _ in range(length)]
    names.negations.append(seq)
    return ("not", len(names.negations) - 1)


def glushkov(node: Node, follow: dict[tuple[str, str], set[int]]) -> tuple[set[str], set[str]]:
    """First and last positions of ``node``; adds its (from, to) -> negations to ``follow``."""
    kind = node[0]
    if kind == "leaf":
        return {node[1]}, {node[1]}
    if kind == "plus":
        first, last = glushkov(node[1], follow)
        for a in last:
            for b in first:
                follow.setdefault((a, b), set())
        return first, last
    first_all: set[str] | None = None
    prev_last: set[str] | None = None
    pending: list[int] = []
    for item in node[1]:
        if item[0] == "not":
            pending.append(item[1])
            continue
        first, last = glushkov(item, follow)
        if prev_last is None:
            first_all = first
        else:
            for a in prev_last:
                for b in first:
                    follow.setdefault((a, b), set()).update(pending)
        pending = []
        prev_last = last
    assert first_all is not None and prev_last is not None
    return first_all, prev_last


def outer_negations(node: Node) -> tuple[list[int], list[int]]:
    if node[0] != "seq":
        return [], []
    items = node[1]
    lead: list[int] = []
    for item in items:
        if item[0] != "not":
            break
        lead.append(item[1])
    trail: list[int] = []
    for item in reversed(items):
        if item[0] != "not":
            break
        trail.append(item[1])
    return lead, trail


@st.composite
def local_expr(draw: st.DrawFn, var: str) -> dict[str, Any]:
    attr = {"attr": draw(once.sampled_from(ATTRS)), "var": var}
    k = {"lit": draw(once.integers(0, 3))}
    form = draw(once.integers(0, 2))
    if form == 0:
        return {"op": draw(once.sampled_from(OPS)), "args": [attr, k]}
    if form == 1:
        return {
            "op": "in",
            "args": [attr],
            "values": draw(once.lists(once.integers(0, 3), min_size=1, max_size=3)),
        }
    return {"op": ">", "args": [{"op": "+", "args": [attr, {"lit": 1}]}, k]}


@st.composite
def adjacent_expr(draw: st.DrawFn, src: str, dst: str) -> dict[str, Any]:
    left: dict[str, Any] = {"attr": draw(once.sampled_from(ATTRS)), "var": src}
    if draw(once.booleans()):
        left = {"op": "+", "args": [left, {"lit": draw(once.integers(-1, 1))}]}
    right = {"attr": draw(once.sampled_from(ATTRS)), "var": dst, "next": True}
    return {"op": draw(once.sampled_from(OPS)), "args": [left, right]}


@st.composite
def random_queries(draw: st.DrawFn) -> dict[str, Any]:
    types = list(TYPES[: draw(once.integers(2, 4))])
    names = _Names()
    tree = draw(pattern_trees(names, types, draw(once.integers(1, 4)), True))
    follow: dict[tuple[str, str], set[int]] = {}
    first, last = glushkov(tree, follow)
    lead, trail = outer_negations(tree)
    positive = [v for v, _, neg in names.variables if not neg]
    local = {
        v: [draw(local_expr(v))] for v, _, _ in names.variables if draw(once.integers(0, 4)) == 0
    }
    adjacent = [
        (a, b, draw(adjacent_expr(a, b)))
        for (a, b) in sorted(follow)
        if draw(once.integers(0, 3)) == 0
    ]
    aggregates: list[dict[str, Any]] = [{"name": "COUNT(*)", "fn": "count_star"}]
    required: dict[str, list[str]] = {}
    for i, fn in enumerate(
        draw(once.lists(once.sampled_from(("count", "sum", "avg", "min", "max")), max_size=3))
    ):
        var = draw(st.sampled_from(positive))
        agg = {"name": f"agg{i}", "fn": fn, "var": var}
        if fn != "count":
            agg["attr"] = draw(once.sampled_from(ATTRS))
            if agg["attr"] not in required.setdefault(var, []):
                required[var].append(agg["attr"])
        aggregates.append(agg)
    within = draw(once.integers(3, 12))
    slide = draw(once.one_of(once.just(within), once.integers(1, within)))
    return query_spec(
        variables=names.variables,
        start=sorted(first),
        end=sorted(last),
        transitions=[(a, b, sorted(negs)) for (a, b), negs in sorted(follow.items())],
        semantics=draw(once.sampled_from((ANY, NEXT, CONT))),
        within=within * SECOND,
        slide=slide * SECOND,
        negations=names.negations,
        start_negations=lead,
        end_negations=trail,
        local=local,
        adjacent=adjacent,
        required=required,
        aggregates=aggregates,
    )


@st.composite
def random_streams(draw: st.DrawFn, pool: list[str], walk: list[str]) -> list[Event]:
    """Up to 12 events: the types of ``walk`` in order (a path through the template, so
    trends are likely) mixed with random events of ``pool``, N (negated-only) and Z
    (irrelevant); small integer time stamps, many equal; attributes x, y sometimes missing."""
    n = draw(once.one_of(once.integers(0, 12), once.integers(7, 12)))
    types = list(walk[:n])
    for _ in range(n - len(types)):
        types.insert(draw(once.integers(0, len(types))), draw(st.sampled_from(pool + ["N", "Z"])))
    rows = []
    ts = draw(once.integers(0, 2))
    for i, etype in enumerate(types):
        ts += draw(once.sampled_from((0, 0, 1, 1, 1, 2)))
        row: dict[str, Any] = {"type": etype, "ts": ts, "seq": i}
        for attr in ATTRS:
            if draw(once.integers(0, 7)):
                row[attr] = draw(once.integers(0, 3))
        rows.append(row)
    return make_events(rows)


@st.composite
def template_walks(draw: st.DrawFn, spec: dict[str, Any]) -> list[str]:
    """Event types along a random path of the template from a start variable."""
    if not draw(once.integers(0, 2)):
        return []
    types = {v["name"]: v["type"] for v in spec["variables"]}
    template = spec["template"]
    var = draw(st.sampled_from(template["start"]))
    walk = [types[var]]
    steps = draw(once.integers(0, 5))
    while len(walk) < 9 and (len(walk) <= steps or var not in template["end"]):
        succ = [t["to"] for t in template["transitions"] if t["from"] == var]
        if not succ:
            break
        var = draw(st.sampled_from(succ))
        walk.append(types[var])
    return walk


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[Event]]:
    spec = draw(random_queries())
    positive = sorted({v["type"] for v in spec["variables"] if not v["negated"]})
    negative = sorted({v["type"] for v in spec["variables"] if v["negated"]} - set(positive))
    return spec, draw(random_streams(positive * 3 + negative, draw(template_walks(spec))))


def assert_same(query: CompiledQuery, events: list[Event]) -> None:
    want = reference.run(query, events)
    got = greta.run(query, events)
    assert sorted(got) == sorted(want), (got, want)
    for k in want:
        g, w = finalize(query, got[k]), finalize(query, want[k])
        assert all(is_equal(g[name], w[name]) for name in w), (k, g, w)


@settings(max_examples=max(200, settings().max_examples))
@given(case=cases())
def test_greta_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert_same(compiled(spec), events)


def test_glushkov_of_fig_2_3() -> None:
    follow: dict[tuple[str, str], set[int]] = {}
    tree = ("plus", ("seq", [("plus", ("leaf", "A")), ("leaf", "B")]))
    assert glushkov(tree, follow) == ({"A"}, {"B"})
    assert follow == {("A", "A"): set(), ("A", "B"): set(), ("B", "A"): set()}
