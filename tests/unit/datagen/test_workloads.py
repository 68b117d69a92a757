"""The workload generators (trendlake.datagen.workloads): deterministic, parameters respected, always valid."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from trendlake.datagen.workloads import (
    KINDS,
    generate_specs,
    generate_workload,
    ratio_fraction,
    zipf_weights,
)
from trendlake.jobs.cli import main
from trendlake.optimizer import ast
from trendlake.schemas import has_stream, load_stream_schema

from trendlake import optimizer

STREAMS = ("rides", "stocks", "linear_road", "smart_home", "ecommerce", "cluster", "bus")


def _stream(name: str) -> dict:
    if not has_stream(name):
        pytest.skip(f"stream schema {name} is not bundled yet")
    return load_stream_schema(name)


def compile_text(text: str, schema: dict) -> ast.Workload:
    return optimizer.compile_workload(text, schema)


def atoms(node: ast.Pattern) -> list[ast.Atom]:
    if isinstance(node, ast.Atom):
        return [node]
    if isinstance(node, ast.Seq):
        return [a for item in node.items for a in atoms(item)]
    if isinstance(node, ast.Kleene):
        return atoms(node.inner)
    return []  # NOT: the generators write none


def depth(node: ast.Pattern) -> int:
    if isinstance(node, ast.Atom):
        return 0
    if isinstance(node, ast.Kleene):
        return 1 + depth(node.inner)
    if isinstance(node, ast.Seq):
        return max(depth(i) for i in node.items)
    return depth(node.inner)


def kleenes(node: ast.Pattern) -> list[ast.Kleene]:
    """The outermost Kleene sub-patterns."""
    if isinstance(node, ast.Kleene):
        return [node]
    if isinstance(node, ast.Seq):
        return [k for i in node.items for k in kleenes(i)]
    return []


def minutes(us: int) -> float:
    return us / 60_000_000


# ---- every kind, every bundled stream -----------------------------------------------


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_query_compiles_for_many_seeds(kind: str, stream: str) -> None:
    schema = _stream(stream)
    seeds = range(30) if stream == "rides" else range(8)
    for seed in seeds:
        n = 1 + seed % 12
        text = generate_workload(kind, n, seed, schema)
        workload = compile_text(text, schema)
        assert len(workload.queries) == n, (kind, seed)
        plan = optimizer.build_plan(workload)
        assert len(plan["queries"]) == n


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_same_seed_same_text_and_seeds_differ(kind: str) -> None:
    a = generate_workload(kind, 12, 7, "rides")
    b = generate_workload(kind, 12, 7, "rides")
    assert a == b
    others = {generate_workload(kind, 12, s, "rides") for s in range(5)}
    assert len(others) > 1, "the seed changes nothing"


def test_unknown_kind_and_parameter_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown workload kind"):
        generate_workload("nope", 3)
    with pytest.raises(ValueError, match="unknown parameter"):
        generate_workload("hamlet-shared", 3, colour="red")
    with pytest.raises(ValueError, match="nesting depth"):
        generate_workload("gloria-kleene", 3, kleene_length=2, nesting=3)


# ---- Hamlet ---------------------------------------------------------------------


def plain(node: ast.Node | tuple) -> str:
    """A node's form without source positions (so equal clauses on different lines compare equal)."""

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "at"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    if isinstance(node, tuple):
        return repr([strip(n.to_dict()) for n in node])
    return repr(strip(node.to_dict()))


@pytest.mark.parametrize("same", [True, False])
def test_hamlet_shared_workload_shares_one_kleene_and_clauses(same: bool) -> None:
    schema = _stream("rides")
    w = compile_text(generate_workload("hamlet-shared", 12, 3, schema, same_predicates=same), schema)
    ks = {tuple(a.type for a in atoms(k)) for q in w.queries for k in kleenes(q.pattern)}
    assert ks == {("Travel",)}, "one shared Kleene sub-pattern Travel+"
    assert all(len(kleenes(q.pattern)) == 1 for q in w.queries)
    assert len({plain(q.pattern) for q in w.queries}) == 12, "different patterns"
    assert len({(q.window.within_us, q.window.slide_us) for q in w.queries}) == 1
    assert len({plain(q.group_by) for q in w.queries}) == 1
    assert len({plain(q.returns) for q in w.queries}) == 1
    wheres = {plain(q.conditions) for q in w.queries}
    assert all(len(q.conditions) == 2 for q in w.queries), "an equivalence and a local predicate"
    if same:
        assert len(wheres) == 1
    else:
        assert len(wheres) > 1


