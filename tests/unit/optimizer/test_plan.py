"""Plan writer: schema validity, the documented example, hash, plan id, planners, API."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from trendlake.optimizer.planners import PLANNERS
from trendlake.optimizer.statistics import Statistics
from trendlake.schemas import bundled_workloads, load_plan_schema, resource, workload_path

from trendlake import optimizer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parser"
VALID = sorted(p for p in FIXTURES.glob("*.etq") if (FIXTURES / f"{p.stem}.expected.json").exists())

STUCK = """QUERY stuck_trips
RETURN district, COUNT(*), SUM(Travel.duration) AS total_duration, AVG(Travel.speed)
PATTERN SEQ(Request, Travel+, NOT Pickup)
SEMANTICS skip-till-any-match
WHERE [driver, rider] AND Travel.speed < 10 AND Travel.speed > NEXT(Travel).speed
GROUP-BY district
WITHIN 30 minutes SLIDE 5 minutes;"""


def validate(plan: dict) -> None:
    """Against the plan schema with the engine's kinds' bodies (``engine.plan.plan_schema``)."""
    from trendlake.engine.plan import plan_schema

    jsonschema.Draft202012Validator(plan_schema()).validate(plan)


def test_plan_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = load_plan_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_every_valid_fixture_gives_a_schema_valid_plan(path: Path) -> None:
    plan = optimizer.build_plan(optimizer.compile_workload(path.read_text()))
    validate(plan)
    assert json.loads(json.dumps(plan)) == plan


def test_sample_workloads_compile_against_the_rides_schema() -> None:
    """Every bundled workload compiles against the bundled rides schema (what ships)."""
    from trendlake.schemas import load_stream_schema

    files = [workload_path(n) for n in bundled_workloads()]
    assert files
    for path in files:
        workload = optimizer.compile_workload(path.read_text(), load_stream_schema("rides"), path=str(path))
        plan = optimizer.build_plan(workload, stream="rides")
        validate(plan)
        assert plan["stream"] == "rides"
    readme = resource("workloads", "README.md").read_text()
    assert all(p.name in readme for p in files)


def test_sample_rides_workload_shape(rides_schema: dict) -> None:
    text = (workload_path("sample_rides.etq")).read_text()
    plan = optimizer.build_plan(optimizer.compile_workload(text, rides_schema))
    names = [q["name"] for q in plan["queries"]]
    assert names == [
        "stuck_trips", "completed_trips", "cancelled_on_the_way",
        "accelerating_approach", "driver_shifts", "rebooked_riders",
    ]
    assert {q["semantics"] for q in plan["queries"]} == {
        "skip-till-any-match", "skip-till-next-match", "contiguous"
    }
    for q in plan["queries"]:
        assert q["template"]["start"][0] in ("Request", "R1")
        assert ("Travel", "Travel") in {(t["from"], t["to"]) for t in q["template"]["transitions"]}
    assert plan["panes_us"] == 300_000_000


def test_design_example_matches_plan_format_doc() -> None:
    plan = optimizer.build_plan(optimizer.compile_workload(STUCK))
    validate(plan)
    (q,) = plan["queries"]
    assert plan["panes_us"] == 300_000_000 and plan["sharing"] == [] and plan["format_version"] == 3
    assert q["window"] == {"within_us": 1_800_000_000, "slide_us": 300_000_000}
    assert q["partition_by"] == ["district", "driver", "rider"]
    assert q["equivalence"] == ["driver", "rider"] and q["group_by"] == ["district"]
    assert q["variables"] == [
        {"name": "Request", "type": "Request", "negated": False},
        {"name": "Travel", "type": "Travel", "negated": False},
        {"name": "Pickup", "type": "Pickup", "negated": True},
    ]
    assert q["template"] == {
        "start": ["Request"],
        "end": ["Travel"],
        "transitions": [
            {"from": "Request", "to": "Travel", "negations": []},
            {"from": "Travel", "to": "Travel", "negations": []},
        ],
        "start_negations": [],
        "end_negations": [0],
    }
    assert q["negations"] == [{"id": 0, "sequence": ["Pickup"]}]
    assert q["local_predicates"] == {
        "Travel": [{"op": "<", "args": [{"attr": "speed", "var": "Travel"}, {"lit": 10}]}]
    }
    assert q["adjacent_predicates"] == [
        {
            "from": "Travel",
            "to": "Travel",
            "expr": {
                "op": ">",
                "args": [
                    {"attr": "speed", "var": "Travel"},
                    {"attr": "speed", "var": "Travel", "next": True},
                ],
            },
        }
    ]
    assert q["required_attributes"] == {"Travel": ["duration", "speed"]}
    assert q["aggregates"] == [
        {"name": "COUNT(*)", "fn": "count_star"},
        {"name": "total_duration", "fn": "sum", "var": "Travel", "attr": "duration"},
        {"name": "AVG(Travel.speed)", "fn": "avg", "var": "Travel", "attr": "speed"},
    ]
    assert q["returns"] == ["district", "COUNT(*)", "total_duration", "AVG(Travel.speed)"]
    assert q["granularity"] == "mixed"  # adjacent predicate under skip-till-any-match
    assert q["source"] == {"line": 1, "column": 1}


def test_aliased_variables_in_plan() -> None:
    text = "QUERY q RETURN COUNT(C2), MAX(C1.x) PATTERN SEQ(Check C1, NOT Check N, Check C2+) WITHIN 1 minute;"
    (q,) = optimizer.build_plan(optimizer.compile_workload(text))["queries"]
    assert q["variables"] == [
        {"name": "C1", "type": "Check", "negated": False},
        {"name": "N", "type": "Check", "negated": True},
        {"name": "C2", "type": "Check", "negated": False},
    ]
    assert q["aggregates"][0] == {"name": "COUNT(C2)", "fn": "count", "var": "C2"}
    assert q["template"]["transitions"][0] == {"from": "C1", "to": "C2", "negations": [0]}


# ---- hash and plan id ---------------------------------------------------------------


def test_hash_is_stable_under_reformatting_comments_and_keyword_case() -> None:
    reformatted = """-- the DESIGN example, reformatted
