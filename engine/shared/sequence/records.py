"""Aggregate records and their linear algebra (the ``sequence`` kind's values and coefficients).

A *record* is what the type-grained state holds for one event type ``T`` of a
query (COGRA's layout, ``engine.layout``), kept exact: ``c`` the trends ending
at an event of ``T``; ``w[E]`` the events of type ``E`` over them (COUNT(E));
``z[(E, a)]`` the sum of ``a`` over those events (ints, or ``aggregates.FSum``
for floats); ``n``/``x`` the minimum and maximum of ``a`` over them.

The same shape is a *coefficient* of a snapshot in a symbolic expression:
``c`` (α) the paths from the snapshot to ``T``, ``w``/``z`` the events and
sums gathered along those paths, ``n``/``x`` their minimum and maximum.
``compose(coef, rec)`` is the value the snapshot ``rec`` contributes through
those paths: every update of the type-grained state is linear in the counts
and sums (``c += k·s``, ``w += k·sw + k·s``, ``z += k·sz + S·s``), so a sum
of such contributions is exactly what the query alone computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trendlake.engine.numbers import max_present, min_present

__all__ = ["ONE", "Rec", "add", "compose", "extend", "total"]


class Rec:
    """One record (see the module docstring); dicts hold only non-zero / present entries."""

    __slots__ = ("c", "n", "w", "x", "z")

    def __init__(self, c: Any = 0, w: dict | None = None, z: dict | None = None,
                 n: dict | None = None, x: dict | None = None) -> None:
        self.c = c
        self.w = w or {}
        self.z = z or {}
        self.n = n or {}
        self.x = x or {}

    def __repr__(self) -> str:
        return f"Rec({self.c}, {self.w}, {self.z}, {self.n}, {self.x})"


ONE = Rec(1)  # the identity coefficient (a snapshot taken as it is); never mutated


def add(a: Rec | None, b: Rec | None) -> Rec | None:
    """The record of the union of two disjoint sets of trends."""
    if a is None:
        return b
    if b is None:
        return a
    if not (a.w or a.z or a.n or a.x or b.w or b.z or b.n or b.x):  # counts only
        return Rec(a.c + b.c)
    w = dict(a.w)
    for k, v in b.w.items():
        w[k] = w.get(k, 0) + v
    z = dict(a.z)
    for k, v in b.z.items():
        z[k] = z[k] + v if k in z else v
    n = dict(a.n)
    for k, v in b.n.items():
        n[k] = min_present(n.get(k), v)
    x = dict(a.x)
    for k, v in b.x.items():
        x[k] = max_present(x.get(k), v)
    return Rec(a.c + b.c, w, z, n, x)


def compose(coef: Rec, rec: Rec) -> Rec | None:
    """What the value ``rec`` of a snapshot contributes through the paths ``coef``; None when
    it holds no trend."""
    if not rec.c:
        return None
    if coef is ONE:
        return rec
    a, c = coef.c, rec.c
    w = {k: a * v for k, v in rec.w.items()}
    for k, v in coef.w.items():
        w[k] = w.get(k, 0) + v * c
    z = {k: v * a for k, v in rec.z.items()}
    for k, v in coef.z.items():
        z[k] = z[k] + v * c if k in z else v * c
    n = dict(rec.n)
    for k, v in coef.n.items():
        n[k] = min_present(n.get(k), v)
    x = dict(rec.x)
    for k, v in coef.x.items():
        x[k] = max_present(x.get(k), v)
    return Rec(a * c, w, z, n, x)


def extend(rec: Rec, etype: str, k: int, own: Mapping[str, tuple[Any, Any, Any]], counted: bool) -> Rec:
    """``rec`` (what ``k`` simultaneous events of type ``etype`` extend: the sum of their
    predecessors' records, or the start's ``ONE``) extended by those events: each event
    extends every trend of ``rec``. ``own[a]``: the exact sum, minimum and maximum of ``a``
    over the events; ``counted``: whether ``w[etype]`` is kept (some query counts the type)."""
    c = rec.c
    if not (own or counted or rec.w or rec.z or rec.n or rec.x):  # counts only
        return Rec(k * c)
    w = {key: k * v for key, v in rec.w.items()}
    if counted:
        w[etype] = w.get(etype, 0) + k * c
    z = {key: v * k for key, v in rec.z.items()}
    n = dict(rec.n)
    x = dict(rec.x)
    for a, (s, lo, hi) in own.items():
        key = (etype, a)
        if s is not None:
            z[key] = z[key] + s * c if key in z else s * c
        if lo is not None:
            n[key] = min_present(n.get(key), lo)
            x[key] = max_present(x.get(key), hi)
    return Rec(k * c, w, z, n, x)


def total(recs: list[Rec | None]) -> Rec | None:
    out: Rec | None = None
    for r in recs:
        out = add(out, r)
    return out
