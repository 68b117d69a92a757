"""Fixtures of the eval input tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.jobs.test_eval_inputs import SCHEMA, WORKLOAD


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    """The workload and the stream schema of ``test_eval_inputs``, as files."""
    workload = tmp_path / "runs.etq"
    workload.write_text(WORKLOAD)
    schema = tmp_path / "inputs.json"
    schema.write_text(json.dumps(SCHEMA))
    return workload, schema
