"""T-CET (dissertation §5.2): a breadth-first pass storing partial trends.

CPU-optimized: vertices are visited in time order and every prefix that may be
extended is stored at its last vertex, so an edge is traversed once and extends
all the prefixes at its source together. A trend is emitted when its last
vertex is reached: in time order of the last event. The stored prefixes are
what T-CET's memory holds (``stats``).
"""

from __future__ import annotations

from collections.abc import Iterator

from trendlake.engine.trends.graph import Paths

__all__ = ["t_cet"]


def t_cet(paths: Paths, stats: dict[str, int] | None = None) -> Iterator[tuple[int, ...]]:
    """Every trend of ``paths`` as a tuple of vertex indices. ``stats`` (if given) counts
    ``edges`` traversed, ``updates`` (prefixes made), ``stored`` prefixes and their
    ``occurrences`` (events over all of them)."""
    ext: list[list[tuple[int, ...]]] = [[] for _ in range(len(paths))]
    edges = updates = stored = occurrences = 0
    try:
        for v in range(len(paths)):
            if paths.first1[v]:
                yield (v,)
            longer: list[tuple[int, ...]] = []
            for u in paths.pred[v]:
                edges += 1
                for p in ext[u]:
                    longer.append(p + (v,))
            updates += len(longer) + int(paths.first1[v] or paths.first[v])
            if paths.last[v]:
                yield from longer
            if paths.succ[v]:
                keep = ([(v,)] if paths.first[v] else []) + (longer if paths.mid[v] else [])
                ext[v] = keep
                stored += len(keep)
                occurrences += sum(len(p) for p in keep)
    finally:
        if stats is not None:
            stats.update(edges=edges, updates=updates, stored=stored, occurrences=occurrences)
