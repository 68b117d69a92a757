"""The negation state of a query over one time-ordered partition.

Per negative sub-pattern, the latest start of a match of each prefix of its
sequence (:class:`Negation`): before the events of time t are processed,
``L(t)`` is the latest start of a complete match lying entirely before t.
A trailing ``NOT`` uses the symmetric ``C(t)``, the earliest end of a match
lying entirely after t (:func:`earliest_ends`, one backward pass). See
docs/engine.md, "Negation".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trendlake.engine.query import CompiledQuery, Transition

__all__ = ["Negation", "Negations", "earliest_ends", "max_bound"]


class Negation:
    """Latest start time of a match of each prefix of a negative sequence (invalidation state)."""

    __slots__ = ("vars", "best")

    def __init__(self, query: CompiledQuery, sequence: tuple[str, ...]) -> None:
        self.vars = [query.variables[name] for name in sequence]
        self.best: list[int | None] = [None] * len(sequence)

    @property
    def latest(self) -> int | None:
        """Latest start of a complete match among the events processed so far."""
        return self.best[-1]

    def advance(self, t: int, group: list[Any]) -> list[int]:
        """Take the time-stamp group at ``t`` into account; the prefixes whose latest
        start moved, in descending order (prefix j took prefix j-1's former start)."""
        best = self.best
        changed = []
        for j in range(len(best) - 1, -1, -1):  # descending: best[j-1] is still the old value
            cand = t if j == 0 else best[j - 1]
            if cand is None or (best[j] is not None and best[j] >= cand):
                continue
            var = self.vars[j]
            if any(var.matches(e.type, e.attrs) for e in group):
                best[j] = cand
                changed.append(j)
        return changed


def earliest_ends(
    query: CompiledQuery, sequence: tuple[str, ...], groups: list[tuple[int, list[Any]]]
) -> list[int | None]:
    """Per time-stamp group: the earliest end of a match lying entirely after it (backward pass)."""
    variables = [query.variables[name] for name in sequence]
    m = len(variables)
    best: list[int | None] = [None] * m  # earliest end of a match of sequence[j:]
    out: list[int | None] = [None] * len(groups)
    for gi in range(len(groups) - 1, -1, -1):
        t, group = groups[gi]
        out[gi] = best[0]
        for j in range(m):  # ascending: best[j+1] is still the old value
            cand = t if j == m - 1 else best[j + 1]
            if cand is None or (best[j] is not None and best[j] <= cand):
                continue
            var = variables[j]
            if any(var.matches(e.type, e.attrs) for e in group):
                best[j] = cand
    return out


def max_bound(bounds: list[int | None]) -> int | None:
    """The latest of the known bounds (None: no bound)."""
    present = [b for b in bounds if b is not None]
    return max(present) if present else None


class Negations:
    """Every negation of a query over one partition's time-stamp groups: the forward
    states (transition and leading NOTs) and the backward pass (trailing NOTs)."""

    def __init__(self, query: CompiledQuery, groups: list[tuple[int, list[Any]]]) -> None:
        q = query
        self.query = q
        ids = sorted({n for t in q.transitions for n in t.negations} | set(q.start_negations))
        self.forward = {n: Negation(q, q.negations[n]) for n in ids}
        self.types = {q.variables[name].type for n in ids for name in q.negations[n]}
        self.ends_after = [earliest_ends(q, q.negations[n], groups) for n in q.end_negations]

    def latest(self) -> dict[int, int | None]:
        """``L(t)`` per forward negation id, before the current group."""
        return {n: neg.latest for n, neg in self.forward.items()}

    def start_bound(self, latest: dict[int, int | None]) -> int | None:
        """A START vertex counts only in windows starting after this time."""
        return max_bound([latest[n] for n in self.query.start_negations])

    def end_bound(self, gi: int) -> int | None:
        """An END vertex of group ``gi`` counts only in windows ending at or before this time."""
        if not self.ends_after:
            return None
        present = [c[gi] for c in self.ends_after if c[gi] is not None]
        return min(present) if present else None

    def blocked_before(
        self, transitions: Sequence[Transition], latest: dict[int, int | None]
    ) -> int | None:
        """Kept vertices before this time are needed by none of ``transitions`` (the
        outgoing transitions that read kept vertices): each carries a negation with a
        match after them. None when some transition has no negation or no match yet."""
        if not transitions or not all(t.negations for t in transitions):
            return None
        bounds = [max_bound([latest[n] for n in t.negations]) for t in transitions]
        if None in bounds:
            return None
        return min(b for b in bounds if b is not None)

    def advance(self, t: int, group: list[Any]) -> dict[int, list[int]]:
        """Take the group at ``t`` into account (after its vertices were built): per
        negation id, the prefixes whose latest start moved (descending)."""
        if not self.forward or not any(e.type in self.types for e in group):
            return {}
        out = {}
        for n, neg in self.forward.items():
            changed = neg.advance(t, group)
            if changed:
                out[n] = changed
        return out
