"""Sharing candidates per kind: which queries may share with which (docs/plan-format.md, "Sharing").

``KINDS`` is the registry, one line per kind: its name -> a function of the
plan's query entries (by name, in workload order) giving that kind's
candidates, largest first. ``find`` runs them all once per plan; the
planners choose among what it found.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trendlake.optimizer.candidates import kleene

__all__ = ["KINDS", "Candidates", "find"]

# kind -> its candidates (each kind's own type)
Candidates = Mapping[str, list[Any]]

KINDS: dict[str, Callable[[list[dict[str, Any]]], list[Any]]] = {
    kleene.KIND: kleene.candidates,
}


def find(entries: Mapping[str, dict[str, Any]]) -> dict[str, list[Any]]:
    """Every registered kind's candidates among the queries ``entries``."""
    listed = list(entries.values())
    return {kind: found(listed) for kind, found in KINDS.items()}
