"""What every stream model shares: seeded randomness, the bursty type chain, the clock, the model base.

A stream model (one module per stream in this package) subclasses ``Model``
and fills the attribute columns of a segment of events whose types
(``TypeChain``) and times (``Clock``) are already drawn; ``StreamSpec`` is its
registry entry (defaults, parameters, the paper or data set it imitates).
Every random draw comes from ``seeded_rng(seed, stream, *keys)``, a generator
independent of every other purpose and segment (docs/generators.md).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

SEGMENT_EVENTS = 1 << 18  # internal generation unit; never depends on chunk_size
NONE = np.int64(-(2**62))  # "not yet" for a µs timestamp
INF = np.int64(2**62)
US = 1_000_000

# ---------------------------------------------------------------------------- helpers


def text_tag(text: str) -> int:
    """A stable integer for a text key of a random generator (CRC-32)."""
    return zlib.crc32(text.encode())


def seeded_rng(seed: int, stream: str, *keys: int | str) -> np.random.Generator:
    """A generator for one purpose of one segment: independent of every other draw."""
    words = [int(seed), text_tag(stream)] + [(text_tag(k) if isinstance(k, str) else int(k)) for k in keys]
    return np.random.default_rng(words)


def splitmix(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing hash (splitmix64 finaliser) of uint64 values."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def hash_ints(*parts: np.ndarray | int) -> np.ndarray:
    """A stable hash of aligned integer arrays (or scalars), as uint64."""
    h = np.uint64(0x12345678)
    out: Any = None
    for p in parts:
        v = np.asarray(p).astype(np.int64).astype(np.uint64)
        out = splitmix((h if out is None else out) ^ v)
    return np.asarray(out, dtype=np.uint64)


def unit_float(h: np.ndarray) -> np.ndarray:
    """uint64 hash -> float in [0, 1)."""
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def group_cumsum(keys: np.ndarray, values: np.ndarray, state: np.ndarray) -> np.ndarray:
    """Per-key running sum of ``values`` in event order, starting from ``state[key]``; updates ``state``."""
    if keys.size == 0:
        return values.astype(np.float64)
    order = np.argsort(keys, kind="stable")
    k, v = keys[order], values[order].astype(np.float64)
    cs = np.cumsum(v)
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    lengths = np.diff(np.r_[starts, k.size])
    base = np.repeat(cs[starts] - v[starts], lengths)
    run = cs - base + state[k]
    ends = np.r_[starts[1:], k.size] - 1
    state[k[ends]] = run[ends]
    out = np.empty_like(run)
    out[order] = run
    return out


def weighted_choice(rng: np.random.Generator, n: int, weights: np.ndarray) -> np.ndarray:
    """``n`` indices drawn with the given (unnormalised) weights."""
    cdf = np.cumsum(np.asarray(weights, dtype=np.float64))
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), cdf.size - 1)


def parse_start(start: str | datetime | int | float) -> int:
    """µs since the epoch (UTC) of an ISO-8601 text (UTC unless an offset is given), a datetime or epoch seconds."""
    if isinstance(start, datetime):
        dt = start if start.tzinfo else start.replace(tzinfo=UTC)
        delta = dt - datetime(1970, 1, 1, tzinfo=UTC)
        return (delta.days * 86_400 + delta.seconds) * US + delta.microseconds
    if isinstance(start, (int, float)) and not isinstance(start, bool):
        return int(round(float(start) * US))
    text = str(start).strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"start {start!r} is not an ISO-8601 time (like 2026-01-01T00:00:00Z)") from None
    return parse_start(dt)


@dataclass
class Col:
    """One attribute column of a segment: numbers, or codes into ``vocab``; ``valid`` marks non-null."""

    values: np.ndarray
    vocab: list[str] | None = None
    valid: np.ndarray | None = None


# ---------------------------------------------------------------------------- type and time sequences


class TypeChain:
    """The bursty type sequence: runs of one type, lengths geometric, run types a Markov chain.

    With ``p`` the wanted type mix and ``B`` the mean burst length, run types
    follow the chain "draw from ``w`` until the type differs from the last run's
    type" (P(i -> j) = w_j / (1 - w_i)), whose stationary distribution is
    proportional to w_i (1 - w_i). ``w`` is solved so that it equals ``p``;
    every run then has mean length ``B``. When one type is more than about half
    of the mix this is impossible, and the runs of frequent types are made
    longer instead (w = p, L_i = B (1 - sum p^2) / (1 - p_i)); that needs
    ``B`` at least a minimum, reported in the error.
    """

    def __init__(self, names: list[str], weights: np.ndarray, burst: float) -> None:
        if not burst >= 1.0 or not math.isfinite(burst):
            raise ValueError(f"burst (mean burst length) must be >= 1, got {burst!r}")
        p = np.asarray(weights, dtype=np.float64)
        if (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
            raise ValueError("type mix weights must be finite, >= 0 and not all 0")
        p = p / p.sum()
        self.names = names
        self.present = np.flatnonzero(p > 0)
        self.p = p
        self.single = self.present.size == 1
        self.lengths = np.full(p.size, float(burst))
        self.w = p.copy()
        if not self.single:
            q = p[self.present]
            w = self._solve(q)
            if w is not None:
                self.w = np.zeros_like(p)
                self.w[self.present] = w
            else:
                z = 1.0 - float((q * q).sum())
                lengths = burst * z / (1.0 - q)
                if lengths.min() < 1.0 - 1e-9:
                    minimum = float(((1.0 - q) / z).max())
                    raise ValueError(
                        f"burst {burst} is too small for this type mix (one type is {q.max():.0%} of it): "
                        f"consecutive bursts have different types, so the mean burst length is at least {minimum:.3f}"
                    )
                self.lengths[self.present] = np.maximum(lengths, 1.0)
        self.cdf = np.cumsum(self.w)
        self.cdf /= self.cdf[-1]
        self.current = -1  # type of the run in progress
        self.left = 0  # events left in it

    @staticmethod
    def _solve(q: np.ndarray) -> np.ndarray | None:
        """Chain weights w with w_i (1 - w_i) proportional to q_i and sum 1, or None (a type > 1/2).

        w_i = (1 -/+ sqrt(1 - 4 c q_i)) / 2; all types take the small root, or
        the most frequent one the large root (needed when it is close to half).
        """
        c_max = 1.0 / (4.0 * float(q.max()))
        top = int(np.argmax(q))
        if q[top] > 0.5 + 1e-12:
            return None

        def w_of(c: float, big: bool) -> np.ndarray:
            root = np.sqrt(np.maximum(1.0 - 4.0 * c * q, 0.0))
            w = (1.0 - root) / 2.0
            if big:
                w[top] = (1.0 + root[top]) / 2.0
            return w

        big = w_of(c_max, False).sum() < 1.0
        lo, hi = 0.0, c_max  # small roots: sum rises with c; large root: sum falls with c
        for _ in range(200):
            mid = (lo + hi) / 2
            s = w_of(mid, big).sum()
            if (s < 1.0) != big:
                lo = mid
            else:
                hi = mid
        w = w_of((lo + hi) / 2, big)
        w = np.maximum(w, 0.0)
        w = w / w.sum()
        if w.max() > 0.95:
            # a type at (or within a hair of) half the mix: the exact chain degenerates towards
            # "always the top type" (w_top -> 1), whose runs the sampler can then take forever
            # to leave; the unequal-lengths fallback gives the same mix and mean burst
            return None
        return w

    def take(self, n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty(n, dtype=np.int32)
        if self.single:
            out[:] = self.present[0]
            return out
        filled = 0
        if self.left > 0:
            k = min(self.left, n)
            out[:k] = self.current
            self.left -= k
            filled = k
        while filled < n:
            need = n - filled
            draws = max(64, int(need / float(self.lengths[self.present].min())) // 2 + 64)
            cand = np.minimum(np.searchsorted(self.cdf, rng.random(draws), side="right"), self.cdf.size - 1)
            prev = np.r_[self.current, cand[:-1]]
            runs = cand[cand != prev].astype(np.int32)
            if runs.size == 0:
                continue
            probs = 1.0 / self.lengths[runs]
            lens = rng.geometric(probs).astype(np.int64)
            ends = np.cumsum(lens)
            last = int(np.searchsorted(ends, need, side="left"))
            if last >= runs.size:  # not enough yet: use them all and go on
                out[filled : filled + int(ends[-1])] = np.repeat(runs, lens)
                filled += int(ends[-1])
                self.current, self.left = int(runs[-1]), 0
                continue
            runs, lens = runs[: last + 1], lens[: last + 1].copy()
            over = int(ends[last]) - need
            lens[-1] -= over
            out[filled:] = np.repeat(runs, lens)
            filled = n
            self.current, self.left = int(runs[-1]), over
        return out


class Clock:
    """Poisson arrivals at ``rate`` per second from ``start_us`` (first event exactly at start)."""

    def __init__(self, start_us: int, rate: float) -> None:
        if not rate > 0 or not math.isfinite(rate):
            raise ValueError(f"rate_per_second must be > 0, got {rate!r}")
        self.start_us = start_us
        self.mean_gap = US / float(rate)
        self.acc = 0.0
        self.first = True

    def take(self, n: int, rng: np.random.Generator) -> np.ndarray:
        gaps = rng.exponential(self.mean_gap, n)
        if self.first and n:
            gaps[0] = 0.0
            self.first = False
        acc = self.acc + np.cumsum(gaps)
        if n:
            self.acc = float(acc[-1])
        return self.start_us + np.floor(acc).astype(np.int64)


# ---------------------------------------------------------------------------- stream models


@dataclass
class Context:
    stream: str
    seed: int
    start_us: int
    rate: float
    types: list[str]
    code: dict[str, int]
    params: dict[str, Any]

    def rng(self, *keys: int | str) -> np.random.Generator:
        return seeded_rng(self.seed, self.stream, *keys)


class Model:
    """Fills the attributes of one segment of events whose types and times are given."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        raise NotImplementedError


def round_to(x: np.ndarray, digits: int) -> np.ndarray:
    return np.round(x, digits)


def taxi_fare(km: np.ndarray, minutes: np.ndarray) -> np.ndarray:
    """A metered fare: flag fall, per km and per minute."""
    return 2.5 + 1.6 * km + 0.35 * minutes


@dataclass(frozen=True)
class StreamSpec:
    """A generator: its stream schema name, defaults, and the model filling attributes."""

    name: str
    description: str
    source: str  # the paper / data set it imitates
    rate: float  # default events per second
    burst: float  # default mean burst length
    mix: Mapping[str, float]  # default type weights (types not named get 0)
    params: Mapping[str, Any] = field(default_factory=dict)  # model parameters and their defaults
    model: Callable[[Context], Model] = Model

    def schema(self) -> dict[str, Any]:
        """The bundled stream schema of this stream."""
        from trendlake.schemas import load_stream_schema

        return load_stream_schema(self.name)

