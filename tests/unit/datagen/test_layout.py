"""The datagen packages' layout: one module per stream model, source and paper, each in its registry.

Every module of a package that is not one of its shared parts must define
that package's registry entry (``SPEC``, ``ADAPTER``, ``KINDS``) and the
registry must hold exactly those; no module imports another module's private
name (a leading underscore), so each model, source and paper stands alone on
the shared parts.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest
from trendlake.datagen.adapters import ADAPTERS
from trendlake.datagen.streams import STREAMS
from trendlake.datagen.workloads import KINDS

ROOT = Path(__file__).resolve().parents[3] / "datagen"
SHARED = {"__init__", "base", "common", "core", "cli", "registry", "measure", "writer", "facts"}


def _modules(package: str) -> list[str]:
    pkg = importlib.import_module(f"trendlake.datagen.{package}")
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name not in SHARED)


def test_every_stream_model_module_is_in_the_registry() -> None:
    names = _modules("streams")
    specs = {importlib.import_module(f"trendlake.datagen.streams.{m}").SPEC.name: m for m in names}
    assert set(specs) == set(STREAMS)
    assert all(STREAMS[s] is importlib.import_module(f"trendlake.datagen.streams.{m}").SPEC for s, m in specs.items())
    assert all(s == m for s, m in specs.items()), "a stream model's module is named after its stream"


def test_every_source_module_is_in_the_registry() -> None:
    names = _modules("adapters")
    kinds = {importlib.import_module(f"trendlake.datagen.adapters.{m}").ADAPTER.kind: m for m in names}
    assert set(kinds) == set(ADAPTERS) and all(k == m for k, m in kinds.items())
    assert all(a.read is not None for a in ADAPTERS.values())


def test_every_paper_module_contributes_its_kinds() -> None:
    names = _modules("workloads")
    assert names == ["gloria", "hamlet", "sharon", "weaveshare"]
    merged: dict = {}
    for m in names:
        kinds = importlib.import_module(f"trendlake.datagen.workloads.{m}").KINDS
        assert all(k.split("-")[0] == m for k in kinds), f"{m} registers kinds of another paper"
        merged.update(kinds)
    assert merged == KINDS


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_a_private_name(path: Path) -> None:
    tree = ast.parse(path.read_text())
    private = [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("trendlake")
        for alias in node.names
        if alias.name.startswith("_")
    ]
    assert not private, f"{path.name} imports private names: {private}"
