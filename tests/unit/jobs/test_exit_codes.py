"""Every sub-command on bad input exits with the documented code (docs/cli.md, "Exit codes and
errors") and one ``trendlake: error:`` message, decided in ``jobs/cli/__init__.py`` only.

The sub-commands that need no Spark run here, in-process through ``jobs.cli.main``, each on
input it must refuse after its options parsed (a file that is missing or not what it must be,
a value the job refuses); ``ingest``, ``stats``, ``replay`` and ``sql`` run as the installed
executable in ``tests/integration/spark/test_exit_codes.py``. ``test_every_sub_command_is_covered``
keeps the two lists complete.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from trendlake.jobs.cli import (
    COMMANDS,
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_JOB_FAILED,
    error_message,
    main,
)

JOBS = Path(__file__).resolve().parents[3] / "jobs"
GOOD = "QUERY q RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 seconds;\n"
BAD = "QUERY q RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 0 seconds;\n"
SPARK_COMMANDS = {"ingest", "stats", "replay", "sql"}  # tests/integration/spark/test_exit_codes.py


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "good.etq").write_text(GOOD)
    (tmp_path / "bad.etq").write_text(BAD)
    (tmp_path / "badtime.csv").write_text("type,ts\nA,1\nB,yesterday\n")
    (tmp_path / "events.csv").write_text("type,ts\nA,1\nB,2\n")
    (tmp_path / "notjson.json").write_text("{plan")
    (tmp_path / "src.csv").write_text("not,a,tlc,file\n1,2,3,4\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "lake").mkdir()
    return {p.name: p for p in tmp_path.iterdir()} | {"tmp": tmp_path, "missing": tmp_path / "missing.etq"}


# sub-command -> (argv from the files, words of the message); every case exits 2
CASES: dict[str, list[tuple[list[str], tuple[str, ...]]]] = {
    "eval": [
        (["eval", "{missing}", "--events", "{events.csv}"], ("no workload file", "missing.etq")),
        (["eval", "{bad.etq}", "--events", "{events.csv}"], ("invalid workload, nothing done", "bad.etq:1:")),
        (["eval", "{good.etq}", "--events", "{badtime.csv}"], ("badtime.csv", "yesterday")),
        (["eval", "{good.etq}", "--events", "{events.csv}", "--plan", "{notjson.json}"], ("line 1",)),
    ],
    "trends": [
        (["trends", "{missing}", "--query", "q", "--events", "{events.csv}"], ("no workload file", "missing.etq")),
        (["trends", "{good.etq}", "--query", "q", "--events", "{badtime.csv}"], ("badtime.csv", "yesterday")),
        (["trends", "{good.etq}", "--query", "q", "--events", "{events.csv}", "--window-start", "0",
          "--memory", "100"], ("1 trends, the aggregation's COUNT(*)", "do not fit the memory budget")),
    ],
    "drill": [
        (["drill", "--workload", "{missing}", "--lake", "{tmp}/lake", "--query", "q", "--top", "1"],
         ("missing.etq",)),
        (["drill", "--workload", "{good.etq}", "--lake", "{tmp}/lake", "--query", "q", "--top", "1"],
         ("plan",)),
    ],
    "plan": [
        (["plan", "{missing}"], ("no workload file",)),
        (["plan", "{good.etq}", "--stats", "{notjson.json}"], ("--stats", "not a JSON file")),
        (["plan", "{good.etq}", "--out", "{tmp}/no/plan.json"], ("--out", "does not exist")),
    ],
    "explain": [
        (["explain", "{notjson.json}"], ("notjson.json",)),
        (["explain", "{tmp}/plan.json", "--replay-report", "{missing}"], ("--replay-report", "no file")),
    ],
    "bench": [
        (["bench", "bogus"], ("bogus",)),
    ],
    "optimize": [
        (["optimize", "{bad.etq}", "--lake", "{tmp}/lake", "--no-stats"], ("invalid workload, nothing done",)),
        (["optimize", "{good.etq}", "--lake", "{tmp}/lake", "--stream", "no good"], ("stream name 'no good'",)),
    ],
    "demo": [
        (["demo", "--dags", "{empty}", "--out", "{tmp}/out"], ("no trendlake DAG files",)),
    ],
    "workload": [
        (["workload", "hamlet-diverse", "--param", "novalue"], ("--param", "NAME=VALUE")),
        (["workload", "hamlet-diverse", "--param", "bogus=1"], ("unknown parameter",)),
    ],
    "generate": [
        (["generate", "rides", "--events", "10"], ("--out",)),
        (["generate", "rides", "--events", "10", "--out", "{tmp}/r.csv", "--param", "bogus=1"], ("bogus",)),
    ],
    "adapt": [
        (["adapt", "debs2014", "{src.csv}", "--out", "{tmp}/o.csv", "--ticker", "X"], ("takes no --ticker",)),
        (["adapt", "tlc", "{missing}", "--out", "{tmp}/o.csv"], ("missing.etq",)),
    ],
}


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_every_sub_command_is_covered() -> None:
    assert set(CASES) | SPARK_COMMANDS == set(COMMANDS)
    assert not set(CASES) & SPARK_COMMANDS


@pytest.mark.parametrize(("argv", "words"), [c for cases in CASES.values() for c in cases],
                         ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_input_exits_2_with_one_message(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                            argv: list[str], words: tuple[str, ...]) -> None:
    monkeypatch.chdir(files["tmp"])
    (files["tmp"] / "plan.json").write_text(json.dumps(_plan(files["good.etq"])))
    code, _out, err = run([re.sub(r"\{([^}]+)\}", lambda m: str(files[m.group(1)]), a) for a in argv])
    assert code == EXIT_BAD_INPUT, err
    assert err.startswith("trendlake: error: ") and err.count("trendlake: error:") == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    for word in words:
        assert word in err, (word, err)


def _plan(workload: Path) -> dict:
    from trendlake.jobs.evaluate import compile_plan

    return compile_plan(workload, None)[0]


@pytest.mark.parametrize(
    ("err", "code"),
    [
        ("JobError", EXIT_JOB_FAILED),
        ("BadInputError", EXIT_BAD_INPUT),
        ("InternalError", EXIT_INTERNAL),
    ],
)
def test_the_job_error_classes_map_to_their_codes(err: str, code: int) -> None:
    from trendlake.jobs import errors

    assert error_message(getattr(errors, err)("x"))[1] == code


def test_input_errors_of_the_jobs_are_bad_input_and_refusals_are_not() -> None:
    from trendlake.jobs.errors import BadInputError
    from trendlake.jobs.ingest import IngestError, IngestInputError
    from trendlake.jobs.lake import LakeError, LakeInputError, LakeNameError
    from trendlake.jobs.optimize import PlanPointerError
    from trendlake.jobs.replay import ReplayError, ReplayInputError
    from trendlake.jobs.sql import SqlError, SqlInternalError, SqlRefused

    for cls in (IngestInputError, LakeInputError, LakeNameError, PlanPointerError, ReplayInputError, SqlRefused):
        assert error_message(cls("x"))[1] == EXIT_BAD_INPUT, cls
    assert error_message(SqlError("PARSE_SYNTAX_ERROR", "x"))[1] == EXIT_BAD_INPUT
    for cls in (IngestError, LakeError, ReplayError):
        assert not issubclass(cls, BadInputError) and error_message(cls("x"))[1] == EXIT_JOB_FAILED, cls
    assert error_message(SqlInternalError("INTERNAL_ERROR", "x"))[1] == EXIT_INTERNAL


def _sources() -> list[Path]:
    # jobs/process.py ends the process with the status the CLI decided (``exit_now``)
    return sorted(p for p in JOBS.rglob("*.py") if p not in (JOBS / "cli" / "__init__.py", JOBS / "process.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(JOBS)))
def test_no_module_prints_its_own_error_or_picks_an_exit_code(path: Path) -> None:
    """Only ``jobs/cli/__init__.py`` writes ``trendlake: error:`` and names exit codes; a
    sub-command's ``run`` returns 0 or an ``EXIT_*`` constant, never a number of its own."""
    tree = ast.parse(path.read_text())
    docstrings = _docstrings(tree)
    texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and id(n) not in docstrings]
    assert not [t for t in texts if re.search(r"trendlake(?: \w+)?: error", t)], path
    calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert not [c for c in calls if c in ("sys.exit", "exit", "os._exit", "SystemExit")
                and not _under_main_guard(tree, c)], path
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name in ("run", "_run", "main"):
            returned = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None]
            numbers = [ast.unparse(v) for v in returned if isinstance(v, ast.Constant) and v.value != 0]
            assert not numbers, (path, fn.name, numbers)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (they may describe the message a module's errors become)."""
    owners = (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)
    return {id(o.body[0].value) for o in ast.walk(tree)
            if isinstance(o, owners) and o.body and isinstance(o.body[0], ast.Expr)}


def _under_main_guard(tree: ast.Module, call: str) -> bool:
    """``sys.exit(main())`` under ``if __name__ == "__main__":`` (a module's own script entry)."""
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            if any(isinstance(n, ast.Call) and ast.unparse(n.func) == call for n in ast.walk(node)):
                return True
    return False
