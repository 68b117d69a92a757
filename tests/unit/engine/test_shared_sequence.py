"""Shared sequence execution (GLORIA) against each query alone and the two-step reference.

The worked example is GLORIA's Figure 3: over the stream c0, a1, b2, a3, b4,
d5, q1 = SEQ(C, SEQ(A, B)+, D) has 4 trends (c a1 b2 d, c a1 b4 d, c a3 b4 d,
c a1 b2 a3 b4 d) and q2 = SEQ(C, SEQ(A, B)+) 4 (c a1 b2, c a1 b4, c a3 b4,
c a1 b2 a3 b4). Sharing C -> A, A -> B and B -> A between them with snapshots
of C, the events of A take 3 propagations (a1 from C; a3 from C and B) instead
of 6 (the same, once per query).
"""

from __future__ import annotations

import copy
import random
import re
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from trendlake.engine.plan import PlanError, content_hash, load_plan
from trendlake.engine.shared.sequence import SequenceStats, run
from trendlake.engine.shared.sequence.body import resolve, shape_of_entry
from trendlake.optimizer import parse_workload, workload_hash
from trendlake.optimizer.plan import build_plan

from tests.randomized import once
from tests.unit.engine.engine_adapter import run_engine, same_rows
from tests.unit.engine.handplans import sequence_group
from trendlake import engine

