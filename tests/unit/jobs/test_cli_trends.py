"""`trendlake trends` end to end: the windows with their COUNT(*), one window's trends, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trendlake.jobs.cli import EXIT_BAD_INPUT, main

KITING = """-- check kiting per district (Section 1.1 of the dissertation, grouped)
QUERY kites
RETURN district, COUNT(*)
PATTERN Check C+
WHERE C.destination = NEXT(C).source
GROUP-BY district
WITHIN 10 seconds;
"""
# district n: Example 4.1's checks c1-c4 (Table 4.1); district s: two unrelated checks
EVENTS = """key,type,ts,district,source,destination
c1,Check,1,n,A,B
x1,Check,1,s,P,Q
c2,Check,2,n,B,C
c3,Check,3,n,B,D
x2,Check,3,s,Q,R
c4,Check,4,n,D,E
late,Check,12,n,E,F
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "w.etq").write_text(KITING)
    (tmp_path / "e.csv").write_text(EVENTS)
    return str(tmp_path / "w.etq"), str(tmp_path / "e.csv")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], str]:
    code = main(["trends", *argv])
    out = capsys.readouterr()
    return code, [json.loads(line) for line in out.out.splitlines()], out.err


def test_lists_the_windows_with_their_counts(files, capsys) -> None:
    w, e = files
    code, rows, err = run([w, "--query", "kites", "--events", e], capsys)
    assert code == 0
    assert rows == [
        {"query": "kites", "district": "n", "window_start": "1970-01-01T00:00:00Z", "window_end": "1970-01-01T00:00:10Z", "COUNT(*)": 8},
        {"query": "kites", "district": "n", "window_start": "1970-01-01T00:00:10Z", "window_end": "1970-01-01T00:00:20Z", "COUNT(*)": 1},
        {"query": "kites", "district": "s", "window_start": "1970-01-01T00:00:00Z", "window_end": "1970-01-01T00:00:10Z", "COUNT(*)": 3},
    ]
    code, rows, _ = run([w, "--query", "kites", "--events", e, "--group", "district=s"], capsys)
    assert [r["COUNT(*)"] for r in rows] == [3]


@pytest.mark.parametrize("algorithm", ["auto", "m-cet", "t-cet", "h-cet"])
def test_the_complete_trends_of_a_window(files, capsys, algorithm: str) -> None:
    """Table 4.1: (c1, c2) and (c1, c3, c4), named by the key column or by row number."""
    w, e = files
    argv = [w, "--query", "kites", "--events", e, "--group", "district=n", "--window-start", "0", "--algorithm", algorithm]
    code, rows, err = run([*argv, "--id", "key"], capsys)
    assert code == 0
    assert [[x["id"] for x in r["events"]] for r in rows] == [["c1", "c2"], ["c1", "c3", "c4"]]
    assert rows[1]["events"][1] == {"id": "c3", "type": "Check", "variable": "C", "ts": "1970-01-01T00:00:03Z"}
    assert {k: rows[0][k] for k in ("query", "district", "window_start", "trend")} == {
        "query": "kites", "district": "n", "window_start": "1970-01-01T00:00:00Z", "trend": 1}
    assert "2 of 2 complete trends (COUNT(*) 8)" in err
    code, rows, _ = run(argv, capsys)
    assert [[x["id"] for x in r["events"]] for r in rows] == [[1, 3], [1, 4, 6]]


def test_all_trends_with_a_limit(files, capsys) -> None:
    w, e = files
    argv = [w, "--query", "kites", "--events", e, "--group", "district=n", "--window-start", "1970-01-01T00:00:00Z",
            "--id", "key", "--all"]
    code, rows, err = run(argv, capsys)
    assert code == 0 and len(rows) == 8
    code, rows, err = run([*argv, "--limit", "3"], capsys)
    assert [[x["id"] for x in r["events"]] for r in rows] == [["c1"], ["c1", "c2"], ["c1", "c3"]]
    assert "3 of 8 trends" in err


def test_refusals_are_one_line(files, capsys) -> None:
    w, e = files
    base = [w, "--query", "kites", "--events", e]
    cases = [
        ([*base, "--window-start", "0", "--group", "district=n", "--memory", "1000"],
         "query kites, group ('n',), window [1970-01-01T00:00:00Z, 1970-01-01T00:00:10Z): 8 trends, the aggregation's COUNT(*)"),
        ([*base, "--window-start", "0"], "--group: query kites groups by district; give --group district=VALUE"),
        ([*base, "--window-start", "5", "--group", "district=n"], "no window of query kites starts then"),
        ([*base, "--window-start", "20", "--group", "district=n"], "has no trend in the group"),
        ([*base, "--group", "city=n"], "--group: query kites groups by district, not 'city'"),
        ([w, "--query", "nope", "--events", e], "--query: no query 'nope'"),
        ([*base, "--window-start", "0", "--group", "district=n", "--id", "nope"], "--id: "),
    ]
    for argv, words in cases:
        code = main(["trends", *argv])
        err = capsys.readouterr().err
        assert code == EXIT_BAD_INPUT, argv
        assert len(err.strip().splitlines()) == 1 and words in err, err


