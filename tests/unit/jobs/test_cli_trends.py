"""`trendlake trends` end to end: the windows with their COUNT(*), one window's trends, refusals."""

from __future__ import annotations

import json
from pathlib import Path

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
