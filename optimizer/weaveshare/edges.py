"""Composite slides, edges and weaveability (Weave Share §4.1, §4.3, §8), on edge bitmaps.

Positions are in *grains* (``model.grain``: the gcd of every range and slide of the call),
so that a composite slide of minutes in µs stays a small bitmap.

* **Edges of a query.** In each slide a window starts at ``0`` and one ends at
  ``g1 = r % s``: the query's edges in one slide are the positions ``g1`` (if non-zero) and
  ``s`` of ``(0, s]`` (§3, Figure 1(a)).
* **Composite slide** of a set of queries: ``CS = lcm`` of their slides (§4.1); its edges
  are every query's edges stretched over ``CS`` (each slide repeated ``CS / s`` times),
  united, as positions of ``(0, CS]`` -- Example 2: slides 9 (range 12) and 6 (range 10)
  give ``CS = 18`` with edges 3, 4, 6, 9, 10, 12, 16, 18.
* **Edge count** ``M`` of a tree is the number of its edges in its composite slide; its
  **edge rate** ``E = M / CS`` edges per time unit (Example 2: 2/9 = 0.22 and 2/6 = 0.33).
* **Common edges** ``Mc`` of two trees: the edges both have in ``CS_xy = lcm(CS_x, CS_y)``
  (Example 4: slides 5 (edges 2, 5) and 3 (edge 3) have 2 common edges, 12 and 15, in 15);
  ``M_xy = M_x * CS_xy / CS_x + M_y * CS_xy / CS_y - Mc`` (§8).
* **Weaveability** (Definition 1): ``WV = Mc / M_xy`` (Example 2: 2/8 = 0.25).

``EdgeBitmap`` is §8's *Edges Bitmap*: bit ``p - 1`` set for an edge at position ``p`` of
``(0, CS]``, held in one Python integer. Stretching to a multiple of the composite slide
replicates the bitmap; the common edges of two trees are the collisions of the probing
tree's stretched edges in the probed tree's stretched bitmap, counted as the population of
their AND (the paper probes edge by edge; the AND does all probes at once).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.weaveshare.model import Query, grain

__all__ = ["DEFAULT_MAX_COMPOSITE", "EdgeBitmap", "common_edges", "composite_slide", "edges_of", "replicate",
           "weaveability"]

# The largest composite slide, in grains, that a bitmap may span (2 MiB of bits).
DEFAULT_MAX_COMPOSITE = 1 << 24


def composite_slide(slides: Iterable[int]) -> int:
    """The least common multiple of the slides (1 for none)."""
    return math.lcm(*slides)


def replicate(bits: int, length: int, times: int) -> int:
    """``bits`` (a bitmap of ``length`` bits) repeated ``times`` times, by doubling."""
    out, pos, block, size = 0, 0, bits, length
    while times:
        if times & 1:
            out |= block << pos
            pos += size
        times >>= 1
        if times:
            block |= block << size
            size *= 2
    return out


@dataclass(frozen=True)
class EdgeBitmap:
    """A tree's edges over its composite slide ``length`` (grains); ``count`` set bits."""

    length: int
    bits: int
    count: int

    @classmethod
    def of_query(cls, q: Query, grain: int = 1) -> EdgeBitmap:
        """A query's edges in one slide (a tree of one query: at most two edges hashed)."""
        if q.slide % grain or q.within % grain:
            raise OptimizerError(f"query {q.name}: range and slide must be multiples of {grain}")
        bits = 0
        for p in q.offsets:
            bits |= 1 << (p // grain - 1)
        return cls(q.slide // grain, bits, bits.bit_count())

    @classmethod
    def of_queries(cls, queries: Iterable[Query], grain: int = 1,
                   limit: int = DEFAULT_MAX_COMPOSITE) -> EdgeBitmap:
        """The edges of a tree of these queries (one or more)."""
        out: EdgeBitmap | None = None
        for q in queries:
            b = cls.of_query(q, grain)
            out = b if out is None else out.union(b, limit)
        if out is None:
            raise OptimizerError("a tree needs at least one query")
        return out

    @property
    def rate(self) -> float:
        """Edges per grain: ``M / CS``."""
        return self.count / self.length

    def stretch(self, length: int) -> int:
        """The bitmap replicated over ``length`` (a multiple of ``self.length``)."""
        if length % self.length:
            raise ValueError(f"{length} is not a multiple of the composite slide {self.length}")
        return replicate(self.bits, self.length, length // self.length)

    def merged_length(self, other: EdgeBitmap, limit: int = DEFAULT_MAX_COMPOSITE) -> int | None:
        """``lcm`` of the two composite slides, or None above ``limit``."""
        n = math.lcm(self.length, other.length)
        return n if n <= limit else None

    def common(self, other: EdgeBitmap, limit: int = DEFAULT_MAX_COMPOSITE) -> tuple[int, int] | None:
        """``(CS_xy, Mc)``: the merged composite slide and the common edges in it, or None
        when ``CS_xy`` exceeds ``limit``: §8's probes of one tree's edges into the other's
        bitmap, all at once."""
        n = self.merged_length(other, limit)
        if n is None:
            return None
        return n, (self.stretch(n) & other.stretch(n)).bit_count()

    def union(self, other: EdgeBitmap, limit: int = DEFAULT_MAX_COMPOSITE) -> EdgeBitmap:
        """The merged tree's edges; ``OptimizerError`` when its composite slide exceeds
        ``limit``."""
        n = self.merged_length(other, limit)
        if n is None:
            raise OptimizerError(f"composite slide lcm({self.length}, {other.length}) grains "
                                 f"exceeds the limit of {limit} grains")
        bits = self.stretch(n) | other.stretch(n)
        return EdgeBitmap(n, bits, bits.bit_count())

    def merged_count(self, other: EdgeBitmap, limit: int = DEFAULT_MAX_COMPOSITE) -> tuple[int, int] | None:
        """``(CS_xy, M_xy)`` without building the merged bitmap (§8's count), or None."""
        c = self.common(other, limit)
        if c is None:
            return None
        n, mc = c
        return n, self.count * (n // self.length) + other.count * (n // other.length) - mc

    def reduced(self) -> tuple[int, int]:
        """``(period, bits)`` of the edge set over its smallest period: two trees have the
        same edges exactly when these are equal (``{0, 1} mod 2`` is ``{0} mod 1``)."""
        n = self.length
        small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
        for d in small + [n // d for d in reversed(small)]:
            head = self.bits & ((1 << d) - 1)
            if replicate(head, d, n // d) == self.bits:
                return d, head
        return n, self.bits  # not reached: d = n always matches

    def positions(self) -> Iterator[int]:
        """The edge positions of ``(0, CS]``, in grains, ascending."""
        for i, c in enumerate(reversed(bin(self.bits)[2:])):
            if c == "1":
                yield i + 1


# ---- on query sets, in time units -------------------------------------------------------

def _grain(*groups: Iterable[Query]) -> int:
    return grain(q for g in groups for q in g)


def edges_of(queries: Iterable[Query], limit: int = DEFAULT_MAX_COMPOSITE) -> tuple[int, tuple[int, ...]]:
    """``(CS, edges)`` of a tree of these queries: the composite slide and its edge
    positions of ``(0, CS]``, in time units."""
    qs = tuple(queries)
    g = _grain(qs)
    b = EdgeBitmap.of_queries(qs, g, limit)
    return b.length * g, tuple(p * g for p in b.positions())


def common_edges(x: Iterable[Query], y: Iterable[Query],
                 limit: int = DEFAULT_MAX_COMPOSITE) -> tuple[int, int, int]:
    """``(CS_xy, Mc, M_xy)`` of two trees (Example 4): the merged composite slide (time
    units), the edges the two trees have in common in it, and the merged tree's edges."""
    xs, ys = tuple(x), tuple(y)
    g = _grain(xs, ys)
    bx, by = EdgeBitmap.of_queries(xs, g, limit), EdgeBitmap.of_queries(ys, g, limit)
    c = bx.common(by, limit)
    if c is None:
        raise OptimizerError(f"composite slide lcm({bx.length}, {by.length}) grains exceeds "
                             f"the limit of {limit} grains")
    n, mc = c
    return n * g, mc, bx.count * (n // bx.length) + by.count * (n // by.length) - mc


def weaveability(x: Iterable[Query], y: Iterable[Query],
                 limit: int = DEFAULT_MAX_COMPOSITE) -> Fraction:
    """Definition 1: common edges over the merged tree's edges, ``Mc / M_xy``."""
    _, mc, total = common_edges(x, y, limit)
    return Fraction(mc, total)
