"""Hypothesis strategies for differential tests that produce trends.

A case is one query as text (through the real parser) and a stream of rows
(``type``, ``ts`` in integer seconds, attributes ``x``, ``y``, ``g``, ``h``):

* patterns of 1-4 positive occurrences over the types A, B, C, drawn with
  replacement so a type often occurs twice (every occurrence then gets an
  alias); nested SEQ and Kleene plus, NOT of a type or of a SEQ at every legal
  position: first or last in the outermost SEQ, between two items of any SEQ
  (nested ones and SEQs under ``+`` included), several NOTs in a row; negated
  types are N, M or a positive type under another alias;
* predicates of every class: the equivalence ``[g]``, local predicates on
  positive and negated variables, adjacent predicates ``X.a op NEXT(Y).b`` on a
  pair of variables that are consecutive in a sampled match;
* all three semantics, tumbling and sliding windows;
* streams per partition (1-3 partitions of ``g`` and group ``h``, plus rows
  lacking them) built from walks through the pattern -- words of the pattern's
  language with, now and then, a negated event in a gap -- mixed with noise
  (pattern types, negated types, Z), 15-25 events per partition and window,
  small integer time stamps with ties, events on window boundaries, and
  attributes that sometimes are missing. Walk events are given attribute
  values passing their variable's local predicates when some values do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.oracle.expr import holds
from tests.randomized import once
from trendlake import optimizer

POSITIVE = ("A", "B", "C")
NEGATIVE = ("N", "M")
SEMANTICS = ("skip-till-any-match", "skip-till-next-match", "contiguous")
OPS = ("<=", ">=", "=", "!=", "<", ">")  # hypothesis shrinks towards the first
SMALL = (1, 2, 0, 3)


@dataclass
class Case:
    text: str
    rows: list[dict[str, Any]]
    features: set[str] = field(default_factory=set)

    def __repr__(self) -> str:
        return f"Case(\n{self.text}\nrows={self.rows!r}\nfeatures={sorted(self.features)})"


# tree: ["atom", type, var] | ["plus", node] | ["seq", [items]] | ["not", [["atom", type, var], ...], kleene_at]


@st.composite
def _negation(draw: st.DrawFn) -> list[Any]:
    n = draw(once.sampled_from((1, 1, 2)))
    types = [draw(once.sampled_from(NEGATIVE + POSITIVE[:2])) for _ in range(n)]
    kleene = draw(once.integers(-1, n - 1)) if n > 1 else -1
    return ["not", [["atom", t, None] for t in types], kleene]


@st.composite
def _tree(draw: st.DrawFn, size: int, top: bool, feats: set[str], negate: bool = True) -> list[Any]:
    if size == 1:
        node: list[Any] = ["atom", draw(once.sampled_from(POSITIVE)), None]
        return ["plus", node] if draw(once.booleans()) else node
    parts = draw(once.integers(2, min(3, size)))
    cuts = sorted(draw(once.lists(once.integers(1, size - 1), min_size=parts - 1, max_size=parts - 1, unique=True)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
    items: list[Any] = []
    for i, part in enumerate(sizes):
        if i and negate:
            for _ in range(draw(once.sampled_from((0, 0, 0, 1, 1, 2)))):
                items.append(draw(_negation()))
                feats.add("not_between" if top else "not_nested")
        items.append(draw(_tree(part, False, feats, negate)))
    lead = top and negate and draw(once.integers(0, 3)) == 0
    trail = top and negate and draw(once.integers(0, 3)) == 0
    if lead:
        items.insert(0, draw(_negation()))
        feats.add("not_leading")
    if trail:
        items.append(draw(_negation()))
        feats.add("not_trailing")
    node = ["seq", items]
    has_not = any(i[0] == "not" for i in items)
    if not lead and not trail and draw(once.integers(0, 2)) >= (1 if has_not else 2):
        if has_not:
            feats.add("not_in_kleene")
        node = ["plus", node]
    return node


def _atoms(node: list[Any]) -> list[list[Any]]:
    if node[0] == "atom":
        return [node]
    if node[0] == "plus":
        return _atoms(node[1])
    if node[0] == "not":
        return list(node[1])
    return [a for item in node[1] for a in _atoms(item)]


def _name(tree: list[Any]) -> None:
    atoms = _atoms(tree)
    seen: dict[str, int] = {}
    for a in atoms:
        seen[a[1]] = seen.get(a[1], 0) + 1
    used: dict[str, int] = {}
    for a in atoms:
        if seen[a[1]] == 1:
            a[2] = a[1]
        else:
            used[a[1]] = used.get(a[1], 0) + 1
            a[2] = f"{a[1]}{used[a[1]]}"


def _text(node: list[Any], aliased: set[str]) -> str:
    kind = node[0]
    if kind == "atom":
        return node[1] if node[2] == node[1] else f"{node[1]} {node[2]}"
    if kind == "plus":
        inner = _text(node[1], aliased)
        return inner + "+"
    if kind == "not":
        atoms = [_text(a, aliased) + ("+" if i == node[2] else "") for i, a in enumerate(node[1])]
        return "NOT " + (atoms[0] if len(atoms) == 1 else "SEQ(" + ", ".join(atoms) + ")")
    return "SEQ(" + ", ".join(_text(i, aliased) for i in node[1]) + ")"


def _all_nots(node: list[Any]) -> list[list[list[Any]]]:
    """The atoms of every NOT of the tree."""
    if node[0] == "not":
        return [node[1]]
    if node[0] == "plus":
        return _all_nots(node[1])
    if node[0] == "seq":
        return [n for item in node[1] for n in _all_nots(item)]
    return []


def _positive(node: list[Any]) -> list[list[Any]]:
    if node[0] == "atom":
        return [node]
    if node[0] == "plus":
        return _positive(node[1])
    if node[0] == "not":
        return []
    return [a for item in node[1] for a in _positive(item)]


@st.composite
def _walk(draw: st.DrawFn, node: list[Any], budget: list[int]) -> list[tuple[str, str, bool]]:
    """A word of the pattern: (type, var, negated) steps; a negated step now and then in a gap."""
    kind = node[0]
    if kind == "atom":
        budget[0] -= 1
        return [(node[1], node[2], False)]
    if kind == "plus":
        out = draw(_walk(node[1], budget))
        while budget[0] > 0 and draw(once.integers(0, 2)) == 0:
            out += draw(_walk(node[1], budget))
        return out
    if kind == "not":
        if draw(once.integers(0, 4)) == 4:
            return [(a[1], a[2], True) for a in node[1]]
        return []
    return [s for item in node[1] for s in draw(_walk(item, budget))]


LOCAL_FORMS = 5


@st.composite
def _local(draw: st.DrawFn, var: str) -> str:
    attr = draw(once.sampled_from(("x", "y")))
    form = draw(once.integers(0, LOCAL_FORMS - 1))
    k = draw(once.sampled_from(SMALL))
    if form == 0:
        return f"{var}.{attr} {draw(once.sampled_from(OPS))} {k}"
    if form == 1:
        values = draw(once.lists(once.sampled_from(SMALL), min_size=1, max_size=3, unique=True))
        return f"{var}.{attr} IN ({', '.join(map(str, values))})"
    if form == 2:
        return f"{var}.{attr} + 1 > {k}"
    if form == 3:
        return f"{var}.x * 2 - {var}.y >= {k}"
    return f"{var}.{attr} % 2 = {k % 2}"


@st.composite
def cases(draw: st.DrawFn) -> Case:
    feats: set[str] = set()
    size = draw(once.integers(1, 4))
    negate = draw(once.integers(0, 4)) >= 2  # 60% of the patterns may hold NOTs
    tree = draw(_tree(size, True, feats, negate))
    shape = draw(once.sampled_from(("free", "free", "nested", "kleene")))
    if shape != "free":  # make sure some cases have a NOT in a nested SEQ, under Kleene or not
        inner: list[Any] = ["seq", [draw(_tree(1, False, feats)), draw(_negation()), draw(_tree(1, False, feats))]]
        feats.add("not_nested")
        if shape == "kleene":
            inner = ["plus", inner]
            feats.add("not_in_kleene")
        tree = ["seq", [draw(_tree(1, False, feats)), inner]]
    if tree[0] == "atom" or tree[0] == "plus" and tree[1][0] == "atom":
        if negate and draw(once.booleans()):  # a single occurrence needs a SEQ to carry NOTs
            tree = ["seq", [draw(_negation()), tree]] if draw(once.booleans()) else ["seq", [tree, draw(_negation())]]
            feats.add("not_leading" if tree[1][0][0] == "not" else "not_trailing")
    _name(tree)
    types = [a[1] for a in _atoms(tree)]
    if len(types) != len(set(types)):
        feats.add("aliases")
    positive = _positive(tree)
    pos_vars = [a[2] for a in positive]
    neg_vars = [a[2] for a in _atoms(tree) if a[2] not in pos_vars]
    pattern = _text(tree, set())
    semantics = draw(once.sampled_from(SEMANTICS))
    feats.add(semantics)
    walks = [draw(_walk(tree, [draw(once.integers(3, 7))])) for _ in range(2)]
    conds: list[str] = []
    if draw(once.integers(0, 2)) == 0:
        conds.append("[g]")
        feats.add("equivalence")
    for var in pos_vars + neg_vars:
        if draw(once.integers(0, 3)) == 0:
            conds.append(draw(_local(var)))
            feats.add("local")
    steps = [[s[1] for s in w if not s[2]] for w in walks]  # the positive variables of each walk
    pairs = sorted({pair for w in steps for pair in zip(w, w[1:], strict=False)})
    if pairs and draw(once.integers(0, 2)) == 0:
        src, dst = draw(st.sampled_from(pairs))
        a, b = draw(once.sampled_from(("x", "y"))), draw(once.sampled_from(("x", "y")))
        op = draw(once.sampled_from(OPS))
        left = f"{src}.{a}" if draw(once.booleans()) else f"{src}.{a} + {draw(once.sampled_from((0, -1, 1)))}"
        conds.append(f"{left} {op} NEXT({dst}).{b}")
        feats.add("adjacent")
    group = draw(once.booleans())
    aggs = ["COUNT(*)"]
    for i, var in enumerate(draw(st.lists(st.sampled_from(pos_vars), max_size=3))):
        fn = draw(once.sampled_from(("COUNT", "SUM", "AVG", "MIN", "MAX")))
        attr = draw(once.sampled_from(("x", "y")))
        aggs.append(f"COUNT({var}) AS a{i}" if fn == "COUNT" else f"{fn}({var}.{attr}) AS a{i}")
    within = draw(once.integers(5, 14))
    slide = within if draw(once.booleans()) else draw(once.integers(-(-within // 3), within))
    feats.add("tumbling" if slide == within else "sliding")
    lines = [
        "QUERY q",
        "RETURN " + ", ".join((["h"] if group else []) + aggs),
        f"PATTERN {pattern}",
        f"SEMANTICS {semantics}",
    ]
    if conds:
        lines.append("WHERE " + " AND ".join(conds))
    if group:
        lines.append("GROUP-BY h")
        feats.add("group")
    lines.append(f"WITHIN {within} seconds" + ("" if slide == within else f" SLIDE {slide} seconds") + ";")
    text = "\n".join(lines)
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    local = plan["queries"][0]["local_predicates"]

    # streams: one per partition, all from a base aligned to the slide
    base = draw(once.integers(0, 3)) * slide * within
    rows: list[dict[str, Any]] = []
    n_parts = draw(once.integers(1, 3))
    pos_types = sorted({a[1] for a in positive})
    neg_types = sorted(set(types) - set(pos_types))
    # negated types as noise in some cases only, so that NOTs do not block everything
    pool = pos_types * 4 + ["Z", "Z"] + (neg_types if draw(once.booleans()) else [])
    negations = [a for a in _all_nots(tree)]
    equivalence = "[g]" in conds
    if not equivalence and not group:
        n_parts = 1
    for p in range(n_parts):
        # distinct partitions; with [g], two of them share a group
        g, h = (p, "pq"[p // 2]) if equivalence else (0, "pqr"[p])
        span = within + draw(once.integers(0, within // 2))
        n = max(6, round(draw(once.integers(15, 25)) * span / within))
        walk = (draw(st.sampled_from(walks)) + draw(st.sampled_from(walks)))[: min(n - 4, span)]
        # the walk at distinct, increasing time stamps; noise anywhere, or (contiguous,
        # mostly) outside the walk so that contiguous trends exist
        walk_ts = sorted(draw(once.lists(once.integers(0, span - 1), min_size=len(walk), max_size=len(walk), unique=True)))
        outside = semantics == "contiguous" and walk_ts and draw(once.integers(0, 5)) > 0
        noise_ts = []
        for _ in range(n - len(walk)):
            t = draw(once.integers(0, span - 1))
            if outside and walk_ts[0] <= t <= walk_ts[-1]:
                t = walk_ts[0] - 1 - t % 3 if t % 2 else walk_ts[-1] + 1 + t % 3
            noise_ts.append(t)
        if outside and len(walk_ts) > 2 and draw(once.booleans()):
            # a noise event sharing the time stamp of a walk event: a middle event of a
            # contiguous trend must be alone at its time stamp
            noise_ts[0] = draw(st.sampled_from(walk_ts[1:-1]))
            feats.add("tie_inside_a_contiguous_walk")
        events = [(t, etype, var) for t, (etype, var, _neg) in zip(walk_ts, walk, strict=True)]
        events += [(t, draw(st.sampled_from(pool)), None) for t in noise_ts]
        # now and then a match of a NOT exactly at a window's start (leading NOTs) or
        # ending exactly at a window's end (trailing NOTs): window boundaries are half-open
        for _ in range(draw(once.sampled_from((0, 1, 1, 2))) if negations else 0):
            neg = draw(st.sampled_from(negations))
            k = base // slide + draw(once.integers(-1, 2))
            if draw(once.booleans()):
                at = [k * slide - base + i for i in range(len(neg))]
            else:
                at = [k * slide + within - base - len(neg) + 1 + i for i in range(len(neg))]
            events += [(t, a[1], a[2]) for t, a in zip(at, neg, strict=True)]
            feats.add("not_on_a_window_boundary")
        # at most 11 events of positive types per partition, so that the oracle can
        # enumerate every any-match trend
        room = 11 - sum(1 for _, etype, _ in events if etype in pos_types)
        for i, (t, etype, var) in enumerate(events):
            if var is None and etype in pos_types and room < 0:
                events[i] = (t, "Z", None)
                room += 1
        events.sort(key=lambda e: e[0])
        for t, etype, var in events:
            row: dict[str, Any] = {"type": etype, "ts": base + t}
            x, y = draw(once.sampled_from(SMALL)), draw(once.sampled_from(SMALL))
            if var is not None and var in local:  # the first values passing the local predicates
                for tx, ty in [(x, y), *((a, b) for a in SMALL for b in SMALL)]:
                    if all(holds(e, {"x": tx, "y": ty}) for e in local[var]):
                        x, y = tx, ty
                        break
            if draw(once.integers(0, 11)) != 7:
                row["x"] = x
            if draw(once.integers(0, 11)) != 7:
                row["y"] = y
            row["g"] = g
            row["h"] = h
            rows.append(row)
    for _ in range(draw(once.integers(0, 2))):  # rows in no partition
        row = {"type": draw(st.sampled_from(pool)), "ts": base + draw(once.integers(0, within)), "x": 1, "y": 1}
        if draw(once.booleans()):
            row["h"] = "p"
        else:
            row["g"] = 0
        rows.append(row)
    rows.sort(key=lambda r: r["ts"])
    for i, r in enumerate(rows):
        r["seq"] = i
    feats.add(f"partitions={n_parts}")
    return Case(text, rows, feats)
