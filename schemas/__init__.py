"""Data contracts as data: stream schemas, the plan JSON Schema, example workloads.

Everything is read through ``importlib.resources``, so it works the same from
a checkout, an editable install and a wheel.
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

_ROOT = resources.files(__name__)


def resource(*parts: str) -> Traversable:
    """A bundled file (``resource("workloads", "sample_rides.etq")``)."""
    node = _ROOT
    for part in parts:
        node = node / part
    return node


def bundled_streams() -> list[str]:
    """Names of the bundled stream schemas."""
    return sorted(p.name[: -len(".json")] for p in resource("streams").iterdir() if p.name.endswith(".json"))


def bundled_workloads() -> list[str]:
    """File names of the bundled example workloads."""
    return sorted(p.name for p in resource("workloads").iterdir() if p.name.endswith(".etq"))


def workload_text(name: str) -> str:
    """Text of a bundled workload (``sample_rides.etq``)."""
    node = resource("workloads", name)
    if not node.is_file():
        raise FileNotFoundError(f"no bundled workload {name!r} (bundled: {', '.join(bundled_workloads())})")
    return node.read_text(encoding="utf-8")


def workload_path(name: str) -> Path:
    """A file system path of a bundled workload (the package's own file when installed
    as files, which is every install trendlake supports)."""
    node = resource("workloads", name)
    if not node.is_file():
        raise FileNotFoundError(f"no bundled workload {name!r} (bundled: {', '.join(bundled_workloads())})")
    return Path(str(node))


def has_stream(name: str) -> bool:
    return resource("streams", f"{name}.json").is_file()


def load_stream_schema(name_or_path: str | Path) -> dict[str, Any]:
    """Load a stream schema by bundled name (``rides``) or by file path."""
    path = Path(name_or_path)
    if path.suffix or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"no stream schema file {path}")
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    name = str(name_or_path)
    if not has_stream(name):
        raise FileNotFoundError(f"no stream schema {name!r} (bundled: {', '.join(bundled_streams())})")
    return json.loads(resource("streams", f"{name}.json").read_text(encoding="utf-8"))


def load_plan_schema() -> dict[str, Any]:
    """The JSON Schema every plan must satisfy."""
    return json.loads(resource("plan.schema.json").read_text(encoding="utf-8"))


def load_kind_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a sharing group's body of ``kind`` (``schemas/kinds/<kind>.json``)."""
    return json.loads(resource("kinds", f"{kind}.json").read_text(encoding="utf-8"))
