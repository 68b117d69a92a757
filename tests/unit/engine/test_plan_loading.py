"""Plans are validated when read: JSON Schema, semantic rules, and a content hash that matches.

A plan written by the optimizer loads; any edit of its content is refused
(the content hash no longer matches), and an invalid plan whose hash was
recomputed after the edit is still refused by the schema or the semantic
rules, each with a message naming what is wrong.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trendlake.engine.plan import PlanError, content_hash, load_plan

from trendlake import optimizer

WORKLOAD = """
QUERY trips RETURN driver, COUNT(*), AVG(T.speed)
PATTERN SEQ(Request R, Travel T+)
WHERE [driver] AND T.speed > 10 AND T.speed < NEXT(T).speed
GROUP-BY driver
WITHIN 30 minutes SLIDE 10 minutes;
QUERY other RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 minutes;
"""


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    return optimizer.build_plan(optimizer.compile_workload(WORKLOAD))


def whash() -> str:
    return optimizer.workload_hash(WORKLOAD)


def rehashed(plan: dict[str, Any]) -> dict[str, Any]:
    plan["content_hash"] = content_hash(plan)
    return plan


def q0(p: dict[str, Any]) -> dict[str, Any]:
    return p["queries"][0]


def test_written_plan_loads_from_dict_and_file(plan: dict[str, Any], tmp_path: Path) -> None:
    assert plan["content_hash"].startswith("sha256:")
    assert set(load_plan(plan, whash()).queries) == {"trips", "other"}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(plan, indent=2))
    assert load_plan(path).plan_id == plan["plan_id"]


def _double_window(p: dict[str, Any]) -> None:
    q0(p)["window"]["within_us"] *= 2


def _drop_predicates(p: dict[str, Any]) -> None:
    q0(p)["local_predicates"] = {}
    q0(p)["adjacent_predicates"] = []


def _negative_window(p: dict[str, Any]) -> None:
    q0(p)["window"]["within_us"] = -1800000000


def _zero_slide(p: dict[str, Any]) -> None:
    q0(p)["window"]["slide_us"] = 0


def _unknown_semantics(p: dict[str, Any]) -> None:
    q0(p)["semantics"] = "skip-till-whatever"


def _duplicate_names(p: dict[str, Any]) -> None:
    p["queries"][1]["name"] = "trips"


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "window doubled": _double_window,
    "predicates dropped": _drop_predicates,
    "negative window": _negative_window,
    "zero slide": _zero_slide,
    "unknown semantics": _unknown_semantics,
    "duplicate names": _duplicate_names,
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_edited_plan_is_refused_by_its_hash(plan: dict[str, Any], edit: str, tmp_path: Path) -> None:
    edited = copy.deepcopy(plan)
    EDITS[edit](edited)
    with pytest.raises(PlanError, match="content hash") as info:
        load_plan(edited, whash())
    assert plan["plan_id"] in str(info.value)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(edited))
    with pytest.raises(PlanError, match="content hash"):
        load_plan(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("negative window", r"queries/0/window/within_us: -1800000000 is less than the minimum of 1"),
        ("zero slide", r"queries/0/window/slide_us: 0 is less than the minimum of 1"),
        ("unknown semantics", r"queries/0/semantics: 'skip-till-whatever' is not one of"),
        ("duplicate names", r"query name trips is used twice"),
    ],
)
def test_invalid_plan_is_refused_even_with_a_recomputed_hash(plan: dict[str, Any], edit: str, message: str) -> None:
    edited = copy.deepcopy(plan)
    EDITS[edit](edited)
    with pytest.raises(PlanError, match=message):
        load_plan(rehashed(edited), whash())


SEMANTIC: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "slide over within": (lambda p: q0(p)["window"].update(slide_us=q0(p)["window"]["within_us"] * 2),
                          r"query trips: slide 3600000000us is larger than the window 1800000000us"),
    "names differing in case": (lambda p: p["queries"][1].update(name="TRIPS"), r"query name TRIPS .*only in case"),
    "transition to unknown variable": (lambda p: q0(p)["template"]["transitions"][0].update(to="Ghost"),
                                       r"query trips: template transition .* unknown variable Ghost"),
    "predicate on unknown variable": (lambda p: q0(p)["local_predicates"].update(Ghost=[{"lit": True}]),
                                      r"query trips: local predicate of unknown variable Ghost"),
    "expression over unknown variable": (
        lambda p: q0(p)["adjacent_predicates"][0]["expr"]["args"][0].update(var="Ghost"),
        r"query trips: adjacent predicate .* unknown variable Ghost"),
    "aggregate over unknown variable": (lambda p: q0(p)["aggregates"][1].update(var="Ghost"),
                                        r"query trips: aggregate AVG\(T.speed\) .* unknown variable Ghost"),
    "unknown negation id": (lambda p: q0(p)["template"]["start_negations"].append(7),
                            r"query trips: the template uses negation 7, which is not defined"),
    "pane not dividing the window": (lambda p: p.update(panes_us=7 * 60 * 1000000),
                                     r"panes_us 420000000 does not divide"),
    "partition_by not group_by + equivalence": (lambda p: q0(p).update(partition_by=[]),
                                                r"query trips: partition_by \[\] is not group_by \+ equivalence"),
    "return of nothing": (lambda p: q0(p)["returns"].append("ghost"),
                          r"query trips: RETURN column ghost is neither a GROUP-BY attribute nor an aggregate"),
    "plan id of another planner": (lambda p: p.update(planner="greedy"),
                                   r"plan id .* does not match its content"),
}


@pytest.mark.parametrize("case", list(SEMANTIC))
def test_semantic_rules(plan: dict[str, Any], case: str) -> None:
    edit, message = SEMANTIC[case]
    edited = copy.deepcopy(plan)
    edit(edited)
    with pytest.raises(PlanError, match=message):
        load_plan(rehashed(edited), whash())


def test_plan_without_content_hash_is_refused(plan: dict[str, Any]) -> None:
    edited = copy.deepcopy(plan)
    del edited["content_hash"]
    with pytest.raises(PlanError, match="no content hash"):
        load_plan(edited, whash())


def test_eval_with_an_edited_plan_fails_with_one_line(plan: dict[str, Any], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from trendlake.jobs.cli import EXIT_BAD_INPUT, main

    wl = tmp_path / "w.etq"
    wl.write_text(WORKLOAD)
    edited = copy.deepcopy(plan)
    _double_window(edited)
    (tmp_path / "p.json").write_text(json.dumps(edited))
    (tmp_path / "e.csv").write_text("type,ts,driver,speed\nRequest,1,d,0\nTravel,2,d,20\n")
    code = main(["eval", str(wl), "--events", str(tmp_path / "e.csv"), "--plan", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT
    assert "content hash" in err and err.count("\n") == 1


# ---- sharing groups: the template agrees with the group's queries; errors are bounded -----

SHARED = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(T1, T2+) WITHIN 1 minute;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(T3, T2+) WITHIN 1 minute;
QUERY q3 RETURN COUNT(*) PATTERN SEQ(T4, T5) WITHIN 1 minute;
"""
DENSE_T2 = {"pane_us": 60_000_000, "types": {"T1": {"rate_mean": 4}, "T2": {"rate_mean": 600}, "T3": {"rate_mean": 4}},
            "bursts": {"*": {"types": {"T1": {"mean": 2}, "T2": {"mean": 1}, "T3": {"mean": 2}}}}}


