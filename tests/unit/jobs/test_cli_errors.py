"""Errors become one-line messages with the documented exit codes, mapped once in the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from trendlake.engine.errors import EngineError
from trendlake.jobs.cli import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_JOB_FAILED, error_message, main
from trendlake.jobs.errors import JobError
from trendlake.optimizer.errors import OptimizerError


def test_each_package_has_one_error_root() -> None:
    from trendlake.engine.events import EventFileError
    from trendlake.engine.plan import PlanError
    from trendlake.engine.query import Unsupported
    from trendlake.jobs.checks import ResultChecksFailed
    from trendlake.jobs.ingest import IngestError
    from trendlake.jobs.lake import LakeError
    from trendlake.jobs.quality import SuiteFailed
    from trendlake.jobs.replay import ReplayError
    from trendlake.optimizer.errors import WorkloadError

    for cls in (EventFileError, PlanError, Unsupported):
        assert issubclass(cls, EngineError), cls
    for cls in (ResultChecksFailed, IngestError, LakeError, SuiteFailed, ReplayError):
        assert issubclass(cls, JobError), cls
    assert issubclass(WorkloadError, OptimizerError)


@pytest.mark.parametrize(
    ("err", "code", "text"),
    [
        (EngineError("plan p1 was made for another workload"), EXIT_BAD_INPUT, "another workload"),
        (JobError("3 rows unaccounted for"), EXIT_JOB_FAILED, "3 rows unaccounted"),
        (FileNotFoundError(2, "No such file or directory", "/nope.etq"), EXIT_BAD_INPUT, "/nope.etq"),
        (ModuleNotFoundError("No module named 'pyspark'", name="pyspark"), EXIT_BAD_INPUT, "trendlake[spark]"),
        (ModuleNotFoundError("No module named 'airflow'", name="airflow"), EXIT_BAD_INPUT, "trendlake[airflow]"),
        (RecursionError("maximum recursion depth exceeded"), EXIT_BAD_INPUT, "nested too deeply"),
        (ZeroDivisionError("division by zero"), EXIT_INTERNAL, "internal error: ZeroDivisionError"),
    ],
)
def test_error_messages_and_codes(err: BaseException, code: int, text: str) -> None:
    message, got = error_message(err)
    assert got == code
    assert text in message
    assert "\n" not in message


def test_invalid_workload_exits_2_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.etq"
    bad.write_text("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 0 seconds;\n")
    events = tmp_path / "e.csv"
    events.write_text("type,ts\nA,1\n")
    assert main(["eval", str(bad), "--events", str(events)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("trendlake: error:")
    assert "Traceback" not in err
    assert "bad.etq:1:" in err


def test_unexpected_errors_are_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from trendlake.jobs.cli import plan

    def boom(args: object) -> int:
        raise KeyError("surprise")

    monkeypatch.setattr(plan, "run", boom)
    workload = tmp_path / "w.etq"
    workload.write_text("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1 minute;\n")
    assert main(["plan", str(workload)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "internal error: KeyError" in err and "Traceback" not in err


def test_a_closed_pipe_is_not_an_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        f"'{sys.executable}' -m trendlake generate --list | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}",
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120,
    )
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0
