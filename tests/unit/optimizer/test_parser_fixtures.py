"""Fixture-driven parser and checker tests.

Each ``tests/fixtures/parser/NAME.etq`` is compiled (parse + checks); its
expected outcome is ``NAME.expected.json`` (the AST as ``Workload.to_dict()``)
or ``NAME.expected.err`` (the exact ``WorkloadError`` text). An optional
``NAME.stream`` holds the path (relative to the folder) of a stream schema to
check against. A new case is a new file pair; expected files are written by
hand-checking the output, never regenerated blindly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trendlake import optimizer

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "parser"
CASES = sorted(p.name[: -len(".etq")] for p in FOLDER.glob("*.etq"))


def test_every_case_has_exactly_one_expectation() -> None:
    assert len(CASES) >= 25
    for name in CASES:
        outcomes = [p for p in (FOLDER / f"{name}.expected.json", FOLDER / f"{name}.expected.err") if p.exists()]
        assert len(outcomes) == 1, f"{name}: needs exactly one of .expected.json / .expected.err"


@pytest.mark.parametrize("name", CASES)
def test_fixture(name: str) -> None:
    text = (FOLDER / f"{name}.etq").read_text()
    stream = FOLDER / f"{name}.stream"
    schema = json.loads((FOLDER / stream.read_text().strip()).read_text()) if stream.exists() else None
    expected_json = FOLDER / f"{name}.expected.json"
    if expected_json.exists():
        workload = optimizer.compile_workload(text, stream_schema=schema)
        assert workload.to_dict() == json.loads(expected_json.read_text())
    else:
        with pytest.raises(optimizer.WorkloadError) as info:
            optimizer.compile_workload(text, stream_schema=schema)
        assert str(info.value) == (FOLDER / f"{name}.expected.err").read_text().rstrip("\n")
