"""Data contracts as data: stream schemas, the plan JSON Schema, suites, example workloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMAS_DIR = Path(__file__).resolve().parent
STREAMS_DIR = SCHEMAS_DIR / "streams"
WORKLOADS_DIR = SCHEMAS_DIR / "workloads"
PLAN_SCHEMA_PATH = SCHEMAS_DIR / "plan.schema.json"


def stream_schema_path(name: str) -> Path:
    """Path of the bundled stream schema called ``name``."""
    return STREAMS_DIR / f"{name}.json"


def load_stream_schema(name_or_path: str | Path) -> dict[str, Any]:
    """Load a stream schema by bundled name (``rides``) or by file path."""
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        path = stream_schema_path(str(name_or_path))
    if not path.exists():
        known = sorted(p.stem for p in STREAMS_DIR.glob("*.json"))
        raise FileNotFoundError(f"no stream schema {name_or_path!r} (bundled: {', '.join(known)})")
    with path.open() as fh:
        return json.load(fh)


def load_plan_schema() -> dict[str, Any]:
    """The JSON Schema every plan must satisfy."""
    with PLAN_SCHEMA_PATH.open() as fh:
        return json.load(fh)
