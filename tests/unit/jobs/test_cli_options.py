"""Every sub-command of ``trendlake`` refuses a bad option with one line and exit 2.

For each sub-command in ``jobs.cli.COMMANDS``: an option value its type or
choices refuse, an unknown option, and a missing required argument (where it
has one), run in-process through ``jobs.cli.main``. Nothing runs before the
options are checked: no file is read or written (the paths named do not
exist) and no Spark is started (pyspark is never imported).
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pytest
from trendlake.jobs.cli import COMMANDS, EXIT_BAD_INPUT, main

W = "nowhere/w.etq"
LAKE = ["--lake", "nowhere/lake"]

# sub-command -> (argv, words the one-line message must hold)
CASES: dict[str, list[tuple[list[str], tuple[str, ...]]]] = {
    "eval": [
        (["eval", W, "--events", "e.csv", "--strategy", "bogus"], ("--strategy", "bogus")),
        (["eval", W, "--events", "e.csv", "--planner", "bogus"], ("--planner", "bogus", "hamlet")),
        (["eval", W, "--events", "e.csv", "--format", "yaml"], ("--format", "yaml")),
        (["eval", W, "--events", "e.csv", "--nope"], ("trendlake eval", "--nope")),
        (["eval", W], ("--events",)),
    ],
    "trends": [
        (["trends", W, "--query", "q", "--events", "e.csv", "--algorithm", "x-cet"], ("--algorithm", "x-cet")),
        (["trends", W, "--query", "q", "--events", "e.csv", "--memory", "lots"], ("--memory", "lots")),
        (["trends", W, "--query", "q", "--events", "e.csv", "--limit", "0"], ("--limit", "at least 1")),
        (["trends", W, "--query", "q", "--events", "e.csv", "--window-start", "noon"], ("--window-start", "noon")),
        (["trends", W, "--events", "e.csv"], ("--query",)),
    ],
    "drill": [
        (["drill", "--workload", W, *LAKE, "--query", "q"], ("--top", "--window")),
        (["drill", "--workload", W, *LAKE, "--query", "q", "--top", "1", "--window", "@0"], ("--window", "--top")),
        (["drill", "--workload", W, *LAKE, "--query", "q", "--top", "0"], ("--top", "at least 1")),
        (["drill", "--workload", W, *LAKE, "--query", "q", "--top", "1", "--memory", "lots"], ("--memory", "lots")),
        (["drill", "--workload", W, *LAKE, "--query", "q", "--top", "1", "--from", "noon"], ("--from", "noon")),
        (["drill", *LAKE, "--query", "q", "--top", "1"], ("--workload",)),
    ],
    "plan": [
        (["plan", W, "--planner", "bogus"], ("--planner", "bogus")),
        (["plan", W, "--nope", "1"], ("trendlake plan", "--nope")),
        (["plan"], ("workload",)),
    ],
    "explain": [
        (["explain", "p.json", "--nope"], ("trendlake explain", "--nope")),
        (["explain"], ("plan",)),
    ],
    "bench": [
        (["bench", "hamlet", "--size", "huge"], ("--size", "huge")),
        (["bench", "hamlet", "--repeat", "0"], ("--repeat", "at least 1")),
        (["bench", "hamlet", "--nope"], ("trendlake bench", "--nope")),
        (["bench"], ("NAME",)),
    ],
    "optimize": [
        (["optimize", W, *LAKE, "--planner", "bogus"], ("--planner", "bogus", "hamlet-static")),
        (["optimize", W, *LAKE, "--nope"], ("trendlake optimize", "--nope")),
        (["optimize", W], ("--lake",)),
    ],
    "replay": [
        (["replay", W, *LAKE, "--from", "yesterday", "--to", "2026-01-02"], ("--from", "yesterday")),
        (["replay", W, *LAKE, "--from", "2026-01-01", "--to", "1e308"], ("--to", "1e308")),
        (["replay", W, *LAKE, "--from", "0", "--to", "1", "--nope"], ("trendlake replay", "--nope")),
        (["replay", W, *LAKE], ("--from", "--to")),
    ],
    "demo": [
        (["demo", "--events", "-5"], ("--events", "-5")),
        (["demo", "--seed", "x"], ("--seed", "'x'")),
        (["demo", "--nope"], ("trendlake demo", "--nope")),
    ],
    "workload": [
        (["workload", "bogus"], ("KIND", "bogus")),
        (["workload", "hamlet-diverse", "--queries", "many"], ("--queries", "many")),
        (["workload", "hamlet-diverse", "--nope"], ("trendlake workload", "--nope")),
        (["workload"], ("KIND",)),
    ],
    "ingest": [
        (["ingest", *LAKE, "--stream", "rides", "--landing", "in", "--nope"], ("trendlake ingest", "--nope")),
        (["ingest", *LAKE, "--stream", "rides"], ("--landing",)),
    ],
    "stats": [
        (["stats", *LAKE, "--stream", "rides", "--days", "-1"], ("--days", "-1")),
        (["stats", *LAKE, "--stream", "rides", "--from", "garbage"], ("--from", "garbage")),
        (["stats", *LAKE, "--stream", "rides", "--pane-seconds", "nan"], ("--pane-seconds", "nan")),
        (["stats", *LAKE, "--stream", "rides", "--nope"], ("trendlake stats", "--nope")),
        (["stats", *LAKE], ("--stream",)),
    ],
    "sql": [
        (["sql", *LAKE, "--format", "xml", "SELECT 1"], ("--format", "xml")),
        (["sql", *LAKE, "--limit", "ten", "SELECT 1"], ("--limit", "ten")),
        (["sql", *LAKE, "--limit", "-1", "SELECT 1"], ("--limit", "-1")),
        (["sql", *LAKE, "--nope", "SELECT 1"], ("trendlake sql", "--nope")),
        (["sql", *LAKE], ("query",)),
    ],
    "generate": [
        (["generate", "rides", "--events", "10", "--out", "x.csv", "--format", "xml"], ("--format", "xml")),
        (["generate", "rides", "--events", "ten", "--out", "x.csv"], ("--events", "ten")),
        (["generate", "rides", "--nope"], ("trendlake generate", "--nope")),
        (["generate", "rides", "--events", "10"], ("--out",)),
    ],
    "adapt": [
        (["adapt", "bogus", "src.csv", "--out", "o.csv"], ("KIND", "bogus")),
        (["adapt", "tlc", "src.csv", "--out", "o.csv", "--mode", "trains"], ("--mode", "trains")),
        (["adapt", "tlc", "src.csv", "--out", "o.csv", "--nope"], ("trendlake adapt", "--nope")),
        (["adapt", "tlc", "src.csv", "--out", "o.csv", "--chunk-rows", "0"], ("--chunk-rows", "0")),
        (["adapt", "tlc", "src.csv"], ("--out",)),
    ],
}
TOP = [
    (["bogus"], ("COMMAND", "bogus")),
    (["--nope"], ("trendlake", "--nope")),
]


def test_every_sub_command_is_covered() -> None:
    assert set(CASES) == set(COMMANDS)


@pytest.mark.parametrize(
    ("argv", "words"),
    [case for cases in CASES.values() for case in cases] + TOP,
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_a_bad_option_is_one_line_and_exit_2(argv: list[str], words: tuple[str, ...], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    text = err.getvalue()
    assert code == EXIT_BAD_INPUT, (code, text)
    assert out.getvalue() == ""
    assert text.startswith("trendlake") and ": error: " in text and text.count("\n") == 1, text
    assert "Traceback" not in text and "internal error" not in text and "usage:" not in text
    for word in words:
        assert word in text, (word, text)
    assert list(tmp_path.iterdir()) == []  # nothing written
    assert "pyspark" not in sys.modules  # refused before Spark


def test_help_still_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize", "--help"]) == 0
    assert "--planner {auto,gloria,gloria-greedy,gloria-noprune,hamlet,hamlet-static,none,share-all,shared-panes,sharon,sharon-exhaustive,sharon-greedy,weaveshare}" in " ".join(capsys.readouterr().out.split())
