"""M-CET (dissertation §5.2): depth-first search with backtracking over the graph.

Memory-optimized: only the current trend (one path and its iterators) is held;
an edge is traversed again for every trend through it. Trends come out in
lexicographic order of their vertices (time order of the first event, then of
the second, ...), a prefix before its extensions, one at a time, so a caller
can stop after any number of them.
"""

from __future__ import annotations

from collections.abc import Iterator

from trendlake.engine.trends.graph import Paths

__all__ = ["m_cet"]


def m_cet(paths: Paths, stats: dict[str, int] | None = None) -> Iterator[tuple[int, ...]]:
    """Every trend of ``paths`` as a tuple of vertex indices. ``stats`` (if given) counts
    ``steps`` (prefixes visited: edge traversals) and ``stack`` (the longest path held)."""
    steps = stack = 0
    try:
        for v in range(len(paths)):
            if paths.first1[v]:
                steps += 1
                stack = max(stack, 1)
                yield (v,)
            if not paths.first[v] or not paths.succ[v]:
                continue
            steps += 1
            path = [v]
            iters = [iter(paths.succ[v])]
            while iters:
                w = next(iters[-1], None)
                if w is None:
                    iters.pop()
                    path.pop()
                    continue
                path.append(w)
                steps += 1
                stack = max(stack, len(path))
                if paths.last[w]:
                    yield tuple(path)
                if paths.mid[w] and paths.succ[w]:
                    iters.append(iter(paths.succ[w]))
                else:
                    path.pop()
    finally:
        if stats is not None:
            stats.update(steps=steps, stack=stack)
