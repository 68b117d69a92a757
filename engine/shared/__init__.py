"""Shared execution of sharing groups, one kind per package (docs/plan-format.md, "Sharing").

The plan's ``sharing`` list holds groups; each names its ``kind`` and the
engine dispatches on that kind (never on the planner that chose it) through
the ``Kind`` contract (``engine.shared.base``). ``KINDS`` is the registry: a
new kind is its own package plus one line here.
"""

from __future__ import annotations

from trendlake.engine.shared.base import GroupInput, GroupResults, Kind
from trendlake.engine.shared.kleene import KLEENE
from trendlake.engine.shared.panes import PANES
from trendlake.engine.shared.sequence import SEQUENCE
from trendlake.engine.shared.subsequence import SUBSEQUENCE

__all__ = ["KINDS", "GroupInput", "GroupResults", "Kind", "kind_of"]

KINDS: dict[str, Kind] = {
    KLEENE.name: KLEENE,
    SEQUENCE.name: SEQUENCE,
    PANES.name: PANES,
    SUBSEQUENCE.name: SUBSEQUENCE,
}


def kind_of(name: str) -> Kind | None:
    """The kind ``name``, or None for a kind this engine does not know."""
    return KINDS.get(name)
