"""The trendlake optimizer: query language → AST → checks → analysis → plan JSON.

Public API::

    parse_workload(text, path=None) -> Workload
    check_workload(workload, stream_schema=None) -> None      # raises WorkloadError
    compile_workload(text, stream_schema=None, path=None) -> Workload
    build_plan(workload, planner="none", statistics=None, stream=None) -> dict
    workload_hash(text) -> str
"""

from __future__ import annotations

from typing import Any

from trendlake.optimizer.ast import Workload
from trendlake.optimizer.checks import check_workload
from trendlake.optimizer.errors import Diagnostic, OptimizerError, WorkloadError
from trendlake.optimizer.parser import parse_workload
from trendlake.optimizer.plan import build_plan, workload_hash

__all__ = [
    "Diagnostic",
    "OptimizerError",
    "Workload",
    "WorkloadError",
    "build_plan",
    "check_workload",
    "compile_workload",
    "parse_workload",
    "workload_hash",
]


def compile_workload(
    text: str, stream_schema: dict[str, Any] | None = None, path: str | None = None
) -> Workload:
    """Parse and check a workload; ``WorkloadError`` lists every problem."""
    workload = parse_workload(text, path=path)
    check_workload(workload, stream_schema)
    return workload