@pytest.fixture(scope="module")
def shared_plan() -> dict[str, Any]:
    plan = optimizer.build_plan(optimizer.compile_workload(SHARED), planner="hamlet-static", statistics=DENSE_T2)
    assert [g["queries"] for g in plan["sharing"]] == [["q1", "q2"]]
    return plan


def g0(p: dict[str, Any]) -> dict[str, Any]:
    return p["sharing"][0]


def _transition(p: dict[str, Any], src: str, dst: str) -> dict[str, Any]:
    return next(t for t in g0(p)["body"]["template"]["transitions"] if (t["from"], t["to"]) == (src, dst))


TEMPLATE_EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "empty template": (lambda p: g0(p)["body"].update(template={"start": [], "end": [], "transitions": []}),
                       r"sharing group g0: the template is empty"),
    "invented query": (lambda p: _transition(p, "T1", "T2")["queries"].append("ghost"),
                       r"the template's transition T1 -> T2 names query ghost, which is not in the plan"),
    "query of the plan outside the group": (
        lambda p: g0(p)["body"]["template"]["start"][0]["queries"].append("q3"),
        r"the template's start type T1 names query q3, which is not in the group"),
    "transition served by the wrong query": (
        lambda p: _transition(p, "T1", "T2").update(queries=["q2"]),
        r"transition T1 -> T2 serves \['q2'\], but the templates of its queries give \['q1'\]"),
    "transition of no query": (
        lambda p: g0(p)["body"]["template"]["transitions"].append({"from": "T5", "to": "T2", "queries": ["q1"]}),
        r"transition T5 -> T2 serves \['q1'\], but the templates of its queries give no query"),
    "end type dropped": (lambda p: g0(p)["body"]["template"].update(end=[]),
                         r"end type T2 serves no query, but the templates of its queries give \['q1', 'q2'\]"),
    "entry listed twice": (lambda p: g0(p)["body"]["template"]["end"].append(dict(g0(p)["body"]["template"]["end"][0])),
                           r"the template lists end type T2 twice"),
    "query named twice": (lambda p: g0(p)["body"]["template"]["end"][0]["queries"].append("q1"),
                          r"the template's end type T2 names a query twice"),
}


@pytest.mark.parametrize("case", list(TEMPLATE_EDITS))
def test_group_template_must_agree_with_its_queries(shared_plan: dict[str, Any], case: str) -> None:
    edit, message = TEMPLATE_EDITS[case]
    edited = copy.deepcopy(shared_plan)
    edit(edited)
    with pytest.raises(PlanError, match=message) as info:
        load_plan(rehashed(edited), optimizer.workload_hash(SHARED))
    assert "\n" not in str(info.value)


