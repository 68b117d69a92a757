"""The oracle's trends of one (group, window), for the drill-down tests.

Every trend by the oracle's own enumeration (``tests.oracle.semantics.trends``:
DESIGN §5 by brute force, no engine code), each as the ``(seq, variable)`` steps
of its rows; the complete ones (Def. 3.1) by comparing every trend with every
other: complete when no other trend holds all its events.
"""

from __future__ import annotations

from typing import Any

from tests.oracle.semantics import US, Ev, Query, trends

__all__ = ["complete", "window_trends"]

Trend = tuple[tuple[int, str], ...]


def _windows(ts: int, within: int, slide: int) -> list[int]:
    k, out = ts // slide, []
    while k * slide + within > ts:
        out.append(k)
        k -= 1
    return out


def window_trends(q: Query, rows: list[dict[str, Any]], budget: int = 200_000) -> dict[tuple[tuple[Any, ...], int], list[Trend]]:
    """Per (group, window index) with a trend: every trend of the window (rows carry ``seq``)."""
    keys = q.group_by + [a for a in q.equivalence if a not in q.group_by]
    parts: dict[tuple[Any, ...], list[tuple[Ev, int]]] = {}
    for r in rows:
        attrs = {k: v for k, v in r.items() if k not in ("type", "ts", "seq")}
        key = tuple(attrs.get(k) for k in keys)
        if any(v is None for v in key):
            continue
        parts.setdefault(key, []).append((Ev(round(r["ts"] * US), r["type"], attrs), r["seq"]))
    out: dict[tuple[tuple[Any, ...], int], list[Trend]] = {}
    for key, evs in parts.items():
        evs.sort(key=lambda es: (es[0].ts, es[1]))
        for k in sorted({k for e, _ in evs for k in _windows(e.ts, q.within, q.slide)}):
            start, end = k * q.slide, k * q.slide + q.within
            inside = [(e, s) for e, s in evs if start <= e.ts < end]
            listed = [Ev(e.ts, e.type, e.attrs, n) for n, (e, _) in enumerate(inside)]
            found = [tuple((inside[i][1], v) for i, v in path) for path in trends(q, listed, (start, end), budget)]
            if found:
                out.setdefault((key[: len(q.group_by)], k), []).extend(found)
    return out


def complete(found: list[Trend]) -> list[Trend]:
    """The trends no other trend contains (Def. 3.1: each event of one is in the other; with a
    type under several aliases, each (event, variable) step)."""
    events = [frozenset(t) for t in found]
    return [t for t, e in zip(found, events, strict=True) if not any(e < f for f in events)]
