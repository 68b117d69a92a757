"""`trendlake optimize` never creates a lake: a mistyped --lake is an error."""

from __future__ import annotations

import json
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


# ---- current.json: checked as data, kept inside the lake -----------------------------------

WORKLOAD = "QUERY q RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 minute;\n"


@pytest.fixture
def lake(tmp_path: Path) -> tuple[Path, Path, str]:
    """A lake with one optimized workload ``w``: (lake root, plans folder, plan id)."""
    root = tmp_path / "lake"
    root.mkdir()
    wl = tmp_path / "w.etq"
    wl.write_text(WORKLOAD)
    ref = optimize(root, wl)
    return root, ref.path.parent, ref.plan_id


def test_optimize_writes_a_pointer_that_reads_back(lake: tuple[Path, Path, str]) -> None:
    from trendlake.jobs.optimize import current_plan, read_pointer

    root, folder, plan_id = lake
    assert json.loads((folder / "current.json").read_text()) == {"plan_id": plan_id}
    assert read_pointer(root, "w")[0] == plan_id and current_plan(root, "w")["plan_id"] == plan_id


OUTSIDE_ID = "0123456789ab-none-nostats"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"plan_id": "../../../../etc/passwd"}', r"plan_id \"../../../../etc/passwd\" is not a plan id"),
        ('{"plan_id": "0123456789ab-none-x/../../y"}', r"is not a plan id"),
        ('{"plan_id": 7}', r"plan_id 7 is not a plan id"),
        ('{"plan_id": "0123456789ab-none-nostats", "path": "/etc"}', r"expected exactly the key plan_id"),
        ('["0123456789ab-none-nostats"]', r"expected a JSON object"),
        ("plan 1\n", r"not JSON"),
        (b"\xff\xfe", r"not JSON"),
        ('{"plan_id": "' + "a" * 5000 + '"}', r"more than 4096 bytes"),
        ('{"plan_id": "0123456789ab-none-' + "a" * 190 + '"}', r"is not a plan id"),
        ('{"plan_id": "0123456789ab-none-nostats"}', r"names plan 0123456789ab-none-nostats, but there is no file"),
    ],
)
def test_a_bad_pointer_is_refused_naming_the_file(lake: tuple[Path, Path, str], content: str | bytes,
                                                  message: str) -> None:
    from trendlake.jobs.optimize import PlanPointerError, current_plan

    root, folder, _ = lake
    pointer = folder / "current.json"
    if isinstance(content, bytes):
        pointer.write_bytes(content)
    else:
        pointer.write_text(content)
    with pytest.raises(PlanPointerError, match=message) as info:
        current_plan(root, "w")
    assert str(info.value).startswith(str(pointer)) and "\n" not in str(info.value)
    assert len(str(info.value)) < 600


def test_a_pointer_or_plan_linked_outside_the_lake_is_refused(lake: tuple[Path, Path, str], tmp_path: Path) -> None:
    from trendlake.jobs.optimize import PlanPointerError, current_plan

    root, folder, plan_id = lake
    outside = tmp_path / "outside"
    outside.mkdir()
    plan = json.loads((folder / f"{plan_id}.json").read_text())
    (outside / "current.json").write_text(json.dumps({"plan_id": plan_id}))
    (folder / "current.json").unlink()
    (folder / "current.json").symlink_to(outside / "current.json")
    with pytest.raises(PlanPointerError, match="outside the lake root"):
        current_plan(root, "w")
    # the pointer is inside, the plan file it names is a link to a plan outside
    (folder / "current.json").unlink()
    (folder / "current.json").write_text(json.dumps({"plan_id": OUTSIDE_ID}))
    (outside / f"{OUTSIDE_ID}.json").write_text(json.dumps(plan | {"plan_id": OUTSIDE_ID}))
    (folder / f"{OUTSIDE_ID}.json").symlink_to(outside / f"{OUTSIDE_ID}.json")
    with pytest.raises(PlanPointerError, match=f"names plan {OUTSIDE_ID}, whose file is refused: .*outside the lake"):
        current_plan(root, "w")


def test_a_plan_file_holding_another_plan_is_refused(lake: tuple[Path, Path, str]) -> None:
    from trendlake.jobs.optimize import PlanPointerError, current_plan

    root, folder, plan_id = lake
    (folder / f"{OUTSIDE_ID}.json").write_text((folder / f"{plan_id}.json").read_text())
    (folder / "current.json").write_text(json.dumps({"plan_id": OUTSIDE_ID}))
    with pytest.raises(PlanPointerError, match=f"holds plan {plan_id}"):
        current_plan(root, "w")


def test_replay_with_a_bad_pointer_is_one_line_before_spark(lake: tuple[Path, Path, str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    root, folder, _ = lake
    (folder / "current.json").write_text('{"plan_id": "../../../../etc/passwd"}')
    rc = main(["replay", str(tmp_path / "w.etq"), "--lake", str(root), "--from", "0", "--to", "60"])
    err = capsys.readouterr().err
    assert rc == EXIT_BAD_INPUT and err.count("\n") == 1 and "current.json" in err and "not a plan id" in err
    assert "pyspark" not in sys.modules


def test_a_bad_pointer_is_bad_input_for_every_command() -> None:
    """Exit 2 (bad input) wherever a command meets it, not 1 (a job refused to run)."""
    from trendlake.jobs.cli import EXIT_BAD_INPUT, error_message
    from trendlake.jobs.lake import LakeError
    from trendlake.jobs.optimize import PlanPointerError

    err = PlanPointerError("lake/plans/w/current.json: not a plan pointer")
    assert isinstance(err, LakeError)
    assert error_message(err) == ("lake/plans/w/current.json: not a plan pointer", EXIT_BAD_INPUT)
    assert error_message(LakeError("refused"))[1] != EXIT_BAD_INPUT