query   stuck_trips return district,COUNT( * ),
  sum(Travel.duration) as total_duration , avg(Travel.speed)  -- averages
pattern seq(Request,Travel+,not Pickup) semantics SKIP-TILL-ANY-MATCH
where [driver,rider] and Travel.speed<10 and Travel.speed > next(Travel).speed
group-by district within 30 MINUTES slide 5 minutes ;
"""
    h = optimizer.workload_hash(STUCK)
    assert h.startswith("sha256:") and len(h) == 7 + 64
    assert optimizer.workload_hash(reformatted) == h


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("< 10", "< 11"),
        ("stuck_trips", "stuck"),
        ("Travel+", "Travel"),
        ("district,", "District,"),
        ("30 minutes", "31 minutes"),
        ("skip-till-any-match", "skip-till-next-match"),
    ],
)
def test_hash_changes_under_edits(old: str, new: str) -> None:
    assert old in STUCK
    assert optimizer.workload_hash(STUCK.replace(old, new, 1)) != optimizer.workload_hash(STUCK)


def test_hash_of_text_that_does_not_parse_is_still_defined() -> None:
    assert optimizer.workload_hash("QUERY q RETURN @") != optimizer.workload_hash("QUERY q RETURN #")


def test_plan_id_and_statistics() -> None:
    workload = optimizer.compile_workload(STUCK)
    plan = optimizer.build_plan(workload)
    prefix = plan["workload_hash"].split(":")[1][:12]
    assert plan["plan_id"] == f"{prefix}-none-nostats"
    stats = {"types": {"Travel": {"rate_mean": 3.5}}}
    with_stats = optimizer.build_plan(workload, statistics=stats, stream="rides")
    validate(with_stats)
    assert with_stats["statistics"] == stats and with_stats["stream"] == "rides"
    assert with_stats["plan_id"].startswith(f"{prefix}-none-") and with_stats["plan_id"] != plan["plan_id"]
    again = optimizer.build_plan(workload, statistics={"types": {"Travel": {"rate_mean": 3.5}}})
    assert again["plan_id"] == with_stats["plan_id"]
    # the typed view plans alike and records the same document
    typed = optimizer.build_plan(workload, statistics=Statistics.from_dict(stats))
    assert typed["statistics"] == stats and typed["plan_id"] == with_stats["plan_id"]
    with pytest.raises(optimizer.OptimizerError, match=r"^statistics: \(top level\): 'types' is a required"):
        optimizer.build_plan(workload, statistics={"rates": {"Travel": 3.5}})


def test_planner_registry() -> None:
    assert "none" in PLANNERS
    plan = optimizer.build_plan(optimizer.compile_workload(STUCK))
    entries = {q["name"]: q for q in plan["queries"]}
    assert PLANNERS["none"](entries, {}, None) == [] and plan["sharing"] == []
    with pytest.raises(ValueError, match="unknown planner 'nope'"):
        optimizer.build_plan(optimizer.compile_workload(STUCK), planner="nope")


# ---- public API and errors ----------------------------------------------------------


def test_public_api_and_error_format() -> None:
    workload = optimizer.parse_workload("QUERY q RETURN COUNT(*) PATTERN A;", path="w.etq")
    assert isinstance(workload, optimizer.Workload)
    with pytest.raises(optimizer.WorkloadError) as info:
        optimizer.check_workload(workload)
    assert str(info.value) == (
        "w.etq:1:1: query q: missing WITHIN clause: every query needs a window, e.g. WITHIN 10 minutes"
    )
    (diag,) = info.value.diagnostics
    assert diag == optimizer.Diagnostic("q", 1, 1, diag.message)


def test_syntax_error_names_the_query_and_what_was_expected() -> None:
    text = "QUERY ok RETURN COUNT(*) PATTERN A WITHIN 1 minute;\nQUERY bad RETURN COUNT(*) PATTERN SEQ(A B C) WITHIN 1 minute;"
    with pytest.raises(optimizer.WorkloadError) as info:
        optimizer.compile_workload(text, path="x.etq")
    assert str(info.value) == "x.etq:2:43: query bad: syntax error: unexpected 'C'; expected ')', '+' or ','"


def test_empty_workload_is_an_error() -> None:
    with pytest.raises(optimizer.WorkloadError, match="no query"):
        optimizer.compile_workload("-- nothing here\n")


def test_plan_runs_on_the_reference_engine_fig_2_4() -> None:
    """End to end: (SEQ(A+, B))+ over a1 b2 a3 a4 b7 has 11 trends with 20 A events (Fig. 2.4)."""
    from trendlake import engine

    text = "QUERY fig RETURN COUNT(*), COUNT(A) PATTERN SEQ(A+, B)+ WITHIN 100 seconds;"
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    rows = [{"type": t, "ts": ts} for t, ts in [("A", 1), ("B", 2), ("A", 3), ("A", 4), ("B", 7)]]
    (row,) = engine.evaluate(
        plan, engine.table_from_rows(rows), workload_hash=optimizer.workload_hash(text), strategy="twostep"
    )
    assert (row["COUNT(*)"], row["COUNT(A)"]) == (11, 20)
