"""The cost model of CET detection (dissertation Table 5.1, §6.2), counted exactly.

Table 5.1 bounds the costs by the worst case (``3^(|V|/3)`` trends of ``|V|``
events, :func:`table_5_1`); Example 5.2 computes with it. Planning a real window
with such bounds would refuse almost every window, so :func:`cost` counts, by
dynamic programming over the graph (linear in its size, no trend is built), the
very quantities the algorithms spend (their ``stats``):

* CPU (Table 5.1's terms, each counted instead of bounded; ``y`` trends):
  - M-CET: every prefix visited, once traversed and once updated (``2 * steps``);
  - T-CET: every edge once plus every trend (``|E| + y``);
  - H-CET: the edges inside graphlets, the trends of each graphlet (the segments
    it caches) and, per cut, every trend concatenated and traversed again
    (``sum |E_i| + sum y_i + 2 (k - 1) y``): with no cut it is T-CET's, and a
    cut adds ``2y`` while saving at most ``2y`` (a trend crosses a cut by one
    edge and lies in one segment of a graphlet), so CPU never decreases from
    parent to child (Theorem 6.2).
  Each algorithm's ``stats`` count what it really did (prefixes made, stitches);
  ``cost`` returns those counts too, so tests hold the model to the code.
* Memory (bytes): the graph, plus
  - M-CET: the current path;
  - T-CET: every stored prefix;
  - H-CET: every cached segment, the largest graphlet's T-CET prefixes while it
    runs, and the current trend. In events stored (``occurrences``) it never
    grows from parent to child (Theorem 6.1); in bytes a cut that splits off a
    graphlet whose segments are single trends adds their per-trend overhead.

A stored partial trend costs ``BYTES_PER_TREND`` plus ``BYTES_PER_OCCURRENCE``
per event in it (a tuple of vertex indices, 40 bytes plus 8 per event, in a pair
with its kind and a list slot: Python's sizes, rounded up).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from trendlake.engine.trends.graph import BYTES_PER_EDGE, BYTES_PER_VERTEX, Paths

__all__ = ["BYTES_PER_OCCURRENCE", "BYTES_PER_TREND", "Cost", "cost", "output_bytes", "table_5_1"]

BYTES_PER_TREND = 128
BYTES_PER_OCCURRENCE = 8


@dataclass(frozen=True)
class Cost:
    """What one algorithm spends on one graph: the counts of its ``stats``, ``cpu`` (abstract
    operations) and ``memory`` (bytes, graph included)."""

    algorithm: str
    cuts: tuple[int, ...]
    trends: int
    cpu: int
    memory: int
    stored: int = 0  # partial trends held (prefixes or cached segments)
    occurrences: int = 0  # their events
    steps: int = 0  # M-CET: prefixes visited
    edges: int = 0  # edges traversed inside graphlets
    updates: int = 0  # prefixes made inside graphlets
    stitches: int = 0  # H-CET: segments concatenated across graphlets
    prefixes: int = 0  # H-CET: the largest graphlet's T-CET prefixes
    prefix_occurrences: int = 0

    @property
    def graphlets(self) -> int:
        return len(self.cuts) + 1


def _graph(paths: Paths, vertices: int, edges: int) -> tuple[int, int]:
    """CPU and memory of the graph itself (the same for every algorithm)."""
    return vertices * vertices, BYTES_PER_VERTEX * vertices + BYTES_PER_EDGE * edges


def _stored(n: int, occ: int) -> int:
    return BYTES_PER_TREND * n + BYTES_PER_OCCURRENCE * occ


def cost(paths: Paths, algorithm: str, cuts: Sequence[int] = (), graph: tuple[int, int] | None = None) -> Cost:
    """The exact cost of ``algorithm`` (``m-cet``, ``t-cet``, ``h-cet`` under ``cuts``) on
    ``paths``; ``graph`` = (vertices, edges) of the CET graph (default: ``paths``')."""
    vertices, edges = graph if graph is not None else (len(paths), paths.edges)
    g_cpu, g_mem = _graph(paths, vertices, edges)
    stack = BYTES_PER_TREND + BYTES_PER_OCCURRENCE * paths.longest()
    if algorithm == "m-cet":
        steps, trends = _mcet_steps(paths)
        return Cost("m-cet", (), trends, g_cpu + 2 * steps, g_mem + stack, steps=steps)
    if algorithm == "t-cet":
        c = _hcet_counts(paths, ())
        return Cost("t-cet", (), c["trends"], g_cpu + c["edges"] + c["trends"],
                    g_mem + _stored(c["prefixes"], c["prefix_occurrences"]),
                    stored=c["prefixes"], occurrences=c["prefix_occurrences"], edges=c["edges"],
                    updates=c["updates"])
    if algorithm == "h-cet":
        cuts = tuple(sorted(cuts))
        c = _hcet_counts(paths, cuts)
        memory = g_mem + _stored(c["stored"], c["occurrences"]) + _stored(c["prefixes"], c["prefix_occurrences"]) + stack
        cpu = g_cpu + c["edges"] + c["stored"] + 2 * len(cuts) * c["trends"]
        return Cost("h-cet", cuts, c["trends"], cpu, memory,
                    stored=c["stored"], occurrences=c["occurrences"], edges=c["edges"], updates=c["updates"],
                    stitches=c["stitches"], prefixes=c["prefixes"], prefix_occurrences=c["prefix_occurrences"])
    raise ValueError(f"unknown algorithm {algorithm!r}")


def _mcet_steps(paths: Paths) -> tuple[int, int]:
    """M-CET's visited prefixes and the number of trends."""
    ext = [0] * len(paths)
    steps = trends = 0
    for v in range(len(paths)):
        longer = sum(ext[u] for u in paths.pred[v])
        steps += int(paths.first1[v]) + int(paths.first[v] and bool(paths.succ[v])) + longer
        trends += int(paths.first1[v]) + (longer if paths.last[v] else 0)
        if paths.succ[v]:
            ext[v] = int(paths.first[v]) + (longer if paths.mid[v] else 0)
    return steps, trends


def _hcet_counts(paths: Paths, cuts: Sequence[int]) -> dict[str, int]:
    """H-CET's ``stats`` (T-CET's with no cut: its stored prefixes are ``prefixes``)."""
    gl = [bisect.bisect_left(cuts, g) for g in paths.group]
    n = len(paths)
    cnt, occ, wt = [0] * n, [0] * n, [0] * n  # extendable prefixes inside the graphlet
    exits = [0] * n  # stitch weight leaving by cut edges from v
    out = dict.fromkeys(("trends", "edges", "updates", "stored", "occurrences", "stitches"), 0)
    prefixes: dict[int, list[int]] = {}
    for v in range(n):
        inner = any(gl[w] == gl[v] for w in paths.succ[v])
        leaves = any(gl[w] > gl[v] for w in paths.succ[v])
        cases = []  # (count, occurrences, stitch weight, ends, follows)
        if paths.first1[v] or paths.first[v]:
            cases.append((1, 1, 1, paths.first1[v], paths.first[v]))
        entered = [u for u in paths.pred[v] if gl[u] < gl[v]]
        if entered:
            cases.append((1, 1, sum(exits[u] for u in entered), paths.last[v], paths.mid[v]))
        same = [u for u in paths.pred[v] if gl[u] == gl[v]]
        out["edges"] += len(same)
        lc = sum(cnt[u] for u in same)
        cases.append((lc, sum(occ[u] + cnt[u] for u in same), sum(wt[u] for u in same), paths.last[v], paths.mid[v]))
        for c, o, w, ends, follows in cases:
            out["updates"] += c
            n_seg = int(ends) + int(follows and leaves)
            out["stored"] += c * n_seg
            out["occurrences"] += o * n_seg
            out["stitches"] += w * n_seg
            if ends:
                out["trends"] += w
            if follows and leaves:
                exits[v] += w
            if follows and inner:
                cnt[v] += c
                occ[v] += o
                wt[v] += w
        p = prefixes.setdefault(gl[v], [0, 0])
        p[0] += cnt[v]
        p[1] += occ[v]
    # the largest graphlet's prefixes and, separately, their largest number of events
    out["prefixes"] = max((p[0] for p in prefixes.values()), default=0)
    out["prefix_occurrences"] = max((p[1] for p in prefixes.values()), default=0)
    return out


def output_bytes(paths: Paths, limit: int | None = None) -> int:
    """Memory to hold the trends a caller keeps: all of them, or ``limit`` of the longest."""
    if limit is not None:
        return _stored(limit, limit * paths.longest())
    n, occ = _totals(paths)
    return _stored(n, occ)


def _totals(paths: Paths) -> tuple[int, int]:
    """The number of trends and of events over all of them."""
    cnt, occ = [0] * len(paths), [0] * len(paths)
    n = total = 0
    for v in range(len(paths)):
        lc = sum(cnt[u] for u in paths.pred[v])
        lo = sum(occ[u] + cnt[u] for u in paths.pred[v])
        if paths.first1[v]:
            n, total = n + 1, total + 1
        if paths.last[v]:
            n, total = n + lc, total + lo
        cnt[v] = int(paths.first[v]) + (lc if paths.mid[v] else 0)
        occ[v] = int(paths.first[v]) + (lo if paths.mid[v] else 0)
    return n, total


def table_5_1(vertices: int, edges: int, graphlets: Sequence[tuple[int, int]] = ()) -> dict[str, tuple[float, float]]:
    """Table 5.1's worst-case (CPU, memory) of M-CET, T-CET and, over ``graphlets`` (their
    (vertices, edges)), H-CET: ``3^(|V|/3)`` trends of ``|V|`` events at most."""
    v, e = vertices, edges
    y = 3 ** (v / 3)
    out = {
        "m-cet": (v * v + y * v + y * v, v + e + v),
        "t-cet": (v * v + e + y, v + e + y * v),
    }
    if graphlets:
        k = len(graphlets)
        cpu = v * v + sum(ei for _, ei in graphlets) + sum(3 ** (vi / 3) for vi, _ in graphlets) + 2 * y * k
        mem = v + e + sum(3 ** (vi / 3) * vi for vi, _ in graphlets) + v
        out["h-cet"] = (cpu, mem)
    return out


def log3_bound(vertices: int) -> float:
    """Theorem 3.1: at most ``3^(n/3)`` complete trends of ``n`` events (as a float)."""
    return math.pow(3, vertices / 3)
