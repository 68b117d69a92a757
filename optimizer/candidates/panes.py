"""Candidates of the ``panes`` kind (Weave Share): one query under several windows.

A query may take part when the compiled panes pass evaluates it
(``engine.shared.panes.rules.eligible``: type-grained, no negation, each
positive type once, counts only). A candidate is a set of two or more such
queries that differ in nothing but their windows (``rules.body_key``) and
whose windows have at most ``rules.EDGE_LIMIT`` edges in their composite
slide. How they are split into groups (Weave Share's trees) is the planner's
(``optimizer.planners.panes``); ``forced_group`` puts them all in one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendlake.engine.shared.panes import available, rules
from trendlake.optimizer.groups import make_group

__all__ = ["KIND", "Candidate", "candidates", "group", "windows_of"]

KIND = "panes"


def windows_of(entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]) -> list[tuple[int, int]]:
    """The (within, slide) of each of ``queries``, in microseconds."""
    return [(int(entries[q]["window"]["within_us"]), int(entries[q]["window"]["slide_us"])) for q in queries]


@dataclass
class Candidate:
    """Eligible queries that differ only in their windows."""

    queries: list[str]

    def forced_group(self, entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]) -> dict[str, Any]:
        """All of ``queries`` over the panes of all their windows (Weave Share's "Shared")."""
        return group(entries, list(queries), parameters={}, estimated_cost=(0.0, 0.0))


def candidates(entries: list[dict[str, Any]]) -> list[Candidate]:
    """Every set of two or more eligible queries that differ only in their windows, with more
    than one distinct window among them, largest first; none where the compiled panes pass
    is not built."""
    if not available():
        return []
    by_body: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        if rules.eligible(e) is None:
            by_body.setdefault(rules.body_key(e), []).append(e)
    out = []
    for members in by_body.values():
        names = [e["name"] for e in members]
        windows = set(windows_of({e["name"]: e for e in members}, names))
        if len(members) < 2 or len(windows) < 2:
            continue
        try:
            rules.edges(windows)
        except ValueError:
            continue  # too many edges: not planned
        out.append(Candidate(names))
    out.sort(key=lambda c: -len(c.queries))
    return out


def group(
    entries: Mapping[str, Mapping[str, Any]],
    queries: list[str],
    *,
    parameters: Mapping[str, float],
    estimated_cost: tuple[float, float],
) -> dict[str, Any]:
    """A ``panes`` group of ``queries`` (one query under their windows)."""
    windows = windows_of(entries, queries)
    body = {"composite_slide_us": rules.composite_slide(windows), "edges_us": rules.edges(windows)}
    return make_group(KIND, queries, entries, body, parameters, estimated_cost,
                      window=rules.envelope_window(windows))
