"""The Weave Share workload model: aggregate continuous queries as (name, range, slide).

A query here is an ACQ of the paper (Guirguis et al., Weave Share, §3): a name, a window
range ``within`` and a ``slide``, integers in one time unit (µs in trendlake, plain units
in the paper's examples). Its windows are ``[k*slide, k*slide + within)`` (trendlake's
``engine.timeline.window_range``), so in every slide a window starts at ``0 mod slide``
and one ends at ``within mod slide``: the paired-window fragments of §3 are
``g1 = within % slide`` and ``g2 = slide - g1`` (one fragment of length ``slide`` when
``within`` is a multiple of ``slide``).

Only queries with the same pattern body and partitioning may share a tree: ``group_entries``
groups plan query entries (``optimizer.plan.query_entry``) by everything but their window
(and their labels: name, source position, output names) before the library is called.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from trendlake.engine.shared.panes.rules import body_key
from trendlake.optimizer.errors import OptimizerError

__all__ = ["Query", "check_queries", "check_rate", "from_entries", "grain", "group_entries",
           "sharing_key"]


@dataclass(frozen=True, order=True)
class Query:
    """An ACQ: ``within`` (range ``r``) and ``slide`` (``s``), positive integers."""

    name: str
    within: int
    slide: int

    def __post_init__(self) -> None:
        for field_name in ("within", "slide"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise OptimizerError(f"query {self.name}: {field_name} must be a positive "
                                     f"integer, not {value!r}")

    @property
    def fragments(self) -> tuple[int, int]:
        """The paired-window fragments ``(g1, g2)`` of one slide; ``g1 = 0`` when the range
        is a multiple of the slide (then the slide is one fragment)."""
        g1 = self.within % self.slide
        return g1, self.slide - g1

    @property
    def offsets(self) -> tuple[int, ...]:
        """The query's edges in one slide as positions in ``(0, slide]``: ``g1`` (a window
        end) when non-zero, and ``slide`` (a window start)."""
        g1 = self.within % self.slide
        return (g1, self.slide) if g1 else (self.slide,)

    @property
    def overlap(self) -> Fraction:
        """The overlap factor ``omega = r / s`` (§6: ``r = omega * s``)."""
        return Fraction(self.within, self.slide)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "within": self.within, "slide": self.slide}


def check_queries(queries: Iterable[Query]) -> tuple[Query, ...]:
    """The queries as a tuple; ``OptimizerError`` for a duplicate name or a non-``Query``."""
    out = tuple(queries)
    seen: set[str] = set()
    for q in out:
        if not isinstance(q, Query):
            raise OptimizerError(f"expected a weaveshare Query, got {q!r}")
        if q.name in seen:
            raise OptimizerError(f"query {q.name}: name given twice")
        seen.add(q.name)
    return out


def check_rate(rate: float) -> float:
    """The input rate (events per time unit) as a float; ``OptimizerError`` unless finite
    and >= 0."""
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real):
        raise OptimizerError(f"input rate must be a number, not {rate!r}")
    value = float(rate)
    if not math.isfinite(value) or value < 0:
        raise OptimizerError(f"input rate must be finite and >= 0, not {rate!r}")
    return value


def grain(queries: Iterable[Query]) -> int:
    """The gcd of every range and slide: every edge lies on a multiple of it, so edges are
    counted in grains (the plan's ``panes_us`` for one group of queries)."""
    g = 0
    for q in queries:
        g = math.gcd(g, q.within, q.slide)
    return g or 1


# ---- grouping plan query entries -------------------------------------------------------

def sharing_key(entry: Mapping[str, Any]) -> str:
    """The part of a plan query entry that queries of one tree must agree on: the query but
    for its window (``engine.shared.panes.rules.body_key``, the rule the ``panes`` kind checks)."""
    return body_key(entry)


def group_entries(entries: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Plan query entries grouped by ``sharing_key``, groups in order of their first entry,
    entries in input order."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for e in entries:
        groups.setdefault(sharing_key(e), []).append(e)
    return list(groups.values())


def from_entries(entries: Iterable[Mapping[str, Any]]) -> tuple[Query, ...]:
    """The ``Query`` of each plan query entry (its name and ``window``)."""
    out = []
    for e in entries:
        w = e["window"]
        out.append(Query(e["name"], w["within_us"], w["slide_us"]))
    return check_queries(out)