FIGURE_3 = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B)+, D) WITHIN 1 minute;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B)+) WITHIN 1 minute;"""
# (1, 2)^C on C -> A, A -> B, B -> A; q1 alone continues the expression into D
FIGURE_3_PLAN = {("C", "A"): [(["q1", "q2"], "C")], ("A", "B"): [(["q1", "q2"], "C")],
                 ("B", "A"): [(["q1", "q2"], "C")], ("B", "D"): [(["q1"], "C")]}


def _plan(text: str) -> dict[str, Any]:
    return build_plan(parse_workload(text), planner="none")


def _rows(types: str, x: list[int] | None = None) -> list[dict[str, Any]]:
    return [{"type": t, "ts": i, "seq": i, "x": (x[i] if x else i)} for i, t in enumerate(types)]


def test_figure_3_count_and_shared_propagations() -> None:
    plan = _plan(FIGURE_3)
    alone = engine.evaluate(plan, engine.table_from_rows(_rows("CABABD")))
    plan["sharing"] = [sequence_group(plan, FIGURE_3_PLAN)]
    report = {"g0": SequenceStats()}
    rows = engine.evaluate(plan, engine.table_from_rows(_rows("CABABD")), shared_stats=report)
    assert {r["query"]: r["COUNT(*)"] for r in rows} == {"q1": 4, "q2": 4}
    assert rows == alone
    stats = report["g0"]
    assert stats.by_type["A"] == [3, 6, 0]  # 3 propagations shared instead of 6, none per query
    assert stats.by_type["B"] == [2, 4, 0]  # b2 from A, b4 from A
    assert stats.by_type["D"] == [0, 0, 1]  # q1's Q-set of one query: its own
    assert stats.snapshots == 1 and stats.split == 0


def test_figure_3_with_local_snapshots_and_different_predicates() -> None:
    # snapshots of A (local: each event of A evaluated per query); q2 drops the A with x = 3
    text = FIGURE_3.replace("PATTERN SEQ(C, SEQ(A, B)+) WITHIN", "PATTERN SEQ(C, SEQ(A, B)+) WHERE A.x != 3 WITHIN")
    text = text.replace("RETURN COUNT(*)", "RETURN COUNT(*), COUNT(A), SUM(B.x), MIN(A.x), MAX(B.x), AVG(B.x)")
    plan = _plan(text)
    table = engine.table_from_rows(_rows("CABABD"))
    alone = engine.evaluate(plan, table)
    plan["sharing"] = [sequence_group(plan, {("C", "A"): [(["q1", "q2"], "C")], ("A", "B"): [(["q1", "q2"], "A")],
                                             ("B", "A"): [(["q1", "q2"], "A")], ("B", "D"): [(["q1"], "B")]})]
    report = {"g0": SequenceStats()}
    got = engine.evaluate(plan, table, shared_stats=report)
    assert got == alone
    assert [r["COUNT(*)"] for r in got] == [4, 2]  # q2 without a3: c a1 b2, c a1 b4
    # a3 (x = 3): q1 matches it, q2 does not; both Q-sets into A (from C, from B) split there
    assert report["g0"].split == 2
    assert got == run_engine(_plan(text), _rows("CABABD"), "twostep")


# ------------------------------------------------------------------ check

def rehashed(plan: dict[str, Any]) -> dict[str, Any]:
    plan["content_hash"] = content_hash(plan)
    return plan


THREE = FIGURE_3 + "\nQUERY q3 RETURN COUNT(*) PATTERN SEQ(E, A) WITHIN 1 minute;"


def _load(edit: Any) -> None:
    plan = build_plan(parse_workload(THREE), planner="none")
    group = sequence_group(plan, FIGURE_3_PLAN, queries=["q1", "q2"])
    edit(group["body"])
    plan["sharing"] = [group]
    load_plan(rehashed(plan), workload_hash(THREE))


def _qsets(body: dict[str, Any], src: str, dst: str) -> list[dict[str, Any]]:
    return next(t for t in body["transitions"] if (t["from"], t["to"]) == (src, dst))["qsets"]


BAD_BODIES: dict[str, tuple[Any, str]] = {
    "query outside the group": (lambda b: _qsets(b, "C", "A")[0]["queries"].append("q3"),
                                "the Q-set of C -> A names query q3, which is not in the group"),
    "query outside the plan": (lambda b: _qsets(b, "C", "A")[0]["queries"].append("ghost"),
                               "the Q-set of C -> A names query ghost, which is not in the plan"),
    "transition not in the templates": (
        lambda b: b["transitions"].append({"from": "D", "to": "A", "qsets": [{"queries": ["q1"], "snapshots": "D"}]}),
        "the Q-set of D -> A names query q1, whose template has no D -> A"),
    "covered twice": (lambda b: _qsets(b, "A", "B").append({"queries": ["q1"], "snapshots": "A"}),
                      "query q1's transition A -> B is in two Q-sets"),
    "covered by no Q-set": (lambda b: b.update(transitions=[t for t in b["transitions"] if t["to"] != "D"]),
                            "query q1's transition B -> D is in no Q-set"),
    "snapshots that never reach": (lambda b: _qsets(b, "B", "D")[0].update(snapshots="D"),
                                   "the values of B are neither snapshots of D nor one Q-set's expression"),
    "snapshot type not the queries'": (lambda b: _qsets(b, "C", "A")[0].update(snapshots="E"),
                                       "snapshots type E, which is not a type of each of its queries"),
    "a start type continued": (lambda b: _qsets(b, "C", "A")[0].update(snapshots="A"),
                               "values of C are neither snapshots of A"),
    "mixed spaces into a source": (lambda b: _qsets(b, "B", "A")[0].update(snapshots="B"),
                                   "query q1's transitions into A are not all in that Q-set's space"),
    "variables of another query": (lambda b: b["variables"].update(q3={"E": "E"}),
                                   "variables must name exactly its queries"),
    "variable of the wrong type": (lambda b: b["variables"]["q1"].update(A="B"),
                                   "variable q1.B is not a positive variable of type A"),
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_check_refuses_invalid_bodies_with_one_line(case: str) -> None:
    edit, message = BAD_BODIES[case]
    with pytest.raises(PlanError) as info:
        _load(edit)
    text = str(info.value)
    assert "sharing group g0: " in text and message in text, text
    assert "\n" not in text


def test_the_figure_3_group_loads() -> None:
    _load(lambda b: None)


def test_a_qset_continues_a_larger_one_but_does_not_gather_two() -> None:
    text = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(C, A, B) WITHIN 1 minute;
              QUERY q2 RETURN COUNT(*) PATTERN SEQ(C, A, B) WITHIN 1 minute;
              QUERY q3 RETURN COUNT(*) PATTERN SEQ(C, A, B) WITHIN 1 minute;"""
    plan = build_plan(parse_workload(text), planner="none")
    entries = {q["name"]: q for q in plan["queries"]}
    group = sequence_group(plan, {("C", "A"): [(["q1", "q2", "q3"], "C")],
                                  ("A", "B"): [(["q1", "q2"], "C"), (["q3"], "C")]})
    _, problems = resolve(group["body"], {q: shape_of_entry(entries[q]) for q in entries})
    assert problems == []  # a Q-set may continue a larger one's expression...
    rows = _rows("CAABBCAB")
    want = engine.evaluate(plan, engine.table_from_rows(rows))
    plan["sharing"] = [group]
    assert engine.evaluate(plan, engine.table_from_rows(rows)) == want
    group = sequence_group(plan, {("C", "A"): [(["q1", "q2"], "C"), (["q3"], "C")],
                                  ("A", "B"): [(["q1", "q2", "q3"], "C")]})
    _, problems = resolve(group["body"], {q: shape_of_entry(entries[q]) for q in entries})
    assert any("nor one Q-set's expression over them" in p for p in problems)  # ...not gather two
    four = text.replace("SEQ(C, A, B)", "SEQ(C, A, B, D)")
    plan = build_plan(parse_workload(four), planner="none")
    group = sequence_group(plan, {("C", "A"): [(["q1", "q2", "q3"], "C")],
                                  ("A", "B"): [(["q1", "q2"], "C"), (["q3"], "C")],
                                  ("B", "D"): [(["q2", "q3"], "C"), (["q1"], "B")]})
    plan["sharing"] = [group]
    with pytest.raises(PlanError, match=r"sharing group g0: the Q-set \['q2', 'q3'\] of B -> D continues the "
                                        r"expression of B over \['q1', 'q2'\], which does not hold each of its queries"):
        load_plan(rehashed(plan), workload_hash(four))


