"""Sharing candidates per kind: which queries may share with which (docs/plan-format.md, "Sharing").

``KINDS`` is the registry, one line per kind: its name -> a function of the
plan's query entries (a list, in workload order) giving that kind's
candidates, largest first. ``find`` runs them all once per plan; the
planners choose among what it found. Every candidate has ``queries`` and
``forced_group(entries, queries)``: a group of ``queries`` (two or more of
its own) shared whatever it costs (the ``share-all`` planner's); a costed
planner builds its groups with its kind's own constructor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from trendlake.optimizer.candidates import kleene, panes, sequence, subsequence

__all__ = ["KINDS", "Candidate", "Candidates", "find"]


class Candidate(Protocol):
    """Queries that may share (the rest of a candidate is its kind's)."""

    @property
    def queries(self) -> list[str]: ...

    def forced_group(self, entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]) -> dict[str, Any]:
        """An uncosted, statically decided group of ``queries``."""
        ...


# kind -> its candidates
Candidates = Mapping[str, Sequence[Candidate]]

KINDS: dict[str, Callable[[list[dict[str, Any]]], Sequence[Candidate]]] = {
    kleene.KIND: kleene.candidates,
    sequence.KIND: sequence.candidates,
    panes.KIND: panes.candidates,
    subsequence.KIND: subsequence.candidates,
}


def find(entries: Mapping[str, dict[str, Any]]) -> dict[str, Sequence[Candidate]]:
    """Every registered kind's candidates among the queries ``entries``."""
    listed = list(entries.values())
    return {kind: found(listed) for kind, found in KINDS.items()}
