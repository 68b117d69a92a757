"""The layering of the typing rules (``trendlake.schemas.typing``, docstring): ``schemas/``
imports nothing of the jobs, the engine or the pipeline stack at module level, the engine
never imports the Spark half, and the typing package and the ingest job keep every
function within a screen. Files are parsed, not imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.unit.engine.test_architecture import long_functions

REPO = Path(__file__).resolve().parents[3]
SPARK_HALF = ("trendlake.schemas.typing.spark", "trendlake.schemas.typing.sqlexpr")
HEAVY = ("pyspark", "py4j", "airflow", "deltalake", "great_expectations")


def imports(path: Path, module_level_only: bool = False) -> set[str]:
    """The modules (and ``module.name`` of each ``from module import name``) ``path`` imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _under(names: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("path", sorted((REPO / "schemas").rglob("*.py")), ids=lambda p: p.relative_to(REPO).as_posix())
def test_schemas_import_no_job_engine_or_pipeline_stack(path: Path) -> None:
    assert _under(imports(path), ("trendlake.jobs", "trendlake.engine", "trendlake.optimizer")) == []
    assert _under(imports(path, module_level_only=True), HEAVY) == []


@pytest.mark.parametrize("path", sorted((REPO / "engine").rglob("*.py")), ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_engine_never_imports_the_spark_half(path: Path) -> None:
    assert _under(imports(path), SPARK_HALF) == []


def test_a_spark_half_import_is_found(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from trendlake.schemas.typing import spark\n")
    assert _under(imports(module), SPARK_HALF) == ["trendlake.schemas.typing.spark"]
    module.write_text("from pyspark.sql import functions as F\n")
    assert _under(imports(module, module_level_only=True), HEAVY) == ["pyspark.sql", "pyspark.sql.functions"]


@pytest.mark.parametrize("folder", ["schemas/typing", "jobs/ingest"])
def test_no_function_of_the_typing_rules_or_the_ingest_job_is_longer_than_a_screen(folder: str) -> None:
    assert long_functions(REPO / folder) == {}