@pytest.mark.parametrize(("q2", "message"), [
    ("SEQ(C, SEQ(A, B)+) SEMANTICS skip-till-next-match", "query q2: skip-till-next-match is not shared"),
    ("SEQ(C, SEQ(A, B)+) WHERE A.x < NEXT(B).x", "query q2: adjacent predicates or negation"),
    ("SEQ(C, SEQ(A, B)+, NOT E)", "query q2: adjacent predicates or negation"),
])
def test_an_unsupported_query_is_refused(q2: str, message: str) -> None:
    text = FIGURE_3.replace("SEQ(C, SEQ(A, B)+) WITHIN", f"{q2} WITHIN")
    plan = _plan(text)
    plan["sharing"] = [sequence_group(plan, FIGURE_3_PLAN)]
    with pytest.raises(engine.PlanError, match=re.escape(f"sharing group g0: {message}")):
        engine.evaluate(plan, engine.table_from_rows(_rows("CABABD")))


# ------------------------------------------------------------ differential

CORES = ("SEQ(A, B)", "SEQ(A, B)+", "SEQ(A, B+)+", "SEQ(A+, B)", "SEQ(A, B+)", "SEQ(SEQ(A, B+)+, G)", "SEQ(B+, A)",
         "SEQ(A, G, B)+")
AGGS = ("COUNT(*)", "COUNT(A)", "COUNT(B)", "SUM(B.x)", "AVG(A.x)", "MIN(B.x)", "MAX(A.x)", "SUM({o}.x)",
        "MIN({o}.x)", "COUNT({o})")
WINDOWS = ("WITHIN 10 seconds", "WITHIN 10 seconds SLIDE 5 seconds")


PREDICATES = ("A.x > 1", "A.x != 3", "B.x < 5", "B.x != 2", "OWN.x > 2")


@st.composite
def workloads(draw: Any, aggregates: tuple[str, ...] = AGGS) -> str:
    """2-8 queries sharing a SEQ or nested-Kleene core over A and B, with their own prefix
    and suffix types, local predicates and ``aggregates`` (``{o}``: one of the query's own
    types), in one or two windows, partitioned by g or not."""
    n = draw(once.integers(2, 8))
    core = draw(once.sampled_from(CORES))
    windows = draw(once.sampled_from((WINDOWS[:1], WINDOWS)))
    by = draw(once.sampled_from(("", " GROUP-BY g")))
    queries = []
    for i in range(n):
        prefix = draw(once.sampled_from(("", "C", "E")))
        suffix = draw(once.sampled_from(("", "D", "F")))
        this_core = core if draw(once.integers(0, 3)) else draw(once.sampled_from(CORES))
        items = [t for t in (prefix, this_core, suffix) if t]
        pattern = this_core if len(items) == 1 else f"SEQ({', '.join(items)})"
        own = [t for t in (prefix, suffix) if t] or ["A"]
        aggs = draw(once.lists(once.sampled_from(aggregates), min_size=1, max_size=3, unique=True))
        ret = ", ".join(dict.fromkeys(a.format(o=draw(st.sampled_from(own))) for a in aggs))
        preds = draw(once.lists(once.sampled_from(PREDICATES), max_size=2, unique=True))
        preds = [p.replace("OWN", own[0]) for p in preds]
        where = f" WHERE {' AND '.join(preds)}" if preds else ""
        ret = f"g, {ret}" if by else ret
        queries.append(f"QUERY q{i} RETURN {ret} PATTERN {pattern}{where}{by} {draw(once.sampled_from(windows))};")
    return "\n".join(queries)


