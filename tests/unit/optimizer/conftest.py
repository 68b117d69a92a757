"""Shared helpers for the optimizer tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="session")
def rides_schema() -> dict[str, Any]:
    """A test copy of the rides stream schema (types and attributes of the sample workload)."""
    return json.loads((FIXTURES / "streams" / "rides.json").read_text())
