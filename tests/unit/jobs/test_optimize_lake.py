"""`trendlake optimize` never creates a lake: a mistyped --lake is an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from trendlake.jobs.cli import EXIT_BAD_INPUT, main
from trendlake.jobs.optimize import optimize
from trendlake.schemas import workload_path


def test_optimize_on_a_missing_lake_is_an_error_and_creates_nothing(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "no_such_lake"
    with pytest.raises(FileNotFoundError, match="no lake at"):
        optimize(missing, workload_path("sample_rides.etq"), stream="rides")
    rc = main(["optimize", str(workload_path("sample_rides.etq")), "--lake", str(missing), "--no-stats"])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_BAD_INPUT
    assert err == (f"trendlake: error: no lake at {missing} (not a folder); check --lake, "
                   "or create the lake with `trendlake ingest`")
    assert not missing.exists()


def test_optimize_into_an_existing_lake_writes_the_plan_inside_it(tmp_path: Path) -> None:
    ref = optimize(tmp_path, workload_path("sample_rides.etq"), stream="rides")
    assert ref.path.resolve().is_relative_to(tmp_path.resolve()) and ref.path.exists()
