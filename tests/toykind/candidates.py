"""The optimizer side of the toy ``twins`` kind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendlake.optimizer.groups import make_group

from tests.toykind.kind import twin_key


@dataclass
class Twins:
    queries: list[str]

    def forced_group(self, entries: Mapping[str, Mapping[str, Any]], queries: Sequence[str]) -> dict[str, Any]:
        return make_group("twins", list(queries), entries, {"runs": queries[0]}, {}, (0.0, 0.0))


def candidates(entries: list[dict[str, Any]]) -> list[Twins]:
    """Queries equal but for their names, two or more, largest first."""
    by_key: dict[str, list[str]] = {}
    for e in entries:
        by_key.setdefault(twin_key(e), []).append(e["name"])
    return sorted((Twins(qs) for qs in by_key.values() if len(qs) >= 2), key=lambda c: -len(c.queries))
