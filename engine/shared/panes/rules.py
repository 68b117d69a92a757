"""Which queries a ``panes`` group may hold, and the edges of their windows.

Queries share panes when they are the same query but for their windows: one
template, predicates, partitioning and COUNT(E) keys (``body_key``), and a
window state the compiled panes pass evaluates (``eligible``). A group's windows
cut the time line at every window start and end of any of its queries (the
*edges*); the cuts repeat every composite slide (the least common multiple of the
slides), and ``edges`` lists them within one composite slide, as Weave Share
counts them (docs/plan-format.md, kind ``panes``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from trendlake.engine.query import ANY, has_cycle

__all__ = ["EDGE_LIMIT", "MAX_COUNTS", "body_key", "composite_slide", "edges", "eligible", "envelope_window"]

# the most counts a state may hold (the pass keeps a (counts + 1) x counts map per pane)
MAX_COUNTS = 64
# the most edges listed in a group's body: a composite slide with more is not planned
EDGE_LIMIT = 4096

# what may differ between queries of one group: their names, windows, where they were
# written, what they return and group by (within one partitioning), their aggregates' names
_FREE = ("name", "window", "source", "returns", "group_by", "aggregates")


def body_key(entry: Mapping[str, Any]) -> str:
    """Equal for two queries exactly when they are the same query but for their windows."""
    import json

    rest = {k: v for k, v in entry.items() if k not in _FREE}
    rest["aggregates"] = sorted({(a["fn"], a.get("var") or "") for a in entry["aggregates"]})
    return json.dumps(rest, sort_keys=True, default=str)


def eligible(entry: Mapping[str, Any]) -> str | None:
    """None when the compiled panes pass evaluates the query, else why not: type-grained
    (skip-till-any-match, no adjacent predicate), no negation, each positive type once (an
    event matches one variable), no nested Kleene (a time stamp's events are applied in an
    order), counts only (COUNT(*), COUNT(E)), a state of at most
    ``MAX_COUNTS`` counts."""
    name = entry["name"]
    if entry["semantics"] != ANY or entry.get("adjacent_predicates"):
        return f"query {name}: not type-grained"
    if entry.get("negations") or any(v["negated"] for v in entry["variables"]):
        return f"query {name}: negation"
    positive = [v["type"] for v in entry["variables"] if not v["negated"]]
    if len(set(positive)) != len(positive):
        return f"query {name}: a type occurs more than once"
    if has_cycle((t["from"], t["to"]) for t in entry["template"]["transitions"]):
        return f"query {name}: nested Kleene (a cycle through several variables)"
    if not all(a["fn"] in ("count_star", "count") for a in entry["aggregates"]):
        return f"query {name}: aggregates other than counts"
    keys = {a.get("var") for a in entry["aggregates"] if a["fn"] == "count"}
    if len(positive) * (1 + len(keys)) > MAX_COUNTS:
        return f"query {name}: a state of more than {MAX_COUNTS} counts"
    return None


def composite_slide(windows: Iterable[tuple[int, int]]) -> int:
    """The least common multiple of the slides of ``(within, slide)`` windows."""
    return math.lcm(*(int(s) for _, s in windows))


def edges(windows: Iterable[tuple[int, int]]) -> list[int]:
    """The positions in ``(0, composite slide]`` where a window of ``(within, slide)`` windows
    starts or ends (a position modulo the composite slide; the composite slide itself for
    0), sorted; the composite slide is always one. ValueError past ``EDGE_LIMIT`` window
    starts in one composite slide (of the distinct windows: queries of one window add no
    edges)."""
    windows = list(dict.fromkeys((int(w), int(s)) for w, s in windows))
    cs = composite_slide(windows)
    if sum(cs // int(s) for _, s in windows) > EDGE_LIMIT:
        raise ValueError(f"the windows have more than {EDGE_LIMIT} edges in their composite slide of {cs}us")
    found = set()
    for within, slide in windows:
        for k in range(cs // slide):
            found.add(k * slide % cs or cs)
            found.add((k * slide + within) % cs or cs)
    return sorted(found)


def envelope_window(windows: Iterable[tuple[int, int]]) -> dict[str, int]:
    """The group envelope's window: the largest range and the composite slide."""
    windows = list(windows)
    return {"within_us": max(int(w) for w, _ in windows), "slide_us": composite_slide(windows)}
