"""Kept events of a variable (GRETA vertices) with their per-window aggregates.

Row-based strategies keep, per variable, the matched events later events may
connect to (adjacent predicates, negation bounds): a :class:`VarList` in time
order whose expired or invalidated prefix is pruned.
"""

from __future__ import annotations

import bisect
from typing import Any

__all__ = ["VarList", "Vertex"]


class Vertex:
    """A GRETA vertex: an event matched to one variable, with per-window aggregates."""

    __slots__ = ("ts", "attrs", "var", "prop", "last_window", "closed")

    def __init__(
        self, ts: int, attrs: dict[str, Any], var: str, prop: dict[int, Any], last_window: int
    ) -> None:
        self.ts = ts
        self.attrs = attrs
        self.var = var
        self.prop = prop  # the aggregates it passes on to its successors
        self.last_window = last_window
        self.closed = False


class VarList:
    """Vertices of one variable in time order, with a pruned (expired or invalid) prefix."""

    __slots__ = ("vertices", "stamps", "offset")

    def __init__(self) -> None:
        self.vertices: list[Vertex] = []
        self.stamps: list[int] = []
        self.offset = 0

    def prune(self, kmin: int, blocked_before: int | None) -> None:
        """Drop vertices whose windows all ended, and those before ``blocked_before``."""
        vs, off = self.vertices, self.offset
        while off < len(vs) and vs[off].last_window < kmin:
            off += 1
        if blocked_before is not None:
            off = max(off, bisect.bisect_left(self.stamps, blocked_before))
        if off > 32 and off * 2 > len(vs):
            del vs[:off]
            del self.stamps[:off]
            off = 0
        self.offset = off

    def from_time(self, bound: int | None) -> int:
        """Index of the first live vertex at or after ``bound``."""
        if bound is None:
            return self.offset
        return max(self.offset, bisect.bisect_left(self.stamps, bound))

    def append(self, v: Vertex) -> None:
        self.vertices.append(v)
        self.stamps.append(v.ts)