def test_hamlet_diverse_respects_lengths_and_windows() -> None:
    schema = _stream("rides")
    for seed in range(10):
        w = compile_text(
            generate_workload("hamlet-diverse", 20, seed, schema, min_length=2, max_length=3), schema
        )
        for q in w.queries:
            assert 2 <= len(atoms(q.pattern)) <= 3
            assert [tuple(a.type for a in atoms(k)) for k in kleenes(q.pattern)] == [("Travel",)]
            assert 5 <= minutes(q.window.within_us) <= 20
            assert minutes(q.window.within_us) == int(minutes(q.window.within_us))
        fns = {r.fn for q in w.queries for r in q.returns if isinstance(r, ast.Aggregate)}
        assert len(fns) >= 3, "different aggregates"
    w = compile_text(generate_workload("hamlet-diverse", 40, 1, schema), schema)
    assert {len(atoms(q.pattern)) for q in w.queries} == {1, 2, 3}
    assert len({q.window.within_us for q in w.queries}) > 3


# ---- Sharon ---------------------------------------------------------------------


@pytest.mark.parametrize("length", [2, 4, 6, 10])
def test_sharon_traffic_pattern_length_and_shared_subsequences(length: int) -> None:
    schema = _stream("rides")
    w = compile_text(generate_workload("sharon-traffic", 15, length, schema, length=length), schema)
    assert len(w.queries) == 15
    runs: Counter[tuple[str, ...]] = Counter()
    for q in w.queries:
        types = [a.type for a in atoms(q.pattern)]
        assert len(types) == length
        assert not kleenes(q.pattern), "Sharon patterns are fixed-length sequences"
        assert q.window.within_us == 10 * 60_000_000 and q.window.slide_us == 60_000_000
        runs.update({tuple(types[i : i + 2]) for i in range(length - 1)})
    if length >= 2:
        assert runs.most_common(1)[0][1] >= 3, "some sub-sequence is shared by several queries"


def test_sharon_ecommerce_shares_a_prefix() -> None:
    schema = _stream("rides")
    for seed in range(5):
        w = compile_text(generate_workload("sharon-ecommerce", 9, seed, schema, length=5), schema)
        prefixes = {tuple(a.type for a in atoms(q.pattern))[:2] for q in w.queries}
        assert len(prefixes) == 1
        assert all(len(atoms(q.pattern)) == 5 for q in w.queries)
        assert all(q.window.within_us == 20 * 60_000_000 for q in w.queries)


# ---- GLORIA ---------------------------------------------------------------------


def test_gloria_seq_windows_are_powers_of_five_minutes() -> None:
    schema = _stream("rides")
    w = compile_text(generate_workload("gloria-seq", 30, 2, schema, window_powers="1,2,3"), schema)
    assert {minutes(q.window.within_us) for q in w.queries} <= {5, 25, 125}
    assert {minutes(q.window.slide_us) for q in w.queries} == {5}
    assert all(not kleenes(q.pattern) and 3 <= len(atoms(q.pattern)) <= 5 for q in w.queries)


@pytest.mark.parametrize("length", [2, 3, 5, 7, 10])
@pytest.mark.parametrize("nesting", [1, 2, 3, 4, 5])
def test_gloria_kleene_length_and_nesting(length: int, nesting: int) -> None:
    schema = _stream("rides")
    if nesting > length:
        with pytest.raises(ValueError):
            generate_workload("gloria-kleene", 4, 0, schema, kleene_length=length, nesting=nesting)
        return
    w = compile_text(
        generate_workload("gloria-kleene", 8, length * 10 + nesting, schema, kleene_length=length, nesting=nesting),
        schema,
    )
    shared = set()
    for q in w.queries:
        ks = kleenes(q.pattern)
        assert len(ks) == 1, "one Kleene sub-pattern per query"
        assert len(atoms(ks[0])) == length
        assert depth(q.pattern) == nesting
        assert len(atoms(q.pattern)) > length, "different SEQ sub-patterns around it"
        shared.add(tuple(a.type for a in atoms(ks[0])))
    assert len(shared) == 1, "the Kleene sub-pattern is shared by every query"


@pytest.mark.parametrize("ratio", ["1:6", "1:4", "1:2"])
def test_gloria_mixed_ratio(ratio: str) -> None:
    schema = _stream("rides")
    n = 42
    w = compile_text(generate_workload("gloria-mixed", n, 5, schema, kleene_ratio=ratio), schema)
    n_kleene = sum(1 for q in w.queries if kleenes(q.pattern))
    assert n_kleene == round(n * ratio_fraction(ratio))


# ---- Weave Share ------------------------------------------------------------------


