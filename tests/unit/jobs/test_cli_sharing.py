"""The sharing planners through the CLI: plan, eval and explain with statistics from a file,
stored statistics or a stated assumption; refusals are one-line errors.

On a real file the planners decline to share these type-grained queries: each query's kernel
takes one step per burst of K between its own events, fewer than the snapshots sharing would
cost (docs/engine.md, "When sharing pays"). Stored statistics of a stream where K's bursts
are short and interleaved with other traffic make sharing pay, and the planners share."""

from __future__ import annotations

import contextlib
import io
import json
import xml.dom.minidom
from pathlib import Path

import pytest
from trendlake.jobs.cli import EXIT_BAD_INPUT, main

WORKLOAD = """QUERY q1 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(A, K+) WITHIN 1 minute;
QUERY q2 RETURN COUNT(*), MAX(K.x) PATTERN SEQ(B, K+) WITHIN 1 minute;
QUERY q3 RETURN COUNT(*) PATTERN SEQ(K+, C) WHERE K.x > 3 WITHIN 1 minute;
"""
# a stream where K is dense: one event per second, A, B and C once a minute each
EVENTS = "type,ts,x\n" + "".join(
    f"{'A' if i % 60 == 5 else 'B' if i % 60 == 17 else 'C' if i % 60 == 50 else 'K'},{i},{i % 7}\n"
    for i in range(600)
)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    wl, ev = tmp_path / "w.etq", tmp_path / "e.csv"
    wl.write_text(WORKLOAD)
    ev.write_text(EVENTS)
    return wl, ev