def test_the_planners_template_passes(shared_plan: dict[str, Any]) -> None:
    from trendlake.engine.plan import check_plan

    check_plan(shared_plan)  # no error: the merged template is the one the queries give


def test_a_plan_repeating_a_group_10000_times_gets_a_short_error(shared_plan: dict[str, Any]) -> None:
    from trendlake.engine.plan import MAX_MESSAGE_CHARS, MAX_PROBLEMS, check_plan

    edited = copy.deepcopy(shared_plan)
    edited["sharing"] = [g0(shared_plan)] * 10_000
    with pytest.raises(PlanError) as info:
        load_plan(rehashed(edited), optimizer.workload_hash(SHARED))
    assert str(info.value) == (f"plan {shared_plan['plan_id']} has 10000 sharing groups for 3 queries: a group "
                               "shares at least two queries and a query is in at most one group")
    # the semantic rules alone: each distinct problem once, with its count
    edited["sharing"] = edited["sharing"][:1000]
    with pytest.raises(PlanError) as info:
        check_plan(edited)
    text = str(info.value)
    assert len(text) <= MAX_MESSAGE_CHARS and "\n" not in text
    assert "sharing group id g0 is used twice (999 times)" in text
    assert "query q1 is in sharing groups g0 and g0 (999 times)" in text
    assert text.count(";") < MAX_PROBLEMS


def test_many_distinct_problems_are_counted_not_listed(plan: dict[str, Any]) -> None:
    from trendlake.engine.plan import MAX_PROBLEMS

    edited = copy.deepcopy(plan)
    q0(edited)["returns"] += [f"ghost{i}" for i in range(5000)]
    with pytest.raises(PlanError) as info:
        load_plan(rehashed(edited), whash())
    text = str(info.value)
    assert text.count("RETURN column ghost") == MAX_PROBLEMS
    # five shown, the other 4995 RETURN columns and the plan id counted
    assert text.endswith(f"; and {5000 - MAX_PROBLEMS} more problems") and len(text) < 2000


def test_values_quoted_from_a_plan_are_shortened_and_on_one_line(plan: dict[str, Any]) -> None:
    edited = copy.deepcopy(plan)
    edited["plan_id"] = "0" * 12 + "-none-" + "x" * 100_000
    q0(edited)["aggregates"][1]["name"] = "a\nb" + "y" * 100_000
    q0(edited)["aggregates"].append(dict(q0(edited)["aggregates"][1]))
    with pytest.raises(PlanError) as info:
        load_plan(rehashed(edited), whash())
    text = str(info.value)
    assert "\n" not in text and len(text) < 1000
    assert "more characters" in text
    # a schema error quotes part of the plan too
    edited = copy.deepcopy(plan)
    q0(edited)["window"] = {"within_us": [0] * 100_000, "slide_us": 1}
    with pytest.raises(PlanError, match="does not match the plan schema") as info:
        load_plan(rehashed(edited), whash())
    assert len(str(info.value)) < 1000


def test_explain_svg_of_an_empty_template_is_a_one_line_error(
        shared_plan: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trendlake.jobs.cli import EXIT_BAD_INPUT, main
    from trendlake.jobs.explain import template_svg

    edited = copy.deepcopy(shared_plan)
    TEMPLATE_EDITS["empty template"][0](edited)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(rehashed(edited)))
    assert main(["explain", str(path), "--svg", str(tmp_path / "t.svg")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("trendlake: error: invalid plan") and err.count("\n") == 1
    assert "template is empty" in err and not (tmp_path / "t.svg").exists()
    # the picture of a plan nobody checked is drawn, never a crash
    assert template_svg(edited).startswith("<svg")


def test_explain_draws_a_valid_plan(shared_plan: dict[str, Any], tmp_path: Path) -> None:
    from trendlake.jobs.cli import main

    path = tmp_path / "p.json"
    path.write_text(json.dumps(shared_plan))
    assert main(["explain", str(path), "--svg", str(tmp_path / "t.svg")]) == 0
    svg = (tmp_path / "t.svg").read_text()
    assert ">T2<" in svg and "q1, q2" in svg


def test_a_format_version_2_plan_is_read_as_version_3(shared_plan: dict[str, Any]) -> None:
    """Version 2 wrote a kleene group's fields beside the envelope's, with no grain."""
    old = copy.deepcopy(shared_plan)
    old["format_version"] = 2
    for g in old["sharing"]:
        body = g.pop("body")
        del body["grain"]
        g.update(body)
    loaded = load_plan(rehashed(old), optimizer.workload_hash(SHARED))
    assert loaded.raw["format_version"] == 3
    assert loaded.raw["sharing"] == shared_plan["sharing"]
    # the hash is the one it was written with: an edit after writing is still refused
    edited = rehashed(old)
    edited["sharing"][0]["type"] = "T9"
    with pytest.raises(PlanError, match="was edited"):
        load_plan(edited, optimizer.workload_hash(SHARED))