@st.composite
def streams(draw: Any, size: tuple[int, int]) -> list[dict[str, Any]]:
    """Events of the workloads' types with ties on time stamps, repeats of A and B, two groups."""
    rows: list[dict[str, Any]] = []
    t = draw(once.integers(0, 3))
    n = draw(once.integers(*size))
    while len(rows) < n:
        ty = draw(once.sampled_from(("A", "A", "B", "B", "C", "D", "E", "F", "G")))
        t += draw(once.sampled_from((0, 1, 1, 2, 3)))
        rows.append({"type": ty, "ts": t, "seq": len(rows), "x": draw(once.integers(0, 6)),
                     "g": draw(once.sampled_from((1, 1, 2)))})
    return rows


def random_groups(plan: dict[str, Any], rnd: random.Random) -> list[dict[str, Any]]:
    """A random valid ``sequence`` group per window class of the plan's queries (2 or more of
    them, type-grained, skip-till-any-match): per transition a random partition into Q-sets,
    each continuing a random snapshot type's expression where that is valid, else snapshots
    at its source."""
    classes: dict[str, list[str]] = {}
    for q in plan["queries"]:
        if q["granularity"] == "type":
            classes.setdefault(repr((q["window"], q["partition_by"])), []).append(q["name"])
    entries = {q["name"]: q for q in plan["queries"]}
    groups = []
    for i, names in enumerate(c for c in classes.values() if len(c) >= 2):
        shapes = {q: shape_of_entry(entries[q]) for q in names}
        per: dict[tuple[str, str], list[str]] = {}
        for q in names:
            for tr in sorted(shapes[q].transitions):
                per.setdefault(tr, []).append(q)
        together = rnd.random() < 0.5  # every transition one Q-set: the most sharing
        types = sorted({t for s in shapes.values() for t in s.types})
        target = rnd.choice(types)
        qsets: dict[tuple[str, str], list[tuple[list[str], str]]] = {}
        wanted: list[tuple[tuple[str, str], int, str]] = []
        for tr, qs in sorted(per.items()):
            parts: list[list[str]] = [] if not together else [list(qs)]
            if not together:
                for q in qs:
                    k = rnd.randrange(len(parts) + 1)
                    parts.append([q]) if k == len(parts) else parts[k].append(q)
            qsets[tr] = [(p, tr[0]) for p in parts]
            wanted += [(tr, j, target if together else rnd.choice(types)) for j in range(len(parts))]
        group = sequence_group(plan, qsets, queries=names, gid=f"g{i}")

        def valid(g: dict[str, Any], shapes: dict[str, Any] = shapes) -> bool:
            return not resolve(g["body"], shapes)[1]

        # all the drawn snapshot types at once (cycles of nested Kleene need them together),
        # else one Q-set at a time, kept where still valid
        trial = copy.deepcopy(group)
        for tr, j, e in wanted:
            _qsets(trial["body"], *tr)[j]["snapshots"] = e
        if valid(trial):
            group = trial
        else:
            for tr, j, e in wanted:
                entry = _qsets(group["body"], *tr)[j]
                before = entry["snapshots"]
                entry["snapshots"] = e
                if not valid(group):
                    entry["snapshots"] = before
        assert valid(group)
        groups.append(group)
    return groups