def rows_of(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


# statistics of a stream where sharing K pays: 600 K events per minute in bursts of one
DENSE = {"pane_us": 60_000_000, "types": {"K": {"rate_mean": 600.0}, "A": {"rate_mean": 1.0},
                                          "B": {"rate_mean": 1.0}, "C": {"rate_mean": 1.0}},
         "bursts": {"*": {"types": {"K": {"mean": 1.0}}}},
         "selectivity": {"q3": {"K": {"all": 0.9}}}}


def test_plan_from_a_file_computes_its_statistics_and_declines_to_share(files, tmp_path: Path) -> None:
    wl, ev = files
    stats_path = tmp_path / "stats.json"
    code, out, err = run(["plan", str(wl), "--planner", "hamlet", "--events", str(ev), "--stats-out", str(stats_path)])
    assert code == 0, err
    plan = json.loads(out)
    assert plan["sharing"] == []
    assert plan["estimated_cost"] == plan["alternatives"][0]["estimated_cost"]
    stats = json.loads(stats_path.read_text())
    assert stats["types"]["K"]["events"] == 600 - 30  # A, B and C ten times each
    assert stats["bursts"]["q1"]["types"]["K"]["runs"] == 11  # K runs between the A events
    assert plan["statistics"] == stats


@pytest.mark.parametrize("planner", ["hamlet", "hamlet-static"])
def test_plan_from_stored_statistics_shares_and_eval_of_the_plan_equals_no_sharing(
    files, tmp_path: Path, planner: str
) -> None:
    wl, ev = files
    plan_path, stats_path = tmp_path / "plan.json", tmp_path / "stats.json"
    stats_path.write_text(json.dumps(DENSE))
    code, _, err = run(["plan", str(wl), "--planner", planner, "--stats", str(stats_path), "--out", str(plan_path)])
    assert code == 0, err
    plan = json.loads(plan_path.read_text())
    assert plan["planner"] == planner and plan["format_version"] == 3
    (group,) = plan["sharing"]
    assert sorted(group["queries"]) == ["q1", "q2", "q3"] and group["body"]["type"] == "K"
    assert group["body"]["decision"] == ("dynamic" if planner == "hamlet" else "static")
    assert group["body"]["snapshots"] == ["graphlet", "event"]  # q3 matches fewer K events
    assert group["estimated_cost"]["shared"] < group["estimated_cost"]["non_shared"]
    assert plan["estimated_cost"] < plan["alternatives"][0]["estimated_cost"]
    assert plan["statistics"] == DENSE
    # a plan given as --stats: its statistics are reused, the same groups come out
    code, out, err = run(["plan", str(wl), "--planner", planner, "--stats", str(plan_path)])
    assert code == 0, err
    assert json.loads(out)["sharing"] == plan["sharing"]

    code, shared_out, err = run(["eval", str(wl), "--events", str(ev), "--plan", str(plan_path)])
    assert code == 0, err
    code, alone_out, err = run(["eval", str(wl), "--events", str(ev)])
    assert code == 0, err
    shared_rows, alone_rows = rows_of(shared_out), rows_of(alone_out)
    assert shared_rows == alone_rows
    assert {r["query"] for r in shared_rows} == {"q1", "q2", "q3"}
    code, out, err = run(["eval", str(wl), "--events", str(ev), "--planner", planner, "--stats", str(stats_path)])
    assert code == 0, err
    assert rows_of(out) == alone_rows


def test_explain_names_the_groups_and_draws_the_merged_template(files, tmp_path: Path) -> None:
    wl, _ = files
    plan_path, svg, stats_path = tmp_path / "plan.json", tmp_path / "plan.svg", tmp_path / "stats.json"
    stats_path.write_text(json.dumps(DENSE))
    assert run(["plan", str(wl), "--planner", "hamlet", "--stats", str(stats_path), "--out", str(plan_path)])[0] == 0
    code, out, err = run(["explain", str(plan_path), "--svg", str(svg)])
    assert code == 0, err
    assert "group g0: kleene — 3 queries share K+ (dynamic decision, snapshots at graphlet and event level)" in out
    assert "K -> K: q1, q2, q3" in out and "A -> K: q1" in out and "K -> C: q3" in out
    assert "q1: type-grained, shared in g0" in out
    doc = xml.dom.minidom.parse(str(svg))
    texts = [t.firstChild.data for t in doc.getElementsByTagName("text") if t.firstChild]
    assert {"A", "B", "C", "K"} <= set(texts)
    assert any("q1, q2, q3" in t for t in texts)


def test_a_sharing_planner_without_statistics_refuses(files) -> None:
    wl, _ = files
    code, out, err = run(["plan", str(wl), "--planner", "hamlet"])
    assert code == EXIT_BAD_INPUT and out == ""
    assert err.startswith("trendlake: error: this planner needs stream statistics") and err.count("\n") == 1


def test_assume_uniform_is_recorded_in_the_plan(files) -> None:
    wl, _ = files
    code, out, err = run(["plan", str(wl), "--planner", "hamlet-static", "--assume-uniform"])
    assert code == 0, err
    plan = json.loads(out)
    assert plan["statistics"] == {"assumption": "uniform"}
    assert plan["sharing"] == []  # equal rates: each query alone on COGRA is cheaper


@pytest.mark.parametrize(
    ("content", "needle"),
    [("not json", "not a JSON file"), ('{"a": 1}', "not statistics"), (None, "no file"),
     ('{"types": {"K": {"rate_mean": -1}}}', "not statistics: types/K/rate_mean: -1 is less than the minimum of 0"),
     ('{"types": {}, "bursts": {"q1": {"types": {"K": {"mean": "long"}}}}}', "bursts/q1/types/K/mean: 'long'"),
     ('{"types": {}, "pane_us": 60000000, "pane": 1}', "not statistics: (top level): Additional properties")],
)
def test_bad_stats_files_are_one_line_errors(files, tmp_path: Path, content: str | None, needle: str) -> None:
    wl, _ = files
    path = tmp_path / "s.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run(["plan", str(wl), "--planner", "hamlet", "--stats", str(path)])
    assert code == EXIT_BAD_INPUT and out == "" and needle in err and err.count("\n") == 1, err


def test_unknown_planner_is_refused(files) -> None:
    wl, ev = files
    code, _, err = run(["eval", str(wl), "--events", str(ev), "--planner", "bogus"])
    assert code == EXIT_BAD_INPUT and "--planner: invalid choice: 'bogus'" in err and "hamlet-static" in err
    assert err.count("\n") == 1


# event-grained: rising runs of K (K.x < NEXT(K).x), each query alone builds its own graph of K
RISING = """QUERY r1 RETURN COUNT(*), SUM(K.x) PATTERN SEQ(A, K+) WHERE K.x < NEXT(K).x WITHIN 1 minute;
QUERY r2 RETURN COUNT(*), MAX(K.x), COUNT(K) PATTERN SEQ(B, K+) WHERE K.x < NEXT(K).x WITHIN 1 minute;
QUERY r3 RETURN COUNT(*), MIN(K.x) PATTERN SEQ(K+, C) WHERE K.x < NEXT(K).x WITHIN 1 minute;
QUERY r4 RETURN COUNT(*), AVG(K.x) PATTERN SEQ(A, K+, C) WHERE K.x < NEXT(K).x WITHIN 1 minute;
"""


def test_event_grained_queries_share_their_graph_from_a_real_file(files, tmp_path: Path) -> None:
    """On the file itself the planner shares the graph of K (each query alone would try every
    pair of K events per window), the rows equal the unshared plan's, and --sharing-out
    records per window what the group did."""
    _, ev = files
    wl = tmp_path / "rising.etq"
    wl.write_text(RISING)
    report_path = tmp_path / "report.json"
    code, out, err = run(["eval", str(wl), "--events", str(ev), "--planner", "hamlet",
                          "--sharing-out", str(report_path)])
    assert code == 0, err
    code_alone, out_alone, _ = run(["eval", str(wl), "--events", str(ev)])
    assert code_alone == 0
    assert rows_of(out) == rows_of(out_alone)
    assert len(rows_of(out)) == 4 * 10  # four queries, ten one-minute windows
    report = json.loads(report_path.read_text())
    (group,) = report["groups"]
    assert group["kind"] == "kleene" and sorted(group["queries"]) == ["r1", "r2", "r3", "r4"]
    windows = group["windows_detail"]
    assert [w["window_start"] for w in windows] == [f"1970-01-01T00:{m:02d}:00Z" for m in range(10)]
    assert all(w["partition"] == {} and w["split"] == 0 for w in windows)
    # 56 or 57 K events a minute (one per second but A, B, C), each its own time stamp
    assert all(w["bursts"] == w["shared"] and w["bursts"] in (57, 56) for w in windows)
    assert sum(w["snapshots"] for w in windows) == group["snapshots"] > 0
    assert "sharing group g0:" in err
    plan_path = tmp_path / "plan.json"
    assert run(["plan", str(wl), "--planner", "hamlet", "--events", str(ev), "--out", str(plan_path)])[0] == 0
    code, out, _ = run(["explain", str(plan_path)])
    assert code == 0
    assert "group g0: kleene — 4 queries share K+ (one event-grained graph of K, every burst shared)" in out
    assert "estimated cost per window (steps)" in out


def test_sharing_out_without_sharing_writes_an_empty_report(files, tmp_path: Path) -> None:
    wl, ev = files
    report_path = tmp_path / "report.json"
    code, _, err = run(["eval", str(wl), "--events", str(ev), "--sharing-out", str(report_path)])
    assert code == 0, err
    assert json.loads(report_path.read_text())["groups"] == []


def test_explain_draws_sharon_s_graph_with_the_chosen_candidates(tmp_path: Path) -> None:
    """Queries sharing a prefix B, C, D(, E): explain lists the chosen sub-sequences with
    their benefits, and the SVG draws the graph the search chose from, the chosen ones filled."""
    wl, plan_path, svg, stats_path = (tmp_path / n for n in ("w.etq", "plan.json", "plan.svg", "stats.json"))
    wl.write_text("\n".join(f"QUERY q{i} RETURN COUNT(*) PATTERN SEQ({p}) WITHIN 6 seconds SLIDE 3 seconds;"
                            for i, p in enumerate(["B, C, D, E, A", "B, C, D, E, F", "B, C, D, G", "B, C, D, E, H"])))
    stats_path.write_text(json.dumps({"pane_us": 1_000_000, "types": {
        **{t: {"rate_mean": 1.0} for t in "AFGH"}, **{t: {"rate_mean": 30.0} for t in "BCDE"}}}))
    assert run(["plan", str(wl), "--planner", "sharon", "--stats", str(stats_path), "--out", str(plan_path)])[0] == 0
    code, out, err = run(["explain", str(plan_path), "--svg", str(svg)])
    assert code == 0, err
    [group] = json.loads(plan_path.read_text())["sharing"]
    body = group["body"]
    graph = body["graph"]
    chosen = [v for v in graph["vertices"] if v["chosen"]]
    assert [(v["pattern"], v["queries"]) for v in chosen] == [(s["pattern"], s["queries"]) for s in body["shared"]]
    assert len(graph["vertices"]) > len(chosen) and graph["edges"], "the graph has candidates left out, in conflict"
    index = {id(v): i for i, v in enumerate(graph["vertices"])}
    picked = {index[id(v)] for v in chosen}
    assert not any(a in picked and b in picked for a, b in graph["edges"]), "the chosen candidates never conflict"
    for s in body["shared"]:
        at = ", ".join(f"{q}@{p}" for q, p in zip(s["queries"], s["positions"], strict=True))
        assert f"SEQ({', '.join(s['pattern'])}) shared by {at}; benefit {s['benefit']:g}" in out
    assert f"Sharon graph: {graph['vertices_total']} candidates, {graph['edges_total']} conflicts" in out
    doc = xml.dom.minidom.parse(str(svg))
    drawn = {g.getAttribute("class"): [] for g in doc.getElementsByTagName("g")}
    for g in doc.getElementsByTagName("g"):
        drawn[g.getAttribute("class")].append(g.getElementsByTagName("text")[0].firstChild.data)
    assert sorted(drawn["chosen"]) == sorted(f"({', '.join(v['pattern'])}){{{', '.join(v['queries'][:3])}"
                                             f"{' +' + str(len(v['queries']) - 3) if len(v['queries']) > 3 else ''}}}"
                                             for v in chosen)
    assert len(drawn["candidate"]) == len(graph["vertices"]) - len(chosen)
    assert len(doc.getElementsByTagName("line")) >= len(graph["edges"])