FIGURE_5_2 = Path(__file__).resolve().parents[2] / "fixtures" / "trends" / "figure_5_2"


def figure_5_2() -> tuple[list[str], Any, dict]:
    """The CLI arguments of Figure 5.2(c)'s window, its planning by the library, the fixture's facts."""
    from trendlake.engine.events import read_events
    from trendlake.engine.trends import plan

    from trendlake import engine, optimizer

    text = (FIGURE_5_2 / "workload.etq").read_text()
    q = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text))).queries["q"]
    planning = plan(q, read_events(FIGURE_5_2 / "events.csv"), (), 0)
    argv = [str(FIGURE_5_2 / "workload.etq"), "--query", "q", "--events", str(FIGURE_5_2 / "events.csv"),
            "--window-start", "0", "--id", "id"]
    return argv, planning, json.loads((FIGURE_5_2 / "expected.json").read_text())


def test_explain_agrees_with_the_cost_model(capsys) -> None:
    """Example 5.2 / Figure 5.2(c) under a budget T-CET's cache (H-CET without cut) exceeds:
    the printed choice is the cheapest plan that fits by the cost model, computed here over
    every valid partitioning; every alternative's figures are the model's and its reason
    matches them."""
    import itertools

    from trendlake.engine.trends.cost import cost, output_bytes
    from trendlake.engine.trends.partitioning import valid_cuts

    argv, planning, want = figure_5_2()
    paths, size = planning.paths, planning.size
    held = output_bytes(paths)
    budget = held + cost(paths, "h-cet", (), size).memory - 1
    plans = [cost(paths, "h-cet", cuts, size) for r in range(len(valid_cuts(paths)) + 1)
             for cuts in itertools.combinations(valid_cuts(paths), r)]
    best = min((c for c in plans if c.memory + held <= budget), key=lambda c: (c.cpu, c.memory))
    code = main(["trends", *argv, "--explain", "--memory", str(budget)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["refused"] is None
    chosen = doc["chosen"]
    assert (chosen["algorithm"], tuple(chosen["cuts"])) == ("h-cet", best.cuts)
    assert (chosen["cpu"], chosen["memory"]) == (best.cpu, best.memory)
    assert chosen["memory_with_kept_trends"] == best.memory + held <= budget == doc["budget"]
    # the fixture's figures: the cut after c4, two graphlets of 4 vertices and 3 edges, 4 cut edges
    assert [v["id"] for v in chosen["cuts_after"]] == want["graphlets"]["cut_after"]
    assert [[g["vertices"], g["edges"]] for g in chosen["graphlet_list"]] == want["graphlets"]["sizes"]
    assert chosen["cut_edges"] == want["graphlets"]["cut_edges"]
    assert [(g["first"]["id"], g["last"]["id"]) for g in chosen["graphlet_list"]] == [("c1", "c4"), ("c5", "c8")]
    named = {a["algorithm"] for a in doc["alternatives"] if a["source"] == "algorithm"}
    assert named == {"m-cet", "t-cet"}  # H-CET under the optimizer's partitioning is the chosen plan
    assert doc["optimizer_evaluated"] == doc["optimizer_fitting"] + doc["optimizer_over_budget"] >= 2
    for a in doc["alternatives"]:
        c = cost(paths, a["algorithm"], tuple(a["cuts"]), size)
        assert (a["cpu"], a["memory"]) == (c.cpu, c.memory), a
        assert a["fits"] == (c.memory + held <= budget), a
        if not a["fits"]:
            assert a["why"].startswith("over the memory budget"), a
        elif a["algorithm"] == "h-cet" or c.cpu > best.cpu:
            assert c.cpu >= best.cpu and a["why"].startswith(("dearer", "as much CPU", "as cheap")), a
    assert any(not a["fits"] for a in doc["alternatives"]), "H-CET without cut was costed and is over the budget"
    code = main(["trends", *argv, "--explain", "--memory", str(budget), "--format", "table"])
    text = capsys.readouterr().out
    assert code == 0
    assert f"chosen: H-CET, 2 graphlets, cuts after events c4 (1970-01-01T00:00:04Z), {want['graphlets']['cut_edges']} " \
           f"cut edges: estimated CPU {best.cpu}, memory {best.memory} bytes" in text
    # the trends themselves follow the explained plan
    code = main(["trends", *argv, "--memory", str(budget)])
    assert code == 0 and len(capsys.readouterr().out.splitlines()) == len(want["complete"])


def test_explain_says_why_a_window_is_refused(files, capsys) -> None:
    w, e = files
    argv = [w, "--query", "kites", "--events", e, "--group", "district=n", "--window-start", "0"]
    code = main(["trends", *argv, "--explain", "--memory", "1000"])
    assert code == EXIT_BAD_INPUT  # the graph alone is over the budget: nothing to explain
    assert "8 trends, the aggregation's COUNT(*)" in capsys.readouterr().err
    argv2, planning, _ = figure_5_2()
    from trendlake.engine.trends.cost import cost

    graph_only = planning.graph.bytes() + 1  # the graph fits, no algorithm does
    code = main(["trends", *argv2, "--explain", "--memory", str(graph_only)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["chosen"] is None and "do not fit the memory budget" in doc["refused"]
    assert all(not a["fits"] and a["why"].startswith("over the memory budget") for a in doc["alternatives"])
    m = next(a for a in doc["alternatives"] if a["algorithm"] == "m-cet")
    assert m["memory"] == cost(planning.paths, "m-cet", (), planning.size).memory
    code = main(["trends", *argv2, "--memory", str(graph_only)])
    assert code == EXIT_BAD_INPUT and "do not fit the memory budget" in capsys.readouterr().err
    code = main(["trends", *argv2[:5], "--explain"])
    assert code == EXIT_BAD_INPUT and "--explain needs one window" in capsys.readouterr().err


def test_svg_draws_the_window_graph(tmp_path: Path, capsys) -> None:
    """One vertex per event of the window, every edge of the complete trends, the cut edges of
    the chosen partitioning marked, one band per graphlet."""
    from xml.dom import minidom

    from trendlake.engine.trends.cost import cost, output_bytes
    from trendlake.engine.trends.h_cet import graphlet_of

    argv, planning, want = figure_5_2()
    budget = output_bytes(planning.paths) + cost(planning.paths, "h-cet", (), planning.size).memory - 1
    out = tmp_path / "g.svg"
    code = main(["trends", *argv, "--memory", str(budget), "--svg", str(out)])
    rows = capsys.readouterr().out.splitlines()
    assert code == 0 and len(rows) == len(want["complete"])  # the trends are printed too
    dom = minidom.parse(str(out))

    def of_class(name: str) -> list:
        return [e for e in dom.getElementsByTagName("g") + dom.getElementsByTagName("path")
                if e.getAttribute("class") == name]

    events = (FIGURE_5_2 / "events.csv").read_text().splitlines()[1:]
    vertices = of_class("vertex")
    assert len(vertices) == len(events) == want["vertices"]
    titles = [v.getElementsByTagName("title")[0].firstChild.data for v in vertices]
    assert [t.split(":")[0] for t in titles] == [line.split(",")[0] for line in events]
    cut = of_class("cut-edge")
    assert len(cut) + len(of_class("edge")) == want["edges"]
    gl = graphlet_of(planning.paths, (planning.paths.group[[v for v, _ in enumerate(events) if events[v].startswith("c4,")][0]],))
    crossing = sum(1 for v, ws in enumerate(planning.paths.succ) for w in ws if gl[v] != gl[w])
    assert len(cut) == crossing == want["graphlets"]["cut_edges"]
    assert all(e.getAttribute("marker-end") == "url(#cut)" for e in cut)
    assert len(of_class("graphlet")) == 2
    code = main(["trends", *argv, "--svg", str(tmp_path / "nope" / "g.svg")])
    assert code == EXIT_BAD_INPUT and "does not exist" in capsys.readouterr().err


SLIDING = KITING.replace("WITHIN 10 seconds;", "WITHIN 10 seconds SLIDE 5 seconds;")


def test_several_windows_share_and_each_lists_its_own_trends(files, capsys) -> None:
    """Repeated --window-start: the windows of the group by start, overlapping ones on one shared
    graph; each window's rows are those of asking for it alone."""
    w, e = files
    Path(w).write_text(SLIDING)
    base = [w, "--query", "kites", "--events", e, "--group", "district=n", "--id", "key", "--all"]
    alone = {}
    for start in ("0", "5"):
        code, rows, _ = run([*base, "--window-start", start], capsys)
        assert code == 0 and rows
        alone[start] = rows
    code, rows, err = run([*base, "--window-start", "5", "--window-start", "0"], capsys)
    assert code == 0
    assert rows == alone["0"] + alone["5"]  # by start
    assert "2 windows: 2 on 1 shared graph(s), 0 alone" in err
    assert err.count("shared graph; graphlets") == 2
    code, docs, _ = run([*base, "--window-start", "0", "--window-start", "5", "--explain"], capsys)
    assert code == 0 and [d["shared"] for d in docs] == [True, True]
    assert [d["count_all"] for d in docs] == [len(alone["0"]), len(alone["5"])]
    code = main(["trends", *base, "--window-start", "0", "--window-start", "0"])
    assert code == EXIT_BAD_INPUT and "given twice" in capsys.readouterr().err
