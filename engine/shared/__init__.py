"""Shared execution of sharing groups, one module per kind (docs/plan-format.md, "Sharing").

The plan's ``sharing`` list holds groups; each names its ``kind`` and the
engine dispatches on that kind (never on the planner that chose it). A kind
module exposes ``supports(queries, shared) -> reason | None`` and
``run_group(...)``; ``KINDS`` is the registry.
"""

from __future__ import annotations

from types import ModuleType

from trendlake.engine.shared import kleene

__all__ = ["KINDS", "kind_module"]

KINDS: dict[str, ModuleType] = {kleene.KIND: kleene}


def kind_module(kind: str) -> ModuleType | None:
    """The module executing groups of ``kind``, or None for a kind this engine does not know."""
    return KINDS.get(kind)
