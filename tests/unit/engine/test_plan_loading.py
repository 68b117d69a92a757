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
