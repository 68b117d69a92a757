"""H-CET (dissertation §5.3): T-CET inside time-centric graphlets, M-CET across them.

A partitioning is a sorted list of *cuts*: a cut ``c`` ends a graphlet after the
vertices' time stamp number ``c`` (``Paths.group``), so graphlets are
consecutive time intervals and every path visits each at most once (an
*effective* partitioning, §6.1).

Step 1 runs T-CET in each graphlet and caches its *segments*: the paths inside
the graphlet from an entry (a vertex where a trend starts, or one entered by a
cut edge) to an exit (a vertex where a trend ends, or one left by a cut edge).
At cuts meeting Def. 6.2 an entry is a first and an exit a last vertex of its
graphlet, so the cache holds the graphlet's complete trends only; any other
time-centric partitioning is still correct, the cache is just larger.

Step 2 stitches segments depth-first across cut edges (M-CET over segments):
trends come out in the same lexicographic order as M-CET's.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterator, Sequence

from trendlake.engine.trends.graph import Paths

__all__ = ["entries", "graphlet_of", "h_cet", "segments"]

FIRST, ENTERED = 0, 1  # how a segment's first vertex is reached: a trend starts there, a cut edge
END, EXIT = 0, 1  # how a segment ends: its trend ends, it leaves by a cut edge


def graphlet_of(paths: Paths, cuts: Sequence[int]) -> list[int]:
    """Per vertex, the index of its graphlet under ``cuts``."""
    cuts = sorted(cuts)
    return [bisect.bisect_left(cuts, g) for g in paths.group]


def _ends(paths: Paths, v: int, role: int, single: bool) -> bool:
    if not single:
        return paths.last[v]
    return paths.first1[v] if role == FIRST else paths.last[v]


def _follows(paths: Paths, v: int, role: int, single: bool) -> bool:
    if not single:
        return paths.mid[v]
    return paths.first[v] if role == FIRST else paths.mid[v]


Segments = dict[tuple[int, int], list[tuple[tuple[int, ...], int]]]


def entries(paths: Paths, gl: list[int], v: int) -> list[int]:
    """The roles (FIRST, ENTERED) in which a segment may begin at ``v``."""
    out = [FIRST] if paths.first1[v] or paths.first[v] else []
    if any(gl[u] < gl[v] for u in paths.pred[v]):
        out.append(ENTERED)
    return out


def segments(
    paths: Paths, gl: list[int], members: list[int], stats: dict[str, int],
    only: Collection[tuple[int, int]] | None = None,
) -> Segments:
    """T-CET inside one graphlet (its vertices ``members``, in time order): per entry
    (vertex, FIRST | ENTERED) its segments (path, END | EXIT) in M-CET's order; with
    ``only``, the segments of those entries alone."""
    ext: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    out: Segments = {}
    for v in members:
        here = [(role, (v,)) for role in entries(paths, gl, v) if only is None or (v, role) in only]
        for u in paths.pred[v]:
            if gl[u] == gl[v]:
                stats["edges"] += 1
                here.extend((role, p + (v,)) for role, p in ext.get(u, ()))
        stats["updates"] += len(here)
        inner = any(gl[w] == gl[v] for w in paths.succ[v])
        leaves = any(gl[w] > gl[v] for w in paths.succ[v])
        keep = []
        for role, p in here:
            single = len(p) == 1
            if _ends(paths, v, role, single):
                out.setdefault((p[0], role), []).append((p, END))
            if _follows(paths, v, role, single):
                if leaves:
                    out.setdefault((p[0], role), []).append((p, EXIT))
                if inner:
                    keep.append((role, p))
        if keep:
            ext[v] = keep
            stats["prefixes"] += len(keep)
            stats["prefix_occurrences"] += sum(len(p) for _, p in keep)
    n = len(paths)
    for segs in out.values():
        # M-CET's order: a trend ending at b first, then its extensions inside the
        # graphlet, then the ones leaving by a cut edge (their next vertex is later)
        segs.sort(key=lambda s: (*s[0], -1 if s[1] == END else n))
        stats["stored"] += len(segs)
        stats["occurrences"] += sum(len(p) for p, _ in segs)
    return out


GraphletSource = Callable[[Paths, list[int], list[int], dict[str, int]], Segments]


def h_cet(
    paths: Paths, cuts: Sequence[int], stats: dict[str, int] | None = None, source: GraphletSource = segments,
) -> Iterator[tuple[int, ...]]:
    """Every trend of ``paths`` under the partitioning ``cuts``, as tuples of vertex indices.
    ``stats`` (if given) counts ``edges`` and ``updates`` inside graphlets, ``stored``
    segments and their ``occurrences``, the largest graphlet's stored ``prefixes`` and
    ``prefix_occurrences`` while its T-CET ran, and ``stitches`` (segments concatenated).
    ``source(paths, gl, members, stats)`` gives each graphlet's segments (``segments``; the
    graphlet cache shared across windows, ``sharing``)."""
    gl = graphlet_of(paths, cuts)
    members: dict[int, list[int]] = {}
    for v, g in enumerate(gl):
        members.setdefault(g, []).append(v)
    count = dict.fromkeys(("edges", "updates", "stored", "occurrences", "stitches"), 0)
    peak = {"prefixes": 0, "prefix_occurrences": 0}
    cache: Segments = {}
    for g in sorted(members):
        local = dict.fromkeys(("edges", "updates", "prefixes", "prefix_occurrences", "stored", "occurrences"), 0)
        cache.update(source(paths, gl, members[g], local))
        for k in ("edges", "updates", "stored", "occurrences"):
            count[k] += local[k]
        for k in peak:
            peak[k] = max(peak[k], local[k])
    try:
        for v in range(len(paths)):
            if (v, FIRST) in cache:
                yield from _stitch(paths, gl, cache, (v, FIRST), (), count)
    finally:
        if stats is not None:
            stats.update(count)
            stats.update(peak)


def _stitch(
    paths: Paths, gl: list[int], cache: Segments, entry: tuple[int, int], prefix: tuple[int, ...], count: dict[str, int]
) -> Iterator[tuple[int, ...]]:
    for p, kind in cache.get(entry, ()):
        count["stitches"] += 1
        trend = prefix + p
        if kind == END:
            yield trend
            continue
        b = p[-1]
        for w in paths.succ[b]:
            if gl[w] > gl[b]:
                yield from _stitch(paths, gl, cache, (w, ENTERED), trend, count)