def test_weaveshare_windows_share_panes_and_respect_overlap() -> None:
    schema = _stream("rides")
    for omega in (1.0, 3.5, 10.0, 50.0):
        w = compile_text(generate_workload("weaveshare", 60, 4, schema, max_overlap=omega, slides=8, slide_unit_seconds=30), schema)
        for q in w.queries:
            r, s = q.window.within_us, q.window.slide_us
            assert s % 30_000_000 == 0 and 1 <= s // 30_000_000 <= 8
            assert r % 30_000_000 == 0, "every length is a multiple of the unit: the windows share panes"
            assert 1 <= r / s <= omega
        plan = optimizer.build_plan(w)
        assert plan["panes_us"] % 30_000_000 == 0
        if omega == 1.0:
            assert all(q.window.within_us == q.window.slide_us for q in w.queries)
    big = compile_text(generate_workload("weaveshare", 60, 4, schema, max_overlap=50.0), schema)
    assert max(q.window.within_us / q.window.slide_us for q in big.queries) > 10


def test_weaveshare_count_aggregates_make_panes_candidates() -> None:
    """``aggregates=count``: the same queries (windows, pattern) returning COUNT(*) and COUNT of
    the Kleene type, a state of counts the ``panes`` kind shares; ``sum`` queries it does not."""
    from trendlake.engine.shared.panes import rules

    schema = _stream("rides")
    summed = compile_text(generate_workload("weaveshare", 8, 2, schema), schema)
    counted = compile_text(generate_workload("weaveshare", 8, 2, schema, aggregates="count"), schema)
    assert [q.window for q in summed.queries] == [q.window for q in counted.queries]
    for w, eligible in ((summed, False), (counted, True)):
        entries = optimizer.build_plan(w)["queries"]
        assert all((rules.eligible(e) is None) is eligible for e in entries), entries[0]["aggregates"]
    assert {a["fn"] for e in optimizer.build_plan(counted)["queries"] for a in e["aggregates"]} == {"count_star", "count"}
    with pytest.raises(ValueError, match="aggregates: sum or count"):
        generate_workload("weaveshare", 2, 0, schema, aggregates="avg")


@pytest.mark.parametrize("skew", [0.0, 0.6, 1.2])
def test_weaveshare_slides_follow_zipf(skew: float) -> None:
    n, slides = 4000, 6
    specs = generate_specs("weaveshare", n, 11, "rides", skew=skew, slides=slides, slide_unit_seconds=60)
    counts = Counter(s.query.window.slide_us // 60_000_000 for s in specs)
    want = zipf_weights(slides, skew)
    for rank, p in enumerate(want, start=1):
        slide = slides + 1 - rank  # rank 1 = the largest slide
        got = counts[slide] / n
        assert math.isclose(got, p, abs_tol=4 * math.sqrt(p * (1 - p) / n)), (skew, slide, got, p)
    if skew > 0:
        assert counts[slides] > counts[1], "more skew, more large-slide queries"


# ---- CLI -------------------------------------------------------------------------


def test_cli_writes_the_generated_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w" / "kleene.etq"
    code = main(["workload", "gloria-kleene", "--queries", "6", "--seed", "3", "--stream", "rides",
                 "--param", "kleene_length=4", "--param", "nesting=2", "--out", str(out)])
    assert code == 0
    assert out.read_text() == generate_workload("gloria-kleene", 6, 3, "rides", kleene_length=4, nesting=2)
    assert main(["workload", "weaveshare", "--queries", "2", "--list-params"]) == 0
    assert "max_overlap=10.0" in capsys.readouterr().out
    assert main(["workload", "weaveshare", "--param", "bogus=1"]) == 2
    assert "unknown parameter" in capsys.readouterr().err


# ---- schemas of other shapes (the generators read types and attributes generically) ----

ODD_SCHEMAS = {
    "one_type": {
        "stream": "one_type", "event_types": ["Tick"],
        "attributes": {"sym": {"type": "string", "types": "*", "required": True},
                       "price": {"type": "double", "types": "*", "required": True, "min": 1, "max": 500}},
    },
    "no_keys": {
        "stream": "no_keys", "event_types": ["A", "B", "C"],
        "attributes": {"x": {"type": "long", "types": ["A", "B"], "required": False}},
    },
    "many_types": {
        "stream": "many_types", "event_types": [f"Stop{i}" for i in range(40)],
        "attributes": {"bus": {"type": "long", "types": "*", "required": True},
                       "line": {"type": "string", "types": "*", "required": True},
                       "delay": {"type": "double", "types": "*", "required": True, "min": -60, "max": 600},
                       "congested": {"type": "boolean", "types": "*", "required": False}},
    },
}


@pytest.mark.parametrize("schema_name", sorted(ODD_SCHEMAS))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_generators_handle_other_schema_shapes(kind: str, schema_name: str) -> None:
    schema = ODD_SCHEMAS[schema_name]
    params = {"kleene_length": 2, "nesting": 2} if kind in ("gloria-kleene", "gloria-mixed") else {}
    for seed in range(6):
        text = generate_workload(kind, 1 + seed * 2, seed, schema, **params)
        assert len(compile_text(text, schema).queries) == 1 + seed * 2