def _shared_plan(text: str, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    alone = _plan(text)
    shared = copy.deepcopy(alone)
    shared["sharing"] = random_groups(shared, random.Random(seed))
    return shared, alone


@settings(max_examples=60, deadline=None)
@given(workloads(), streams((20, 50)), st.integers(0, 2**32), st.sampled_from((1, 2, run.REBASE_LENGTH)))
def test_random_groups_equal_every_query_alone(text: str, rows: list[dict[str, Any]], seed: int, rebase: int) -> None:
    shared, alone = _shared_plan(text, seed)
    table = engine.table_from_rows(rows)
    report: dict[str, SequenceStats] = {}
    with patch.object(run, "REBASE_LENGTH", rebase):  # short: expressions replaced by snapshots often
        got = engine.evaluate(shared, table, shared_stats=report)
    want = engine.evaluate(alone, table)
    assert same_rows(got, want), (text, rows, shared["sharing"])
    event(f"groups: {len(shared['sharing'])}")
    continued = any(qs["snapshots"] != t["from"] for g in shared["sharing"] for t in g["body"]["transitions"]
                    for qs in t["qsets"])
    event(f"a Q-set continues an expression: {continued}")
    event(f"shared propagations: {any(r.shared for r in report.values())}")
    event(f"split time stamps: {any(r.split for r in report.values())}")
    event(f"rebases: {any(r.rebases for r in report.values())}")
    for g in shared["sharing"]:
        r = report.get(g["id"], SequenceStats())
        assert r.shared <= r.alone
        if all(len(qs["queries"]) == 1 for t in g["body"]["transitions"] for qs in t["qsets"]):
            assert r.shared == r.alone == r.split == 0  # Q-sets of one query: nothing shared


@settings(max_examples=20, deadline=None)
@given(workloads(), streams((6, 12)), st.integers(0, 2**32))
def test_random_groups_equal_the_two_step_reference(text: str, rows: list[dict[str, Any]], seed: int) -> None:
    shared, alone = _shared_plan(text, seed)
    got = run_engine(shared, rows, "auto")
    want = run_engine(alone, rows, "twostep")
    assert same_rows(got, want), (text, rows, shared["sharing"])


def test_saturated_windows_equal_each_query_alone() -> None:
    # 150 A/B pairs: counts far past CAP; SUM saturates as the query alone saturates it
    text = """QUERY q1 RETURN COUNT(*), SUM(B.x), MIN(A.x) PATTERN SEQ(C, SEQ(A, B)+) WITHIN 1 hour;
              QUERY q2 RETURN COUNT(*), AVG(B.x), MAX(B.x) PATTERN SEQ(C, SEQ(A, B)+, D) WITHIN 1 hour;
              QUERY q3 RETURN COUNT(*), COUNT(B) PATTERN SEQ(C, SEQ(A, B)+) WHERE B.x != 2 WITHIN 1 hour;"""
    types = "C" + "AB" * 150 + "D"
    rows = [{"type": t, "ts": i, "seq": i, "x": i % 5} for i, t in enumerate(types)]
    plan = _plan(text)
    table = engine.table_from_rows(rows)
    want = engine.evaluate(plan, table)
    all3 = ["q1", "q2", "q3"]
    plan["sharing"] = [sequence_group(plan, {("C", "A"): [(all3, "C")], ("A", "B"): [(all3, "C")],
                                             ("B", "A"): [(all3, "C")], ("B", "D"): [(["q2"], "C")]})]
    report = {"g0": SequenceStats()}
    got = engine.evaluate(plan, table, shared_stats=report)
    assert same_rows(got, want)
    assert any(v is engine.OVERFLOW for r in got for v in r.values())
    assert report["g0"].recomputed >= 1 and report["g0"].shared > 0


# ------------------------------------------------------------------ the CLI

def test_eval_sharing_out_and_explain_of_a_sequence_plan(tmp_path: Any) -> None:
    import contextlib
    import io
    import json

    from trendlake.jobs.cli import main

    def cli(argv: list[str]) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        return code, out.getvalue(), err.getvalue()

    wl, ev = tmp_path / "w.etq", tmp_path / "e.csv"
    wl.write_text(FIGURE_3)
    ev.write_text("type,ts,x\n" + "".join(f"{t},{i},{i}\n" for i, t in enumerate("CABABD")))
    plan = _plan(FIGURE_3)
    plan["sharing"] = [sequence_group(plan, FIGURE_3_PLAN)]
    plan_path, report_path, svg = tmp_path / "plan.json", tmp_path / "report.json", tmp_path / "plan.svg"
    plan_path.write_text(json.dumps(rehashed(plan)))
    code, out, err = cli(["eval", str(wl), "--events", str(ev), "--plan", str(plan_path),
                          "--sharing-out", str(report_path)])
    assert code == 0, err
    assert [json.loads(line)["COUNT(*)"] for line in out.splitlines()] == [4, 4]
    assert "sharing group g0: 5 propagations shared instead of 10" in err
    (group,) = json.loads(report_path.read_text())["groups"]
    assert group["kind"] == "sequence" and group["by_type"]["A"] == {"shared": 3, "alone": 6, "own": 0}
    assert [(w["window_start"], w["shared"], w["alone"]) for w in group["windows_detail"]] == [
        ("1970-01-01T00:00:00Z", 5, 10)]
    code, out, err = cli(["explain", str(plan_path), "--svg", str(svg)])
    assert code == 0, err
    assert "group g0: sequence — 2 queries share transitions (GLORIA)" in out
    assert "C -> A: (q1, q2)^C" in out and "B -> D: (q1)^C" in out
    assert svg.read_text().startswith("<")
