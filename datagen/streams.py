"""Seeded synthetic event streams (``trendlake generate``), shaped after the papers' data sets.

``generate(stream, events, seed)`` yields time-ordered ``pyarrow.Table`` chunks
with the columns ``type``, ``ts`` (timestamp[us, UTC]) and every attribute of
the stream schema (``schemas/streams/<stream>.json``), null where an event
type does not carry the attribute. ``write_events`` streams the chunks to a
Parquet, CSV or JSON-lines file; ``measure`` reports what a table really has
(rate, type mix, mean burst length) so tests can hold the output to the
parameters.

How a stream is made (docs/generators.md has the details and the per-stream
models):

* **Types.** The type sequence is a chain of *bursts* (maximal runs of one
  type). Consecutive bursts have different types; burst lengths are geometric
  with mean ``burst``; the burst types follow a Markov chain whose stationary
  distribution is the type mix, so the event mix is the requested mix and the
  mean burst length is the requested ``burst``.
* **Time.** A Poisson process of ``rate_per_second`` events per second from
  ``start`` (the first event is at ``start``), µs precision.
* **Attributes.** A per-stream model fills them: trip lifecycles for ``rides``,
  per-company random-walk prices for ``stocks``, vehicles on a road for
  ``linear_road``, plugs for ``smart_home`` and so on.
* **Determinism.** Events are made in fixed internal segments of
  ``SEGMENT_EVENTS`` events, each with its own random generator derived from
  (seed, stream, segment number); ``chunk_size`` only re-slices the output, so
  the same seed and parameters give the same events at any chunk size and the
  same bytes in a file.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SEGMENT_EVENTS = 1 << 18  # internal generation unit; never depends on chunk_size
FORMATS = ("parquet", "csv", "jsonl")
SUFFIX_FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}
ARROW_TYPES = {"long": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_()}
NONE = np.int64(-(2**62))  # "not yet" for a µs timestamp
INF = np.int64(2**62)
US = 1_000_000

__all__ = [
    "STREAMS",
    "StreamSpec",
    "arrow_schema",
    "generate",
    "measure",
    "Measure",
    "write_events",
    "write_tables",
    "add_parser",
]


# ---------------------------------------------------------------------------- helpers


def _tag(text: str) -> int:
    return zlib.crc32(text.encode())


def _rng(seed: int, stream: str, *keys: int | str) -> np.random.Generator:
    """A generator for one purpose of one segment: independent of every other draw."""
    words = [int(seed), _tag(stream)] + [(_tag(k) if isinstance(k, str) else int(k)) for k in keys]
    return np.random.default_rng(words)


def _splitmix(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing hash (splitmix64 finaliser) of uint64 values."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _hash(*parts: np.ndarray | int) -> np.ndarray:
    """A stable hash of aligned integer arrays (or scalars), as uint64."""
    h = np.uint64(0x12345678)
    out: Any = None
    for p in parts:
        v = np.asarray(p).astype(np.int64).astype(np.uint64)
        out = _splitmix((h if out is None else out) ^ v)
    return np.asarray(out, dtype=np.uint64)


def _unit(h: np.ndarray) -> np.ndarray:
    """uint64 hash -> float in [0, 1)."""
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _group_cumsum(keys: np.ndarray, values: np.ndarray, state: np.ndarray) -> np.ndarray:
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


def _choice(rng: np.random.Generator, n: int, weights: np.ndarray) -> np.ndarray:
    """``n`` indices drawn with the given (unnormalised) weights."""
    cdf = np.cumsum(np.asarray(weights, dtype=np.float64))
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), cdf.size - 1)


def _parse_start(start: str | datetime | int | float) -> int:
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
    return _parse_start(dt)


@dataclass
class Col:
    """One attribute column of a segment: numbers, or codes into ``vocab``; ``valid`` marks non-null."""

    values: np.ndarray
    vocab: list[str] | None = None
    valid: np.ndarray | None = None


# ---------------------------------------------------------------------------- type and time sequences


class _TypeChain:
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

    def __init__(self, names: list[str], weights: np.ndarray, burst: float):
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


class _Clock:
    """Poisson arrivals at ``rate`` per second from ``start_us`` (first event exactly at start)."""

    def __init__(self, start_us: int, rate: float):
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
class _Context:
    stream: str
    seed: int
    start_us: int
    rate: float
    types: list[str]
    code: dict[str, int]
    params: dict[str, Any]

    def rng(self, *keys: int | str) -> np.random.Generator:
        return _rng(self.seed, self.stream, *keys)


class _Model:
    """Fills the attributes of one segment of events whose types and times are given."""

    def __init__(self, ctx: _Context):
        self.ctx = ctx

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        raise NotImplementedError


def _round(x: np.ndarray, digits: int) -> np.ndarray:
    return np.round(x, digits)


# ---- rides ------------------------------------------------------------------------

RIDE_DISTRICTS = ("center", "north", "south", "east", "west", "airport", "harbor",
                  "midtown", "uptown", "university", "stadium", "suburbs")
# mean traffic speed (km/h) per district: slow downtown, fast to the airport
RIDE_SPEEDS = (14.0, 26.0, 24.0, 28.0, 30.0, 45.0, 22.0, 16.0, 27.0, 20.0, 25.0, 38.0)
RIDE_VENDORS = ["alpha", "beta", "gamma"]
DRIVER_ONLY = ("Surge", "Login", "Logout", "Idle", "Refuel", "Break")
FATE_DONE, FATE_CANCEL_EARLY, FATE_CANCEL_LATE = 0, 1, 2

_TRIP_FIELDS = {
    "tid": np.int64, "driver": np.int64, "rider": np.int64, "district": np.int64, "fate": np.int8,
    "pu_zone": np.int64, "do_zone": np.int64, "passengers": np.int64, "est_price": np.float64,
    "speed": np.float64, "req": np.int64, "acc": np.int64, "canc": np.int64, "pick": np.int64,
    "drop": np.int64, "pay": np.int64, "lag_acc": np.int64, "lag_canc": np.int64, "lag_pick": np.int64,
    "lag_drop": np.int64, "lag_pay": np.int64, "fare": np.float64, "km": np.float64, "dead": np.int64,
}


def _fare(km: np.ndarray, minutes: np.ndarray) -> np.ndarray:
    return 2.5 + 1.6 * km + 0.35 * minutes


class _Rides(_Model):
    """Trip lifecycles matched onto the bursty type sequence.

    Each ``Request`` starts a trip (driver, rider, district, fate: completed,
    cancelled before accept, cancelled after accept). Milestones (Accept,
    Cancel, Pickup, Dropoff, Payment) are queues: a trip becomes eligible a
    random lag after its previous milestone, and the stream's events of that
    type go to eligible trips, earliest eligible first. Travel, Wait, Reroute,
    Rate, Tip, Feedback, Complaint and Refund events go to a random trip in
    the matching phase (Travel: between Accept and Dropoff/Cancel, Wait:
    between Request and Pickup/Cancel, Reroute: between Pickup and Dropoff,
    the others: within ``after_minutes`` after the end). Events no trip can
    take are "strays" with random driver/rider; Surge, Login, Logout, Idle,
    Refuel and Break are driver events with rider 0.
    """

    STAGES = (  # type, field, fates needing it
        ("Accept", "acc", (FATE_DONE, FATE_CANCEL_LATE)),
        ("Cancel", "canc", (FATE_CANCEL_EARLY, FATE_CANCEL_LATE)),
        ("Pickup", "pick", (FATE_DONE,)),
        ("Dropoff", "drop", (FATE_DONE,)),
        ("Payment", "pay", (FATE_DONE,)),
    )

    def __init__(self, ctx: _Context):
        super().__init__(ctx)
        p = ctx.params
        self.drivers = int(p["drivers"])
        self.riders = int(p["riders"])
        nd = int(p["districts"])
        if not 1 <= nd <= len(RIDE_DISTRICTS):
            raise ValueError(f"districts must be 1..{len(RIDE_DISTRICTS)}, got {nd}")
        if self.drivers < 1 or self.riders < 1:
            raise ValueError("drivers and riders must be >= 1")
        self.cancel_rate = float(p["cancel_rate"])
        if not 0 <= self.cancel_rate <= 1:
            raise ValueError("cancel_rate must be in [0, 1]")
        self.districts = list(RIDE_DISTRICTS[:nd])
        self.dweights = 1.0 / np.sqrt(np.arange(1, nd + 1))
        self.dspeed = np.array(RIDE_SPEEDS[:nd])
        self.trip_us = float(p["trip_minutes"]) * 60 * US
        self.after_us = int(float(p["after_minutes"]) * 60 * US)
        if self.trip_us <= 0 or self.after_us <= 0:
            raise ValueError("trip_minutes and after_minutes must be > 0")
        # zones 1..265 split into contiguous ranges, one per district
        bounds = np.linspace(1, 266, nd + 1).astype(np.int64)
        self.zone_lo, self.zone_hi = bounds[:-1], bounds[1:]
        self.perm = ctx.rng("drivers").permutation(self.drivers)
        self.t = {k: np.empty(0, dtype=v) for k, v in _TRIP_FIELDS.items()}
        self.next_tid = 0
        T = self.trip_us
        self.caps = {"wait": int(2.0 * T), "travel": int(3.0 * T), "reroute": int(3.0 * T), "after": self.after_us}
        self.timeout = int(5.0 * T)

    # -- trips ---------------------------------------------------------------

    def _new_trips(self, req_ts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        m = req_ts.size
        T = self.trip_us
        district = _choice(rng, m, self.dweights)
        u = rng.random(m)
        fate = np.where(u < self.cancel_rate / 2, FATE_CANCEL_EARLY,
                        np.where(u < self.cancel_rate, FATE_CANCEL_LATE, FATE_DONE)).astype(np.int8)
        span = self.zone_hi - self.zone_lo
        pu = self.zone_lo[district] + (rng.random(m) * span[district]).astype(np.int64)
        dd = _choice(rng, m, self.dweights)
        do = self.zone_lo[dd] + (rng.random(m) * span[dd]).astype(np.int64)
        speed = self.dspeed[district] * rng.uniform(0.8, 1.2, m)
        lag_drop = (5 * US + 0.70 * T * rng.gamma(3.0, 1 / 3.0, m)).astype(np.int64)
        est_minutes = lag_drop / (60 * US)
        est_price = _round(_fare(speed * est_minutes / 60.0, est_minutes) * rng.uniform(0.9, 1.1, m), 2)
        tid = self.next_tid + np.arange(m, dtype=np.int64)
        self.next_tid += m
        new = {
            "tid": tid,
            "driver": self.perm[tid % self.drivers].astype(np.int64),
            "rider": rng.integers(1, self.riders + 1, m),
            "district": district.astype(np.int64),
            "fate": fate,
            "pu_zone": pu,
            "do_zone": do,
            "passengers": 1 + _choice(rng, m, np.array([0.70, 0.20, 0.07, 0.03])),
            "est_price": est_price,
            "speed": speed,
            "req": req_ts.astype(np.int64),
            "acc": np.full(m, NONE), "canc": np.full(m, NONE), "pick": np.full(m, NONE),
            "drop": np.full(m, NONE), "pay": np.full(m, NONE),
            "lag_acc": (2 * US + rng.exponential(0.04 * T, m)).astype(np.int64),
            "lag_canc": np.where(fate == FATE_CANCEL_EARLY, rng.exponential(0.08 * T, m),
                                 rng.exponential(0.20 * T, m)).astype(np.int64) + US,
            "lag_pick": (5 * US + 0.25 * T * rng.gamma(2.0, 0.5, m)).astype(np.int64),
            "lag_drop": lag_drop,
            "lag_pay": (US + rng.exponential(0.02 * T, m)).astype(np.int64),
            "fare": np.full(m, np.nan), "km": np.full(m, np.nan),
            "dead": np.full(m, INF),
        }
        start = self.t["tid"].size
        for k in self.t:
            self.t[k] = np.concatenate([self.t[k], new[k].astype(self.t[k].dtype)])
        return np.arange(start, start + m)

    def _match(self, stage: tuple[str, str, tuple[int, ...]], ts: np.ndarray, codes: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        etype, fld, fates = stage
        t = self.t
        positions = np.flatnonzero(codes == self.ctx.code[etype])
        if etype == "Cancel":
            pred = np.where(t["fate"] == FATE_CANCEL_EARLY, t["req"], t["acc"])
        else:
            pred = t[{"acc": "req", "pick": "acc", "drop": "pick", "pay": "drop"}[fld]]
        need = np.isin(t["fate"], fates) & (t[fld] == NONE) & (pred != NONE) & (t["dead"] == INF)
        cand = np.flatnonzero(need)
        if cand.size == 0 or positions.size == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        elig = pred[cand] + t[f"lag_{fld}"][cand]
        order = np.lexsort((t["tid"][cand], elig))
        cand, elig = cand[order], elig[order]
        tau = ts[positions]
        s = np.searchsorted(tau, elig, side="right")
        k = np.arange(cand.size)
        idx = k + np.maximum.accumulate(s - k)
        ok = idx < tau.size
        cand, idx = cand[ok], idx[ok]
        t[fld][cand] = tau[idx]
        if fld == "drop":  # the ride is over: its distance and fare
            minutes = (t["drop"][cand] - t["pick"][cand]) / (60 * US)
            km = t["speed"][cand] * minutes / 60.0 * rng.uniform(0.9, 1.1, cand.size)
            t["km"][cand] = _round(km, 3)
            t["fare"][cand] = _round(_fare(km, minutes), 2)
        return cand, positions[idx]

    def _intervals(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, start, end) of the trips' phase ``kind``; end INF while unknown."""
        t = self.t
        fate, dead = t["fate"], t["dead"]
        if kind == "wait":
            start = t["req"]
            end = np.where(fate == FATE_DONE, t["pick"], t["canc"])
        elif kind == "travel":
            start = np.where(fate == FATE_CANCEL_EARLY, NONE, t["acc"])
            end = np.where(fate == FATE_DONE, t["drop"], t["canc"])
        elif kind == "reroute":
            start = np.where(fate == FATE_DONE, t["pick"], NONE)
            end = t["drop"]
        elif kind == "after":
            start = np.where(fate == FATE_DONE, t["drop"], NONE)
            end = np.where(start == NONE, NONE, start + self.after_us)
        elif kind == "refund":
            start = np.where(fate == FATE_DONE, t["drop"], t["canc"])
            end = np.where(start == NONE, NONE, start + self.after_us)
        else:  # pragma: no cover
            raise KeyError(kind)
        end = np.where(end == NONE, INF, end)
        end = np.minimum(end, dead)
        return np.arange(start.size), start, end

    def _stab(self, kind: str, times: np.ndarray, rng: np.random.Generator, rounds: int = 32) -> np.ndarray:
        """A random trip in phase ``kind`` at each time (strictly inside it), or -1."""
        chosen = np.full(times.size, -1, dtype=np.int64)
        if times.size == 0:
            return chosen
        cap = self.caps["after" if kind == "refund" else kind]
        rows, start, end = self._intervals(kind)
        end = np.minimum(end, start + cap)
        keep = (start != NONE) & (end > start) & (start < times[-1]) & (end > times[0])
        rows, start, end = rows[keep], start[keep], end[keep]
        if rows.size == 0:
            return chosen
        order = np.lexsort((self.t["tid"][rows], start))
        rows, start, end = rows[order], start[order], end[order]
        lo = np.searchsorted(start, times - cap, side="right")
        hi = np.searchsorted(start, times, side="left")
        todo = np.flatnonzero(hi > lo)
        for _ in range(rounds):
            if todo.size == 0:
                break
            width = hi[todo] - lo[todo]
            k = lo[todo] + np.minimum((rng.random(todo.size) * width).astype(np.int64), width - 1)
            ok = end[k] > times[todo]
            chosen[todo[ok]] = rows[k[ok]]
            todo = todo[~ok]
        return chosen

    def _prune(self, now: int) -> None:
        t = self.t
        fate = t["fate"]
        finished_at = np.where(fate == FATE_DONE, t["pay"], t["canc"])
        ended_at = np.where(fate == FATE_DONE, t["drop"], t["canc"])
        alive = t["dead"] == INF
        # trips stuck in a queue for too long are given up (they keep their events so far)
        stuck = alive & (finished_at == NONE) & (t["req"] < now - self.timeout)
        t["dead"][stuck] = now
        done_long_ago = (finished_at != NONE) & (ended_at + self.after_us < now) & (finished_at < now)
        dead_long_ago = (t["dead"] != INF) & (t["dead"] + self.caps["travel"] < now)
        keep = ~(done_long_ago | dead_long_ago)
        if not keep.all():
            for k in t:
                t[k] = t[k][keep]

    # -- the segment -----------------------------------------------------------

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        code = self.ctx.code
        row = np.full(n, -1, dtype=np.int64)
        req_pos = np.flatnonzero(codes == code["Request"])
        row[req_pos] = self._new_trips(ts[req_pos], rng)
        for stage in self.STAGES:
            rows, pos = self._match(stage, ts, codes, rng)
            row[pos] = rows
        phases = {"Travel": "travel", "Wait": "wait", "Reroute": "reroute", "Rate": "after", "Tip": "after",
                  "Feedback": "after", "Complaint": "after", "Refund": "refund"}
        for etype, kind in phases.items():
            pos = np.flatnonzero(codes == code[etype])
            if pos.size:
                row[pos] = self._stab(kind, ts[pos], rng)
        cols = self._attributes(codes, ts, row, rng)
        self._prune(int(ts[-1]))
        return cols

    def _attributes(self, codes: np.ndarray, ts: np.ndarray, row: np.ndarray, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        t = self.t
        linked = row >= 0
        r = row[linked]
        is_ = {name: codes == c for name, c in self.ctx.code.items()}

        driver = rng.integers(0, self.drivers, n)
        rider = rng.integers(1, self.riders + 1, n)
        district = _choice(rng, n, self.dweights)
        driver[linked], rider[linked], district[linked] = t["driver"][r], t["rider"][r], t["district"][r]
        solo = np.isin(codes, [self.ctx.code[x] for x in DRIVER_ONLY])
        rider[solo] = 0

        speed_mean = self.dspeed[district]
        trip_speed = speed_mean * rng.uniform(0.8, 1.2, n)
        trip_speed[linked] = t["speed"][r]
        # Travel: a leg of a few minutes at a noisy speed around the trip's speed
        leg_s = _round(1.0 + rng.gamma(2.0, 30.0, n), 1)
        speed = _round(np.maximum(0.5, trip_speed * rng.gamma(4.0, 0.25, n)), 1)
        travel_km = _round(speed * leg_s / 3600.0, 3)
        # Dropoff: the ride (linked trips: the real pickup -> dropoff time)
        ride_min = 0.7 * self.trip_us / (60 * US) * rng.gamma(3.0, 1 / 3.0, n) + 0.1
        ride_km = trip_speed * ride_min / 60.0
        fare = _fare(ride_km, ride_min)
        ld = linked & is_["Dropoff"]
        rd = row[ld]
        ride_min[ld] = (t["drop"][rd] - t["pick"][rd]) / (60 * US)
        ride_km[ld] = t["km"][rd]
        fare[ld] = t["fare"][rd]
        duration = np.where(is_["Dropoff"], _round(ride_min * 60.0, 1), leg_s)
        distance = np.where(is_["Dropoff"], _round(ride_km, 3), travel_km)

        est = _round(_fare(ride_km, ride_min) * rng.uniform(0.9, 1.1, n), 2)
        lr = linked & is_["Request"]
        est[lr] = t["est_price"][row[lr]]
        price = np.where(is_["Dropoff"], _round(fare, 2), est)

        span = self.zone_hi - self.zone_lo
        pu = self.zone_lo[district] + (rng.random(n) * span[district]).astype(np.int64)
        dd = _choice(rng, n, self.dweights)
        do = self.zone_lo[dd] + (rng.random(n) * span[dd]).astype(np.int64)
        passengers = 1 + _choice(rng, n, np.array([0.70, 0.20, 0.07, 0.03]))
        pu[linked], do[linked], passengers[linked] = t["pu_zone"][r], t["do_zone"][r], t["passengers"][r]

        # money after the trip: the trip's fare when known
        known_fare = np.full(n, np.nan)
        known_fare[linked] = np.where(np.isnan(t["fare"][r]), t["est_price"][r], t["fare"][r])
        base = np.where(np.isnan(known_fare), fare, known_fare)
        amount = np.where(is_["Payment"], base,
                          np.where(is_["Tip"], base * rng.uniform(0.05, 0.25, n), base * rng.uniform(0.1, 1.0, n)))
        amount = _round(np.maximum(amount, 0.0), 2)

        status = _choice(rng, n, np.array([0.6, 0.3, 0.1]))  # rider, driver, system
        lc = linked & is_["Cancel"]
        early = t["fate"][row[lc]] == FATE_CANCEL_EARLY
        status[lc] = np.where(early, np.where(rng.random(early.size) < 0.8, 0, 2),
                              np.where(rng.random(early.size) < 0.5, 0, 1))
        return {
            "driver": Col(driver),
            "rider": Col(rider),
            "district": Col(district, self.districts),
            "duration": Col(duration),
            "speed": Col(speed),
            "price": Col(price),
            "distance": Col(distance),
            "passengers": Col(passengers),
            "pickup_zone": Col(pu),
            "dropoff_zone": Col(do),
            "vendor": Col(driver % len(RIDE_VENDORS), RIDE_VENDORS),
            "amount": Col(amount),
            "method": Col(_choice(rng, n, np.array([0.7, 0.15, 0.15])), ["card", "cash", "wallet"]),
            "rating": Col(1 + _choice(rng, n, np.array([0.03, 0.05, 0.12, 0.30, 0.50]))),
            "multiplier": Col(_round(np.minimum(1.0 + rng.exponential(0.4, n), 10.0), 2)),
            "status": Col(status, ["rider", "driver", "system"]),
            "reason": Col(rng.integers(0, 6, n), ["late", "route", "rude", "vehicle", "price", "other"]),
            "fuel": Col(_round(rng.uniform(10.0, 60.0, n), 1)),
        }


# ---- stocks -----------------------------------------------------------------------

STOCK_SECTORS = ["tech", "energy", "finance", "health", "industrials", "materials",
                 "utilities", "consumer", "staples", "telecom", "realestate"]


def _ticker(i: int) -> str:
    """A stable made-up ticker for company ``i`` (3 letters, then 4 beyond 17576)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    x = (i * 7919 + 4099) % (26**3) if i < 26**3 else 26**3 + i
    out = ""
    width = 3 if i < 26**3 else 4
    for _ in range(width):
        x, d = divmod(x, 26)
        out = letters[d] + out
    return out


class _Stocks(_Model):
    """Per-company geometric random walks: consecutive prices of a company rise about half the time."""

    def __init__(self, ctx: _Context):
        super().__init__(ctx)
        p = ctx.params
        self.n = int(p["companies"])
        self.traders = int(p["traders"])
        if self.n < 1 or self.traders < 1:
            raise ValueError("companies and traders must be >= 1")
        self.vol = float(p["volatility"])
        setup = ctx.rng("companies")
        self.tickers = [_ticker(i) for i in range(self.n)]
        self.sector = np.arange(self.n) % len(STOCK_SECTORS)
        self.logp = np.log(setup.lognormal(np.log(50.0), 0.8, self.n).clip(2.0, 2000.0))
        self.volf = setup.uniform(0.5, 2.0, self.n)
        self.popularity = 1.0 / np.arange(1, self.n + 1) ** 0.8
        setup.shuffle(self.popularity)

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        company = _choice(rng, n, self.popularity)
        steps = rng.normal(0.0, 1.0, n) * self.vol * self.volf[company]
        price = _round(np.maximum(np.exp(_group_cumsum(company, steps, self.logp)), 0.01), 2)
        c = self.ctx.code
        volume = np.where(
            codes == c["Trade"], 1 + rng.lognormal(5.0, 1.0, n).astype(np.int64),
            np.where(codes == c["Halt"], 0, 100 * (1 + rng.poisson(2.5, n))),
        )
        return {
            "company": Col(company, self.tickers),
            "sector": Col(self.sector[company], STOCK_SECTORS),
            "price": Col(price),
            "volume": Col(volume.astype(np.int64)),
            "side": Col(rng.integers(0, 2, n), ["buy", "sell"]),
            "open": Col(price, valid=np.zeros(n, bool)),
            "high": Col(price, valid=np.zeros(n, bool)),
            "low": Col(price, valid=np.zeros(n, bool)),
            "trader": Col(rng.integers(0, self.traders, n)),
        }


# ---- linear road ------------------------------------------------------------------


class _LinearRoad(_Model):
    """Vehicles cruising along expressways of 100 one-mile segments; the type is the street reported."""

    LENGTH_FT = 100 * 5280

    def __init__(self, ctx: _Context):
        super().__init__(ctx)
        p = ctx.params
        self.n = int(p["vehicles"])
        xways = int(p["xways"])
        if self.n < 1 or not 1 <= xways <= 10:
            raise ValueError("vehicles must be >= 1 and xways 1..10")
        setup = ctx.rng("vehicles")
        self.xway = np.arange(self.n) % xways
        self.direction = setup.integers(0, 2, self.n)
        self.cruise = setup.uniform(35.0, 75.0, self.n)
        self.p0 = setup.uniform(0, self.LENGTH_FT, self.n)

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        v = rng.integers(0, self.n, n)
        hours = (ts - self.ctx.start_us) / (3600.0 * US)
        pos = np.mod(self.p0[v] + self.cruise[v] * 5280.0 * hours, self.LENGTH_FT).astype(np.int64)
        pos = np.where(self.direction[v] == 1, self.LENGTH_FT - 1 - pos, pos)
        speed = _round(np.clip(self.cruise[v] * (1.0 + rng.normal(0.0, 0.15, n)), 0.0, 100.0), 1)
        return {
            "vehicle": Col(v),
            "xway": Col(self.xway[v]),
            "direction": Col(self.direction[v]),
            "lane": Col(_choice(rng, n, np.array([0.05, 0.3, 0.3, 0.3, 0.05]))),
            "segment": Col(pos // 5280),
            "position": Col(pos),
            "speed": Col(speed),
        }


# ---- smart home -------------------------------------------------------------------


class _SmartHome(_Model):
    """Plugs of households of houses (DEBS 2014): noisy load around a per-plug level, monotone work."""

    def __init__(self, ctx: _Context):
        super().__init__(ctx)
        p = ctx.params
        self.houses, self.households, self.plugs = int(p["houses"]), int(p["households"]), int(p["plugs"])
        if min(self.houses, self.households, self.plugs) < 1:
            raise ValueError("houses, households and plugs must be >= 1")
        self.n = self.houses * self.households * self.plugs
        setup = ctx.rng("plugs")
        self.base = setup.lognormal(np.log(30.0), 1.0, self.n)
        self.work0 = setup.uniform(0.0, 500.0, self.n)

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        k = rng.integers(0, self.n, n)
        hours = (ts - self.ctx.start_us) / (3600.0 * US)
        load = self.base[k] * rng.lognormal(0.0, 0.3, n)
        load = np.where(rng.random(n) < 0.1, 0.0, load)
        per_plug = self.households * self.plugs
        return {
            "house": Col(k // per_plug),
            "household": Col((k // self.plugs) % self.households),
            "plug": Col(k % self.plugs),
            "load": Col(_round(load, 3)),
            "work": Col(_round(self.work0[k] + self.base[k] * hours / 1000.0, 3)),
            "reading": Col(offset + np.arange(n, dtype=np.int64)),
        }


# ---- e-commerce -------------------------------------------------------------------

SHOP_CATEGORIES = ["electronics", "books", "home", "toys", "fashion", "sports", "grocery", "beauty",
                   "garden", "music", "office", "pets"]


class _Ecommerce(_Model):
    """Customers browsing a few items per session (Sharon: 50 items, 20 customers)."""

    def __init__(self, ctx: _Context):
        super().__init__(ctx)
        p = ctx.params
        self.customers, self.items = int(p["customers"]), int(p["items"])
        ncat = int(p["categories"])
        self.session_us = float(p["session_minutes"]) * 60 * US
        self.per_session = int(p["items_per_session"])
        if min(self.customers, self.items, self.per_session) < 1 or not 1 <= ncat <= len(SHOP_CATEGORIES):
            raise ValueError(f"customers, items, items_per_session must be >= 1 and categories 1..{len(SHOP_CATEGORIES)}")
        if self.session_us <= 0:
            raise ValueError("session_minutes must be > 0")
        self.categories = SHOP_CATEGORIES[:ncat]
        setup = ctx.rng("catalog")
        self.item_price = _round(setup.lognormal(np.log(25.0), 0.9, self.items).clip(0.5, 5000.0), 2)
        self.item_cat = setup.integers(0, ncat, self.items)
        self.phase = setup.uniform(0, self.session_us, self.customers)

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        cust = rng.integers(0, self.customers, n)
        session = np.floor((ts - self.ctx.start_us + self.phase[cust]) / self.session_us).astype(np.int64)
        j = rng.integers(0, self.per_session, n)
        item = (_hash(self.ctx.seed, cust, session, j) % np.uint64(self.items)).astype(np.int64)
        discount = np.where(rng.random(n) < 0.1, rng.uniform(0.1, 0.3, n), 0.0)
        return {
            "customer": Col(cust),
            "item": Col(item),
            "category": Col(self.item_cat[item], self.categories),
            "price": Col(_round(self.item_price[item] * (1.0 - discount), 2)),
            "quantity": Col(np.minimum(1 + rng.poisson(0.3, n), 100)),
            "rating": Col(1 + _choice(rng, n, np.array([0.06, 0.06, 0.13, 0.3, 0.45]))),
        }


# ---- cluster ----------------------------------------------------------------------


class _Cluster(_Model):
    """GRETA Table 13.1: job and mapper ids uniform 0-10, CPU and memory uniform 0-1k, load Poisson(100)."""

    def __init__(self, ctx: _Context):
        super().__init__(ctx)
        p = ctx.params
        self.max_job, self.max_mapper = int(p["max_job"]), int(p["max_mapper"])
        self.machines = int(p["machines"])
        self.reducers = float(p["reducer_share"])
        self.load_mean = float(p["load_mean"])
        if min(self.max_job, self.max_mapper) < 0 or self.machines < 1 or not 0 <= self.reducers <= 1:
            raise ValueError("max_job, max_mapper >= 0, machines >= 1, reducer_share in [0, 1]")

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        return {
            "job": Col(rng.integers(0, self.max_job + 1, n)),
            "mapper": Col(rng.integers(0, self.max_mapper + 1, n)),
            "role": Col((rng.random(n) < self.reducers).astype(np.int64), ["mapper", "reducer"]),
            "cpu": Col(_round(rng.uniform(0.0, 1000.0, n), 2)),
            "memory": Col(_round(rng.uniform(0.0, 1000.0, n), 2)),
            "load": Col(np.minimum(rng.poisson(self.load_mean, n), 10_000)),
            "priority": Col(rng.integers(0, 12, n)),
            "machine": Col(rng.integers(0, self.machines, n)),
        }


# ---- bus --------------------------------------------------------------------------

BUS_LINES = ["1", "4", "7", "9", "11", "13", "14", "15", "15A", "15B", "16", "25", "25A", "27", "27B",
             "31", "32", "33", "37", "38", "39", "39A", "40", "41", "42", "44", "46A", "47", "49", "54A",
             "56A", "65", "66", "67", "68", "69", "70", "79", "83", "84", "102", "104", "123", "130",
             "140", "145", "150", "151"]
BUS_OPERATORS = ["D1", "D2", "D3", "D4", "D5", "SL", "HN", "PO", "CD", "RD"]


class _Bus(_Model):
    """Buses driving their line back and forth; delay drifts within a journey."""

    def __init__(self, ctx: _Context):
        super().__init__(ctx)
        p = ctx.params
        self.n = int(p["vehicles"])
        self.lines = int(p["lines"])
        self.stops = int(p["stops"])
        self.journey_us = float(p["journey_minutes"]) * 60 * US
        if self.n < 1 or not 1 <= self.lines <= len(BUS_LINES) or self.stops < 1 or self.journey_us <= 0:
            raise ValueError(f"vehicles >= 1, lines 1..{len(BUS_LINES)}, stops >= 1, journey_minutes > 0")
        setup = ctx.rng("fleet")
        self.line = np.arange(self.n) % self.lines
        self.phase = setup.uniform(0, 2 * self.journey_us, self.n)
        self.ends = np.stack([setup.uniform(-6.45, -6.05, (self.lines, 2)), setup.uniform(53.25, 53.45, (self.lines, 2))], -1)
        self.patterns = [f"{li + 1:04d}{d + 1:04d}" for li in range(self.lines) for d in range(2)]

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        v = rng.integers(0, self.n, n)
        line = self.line[v]
        elapsed = ts - self.ctx.start_us + self.phase[v]
        trip = np.floor(elapsed / self.journey_us).astype(np.int64)
        progress = (elapsed - trip * self.journey_us) / self.journey_us
        direction = trip % 2
        frac = np.where(direction == 0, progress, 1.0 - progress)
        a, b = self.ends[line, 0], self.ends[line, 1]
        lon = _round(a[:, 0] + (b[:, 0] - a[:, 0]) * frac + rng.normal(0, 2e-4, n), 6)
        lat = _round(a[:, 1] + (b[:, 1] - a[:, 1]) * frac + rng.normal(0, 2e-4, n), 6)
        h = _hash(self.ctx.seed, v, trip)
        base = -60.0 + _unit(h) * 360.0
        slope = -5.0 + _unit(_splitmix(h)) * 25.0  # s per minute
        minutes = progress * self.journey_us / (60 * US)
        delay = np.clip(np.round(base + slope * minutes + rng.normal(0.0, 10.0, n)), -86400, 86400).astype(np.int64)
        c = self.ctx.code
        return {
            "vehicle": Col(v + 33000),
            "line": Col(line, BUS_LINES[: self.lines]),
            "direction": Col(direction),
            "journey": Col(trip * self.n + v),
            "journey_pattern": Col(line * 2 + direction, self.patterns),
            "operator": Col(line % len(BUS_OPERATORS), BUS_OPERATORS),
            "block": Col((line + 1) * 1000 + v % 17),
            "stop": Col((line + 1) * 1000 + np.minimum((frac * self.stops).astype(np.int64), self.stops - 1)),
            "delay": Col(delay),
            "congestion": Col(codes == c["Congested"]),
            "at_stop": Col(codes == c["AtStop"]),
            "lon": Col(lon),
            "lat": Col(lat),
        }


# ---- taxi zones (GLORIA) ------------------------------------------------------------


def _zone_weights() -> np.ndarray:
    rank = np.random.default_rng(265).permutation(265) + 1
    return 1.0 / rank


class _TaxiZones(_Model):
    """One event per taxi trip, typed by its pickup zone (Zipf-like zone popularity)."""

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        km = rng.gamma(2.0, 2.0, n)
        minutes = km / rng.uniform(12.0, 35.0, n) * 60.0 + 1.0
        return {
            "vendor": Col(np.where(rng.random(n) < 0.3, 1, 2)),
            "trip": Col(offset + np.arange(n, dtype=np.int64)),
            "dropoff_zone": Col(1 + _choice(rng, n, _zone_weights())),
            "passengers": Col(1 + _choice(rng, n, np.array([0.7, 0.15, 0.06, 0.04, 0.03, 0.02]))),
            "distance": Col(_round(km, 3)),
            "duration": Col(_round(minutes * 60.0, 1)),
            "price": Col(_round(_fare(km, minutes) + 1.0, 2)),
        }


# ---------------------------------------------------------------------------- the registry


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
    model: Callable[[_Context], _Model] = _Model

    def schema(self) -> dict[str, Any]:
        from trendlake.schemas import load_stream_schema

        return load_stream_schema(self.name)


def _rides_mix() -> dict[str, float]:
    # expected events per Request of the trip model (see docs/generators.md), with 3% more
    # milestone events than trips need so queues stay short (the extra ones are strays)
    slack = 1.03
    return {
        "Request": 1.0, "Accept": 0.95 * slack, "Travel": 6.0, "Pickup": 0.90 * slack,
        "Dropoff": 0.90 * slack, "Cancel": 0.10 * slack, "Wait": 1.0, "Reroute": 0.3,
        "Payment": 0.90 * slack, "Rate": 0.5, "Tip": 0.3, "Refund": 0.04, "Feedback": 0.2,
        "Complaint": 0.05, "Surge": 0.1, "Login": 0.1, "Logout": 0.1, "Idle": 0.15, "Refuel": 0.03,
        "Break": 0.05,
    }


STREAMS: dict[str, StreamSpec] = {
    "rides": StreamSpec(
        "rides", "ride-sharing trip lifecycles interleaved across concurrent trips",
        "Hamlet ridesharing generator (20 types, 10k events/min)",
        rate=10_000 / 60, burst=3.0, mix=_rides_mix(),
        params={"drivers": 20_000, "riders": 50_000, "districts": 10, "cancel_rate": 0.10,
                "trip_minutes": 16.0, "after_minutes": 10.0},
        model=_Rides,
    ),
    "stocks": StreamSpec(
        "stocks", "trades, quotes and orders with per-company random-walk prices",
        "Hamlet/GRETA stock data sets (220 companies, 4.5k events/min)",
        rate=4_500 / 60, burst=10.0,
        mix={"Trade": 0.35, "Bid": 0.25, "Ask": 0.25, "Order": 0.10, "Cancel": 0.045, "Halt": 0.005},
        params={"companies": 220, "traders": 1000, "volatility": 0.002},
        model=_Stocks,
    ),
    "linear_road": StreamSpec(
        "linear_road", "vehicle position reports typed by street",
        "Linear Road benchmark as used by Sharon/GRETA (up to 4k events/s)",
        rate=2_000.0, burst=1.0,
        mix={s: 1.0 for s in ["OakSt", "MainSt", "StateSt", "ElmSt", "ParkAve", "BroadSt", "WaterSt",
                              "HighSt", "MarketSt", "LakeSt", "HillRd", "RiverRd"]},
        params={"vehicles": 1000, "xways": 1},
        model=_LinearRoad,
    ),
    "smart_home": StreamSpec(
        "smart_home", "smart-plug load and work readings",
        "DEBS 2014 grand challenge as used by Hamlet (20k events/min)",
        rate=20_000 / 60, burst=2.0, mix={"Load": 0.5, "Work": 0.5},
        params={"houses": 40, "households": 6, "plugs": 9},
        model=_SmartHome,
    ),
    "ecommerce": StreamSpec(
        "ecommerce", "customers' clicks, carts, purchases and reviews",
        "Sharon e-commerce generator (50 items, 20 customers, 3k events/s)",
        rate=3_000.0, burst=1.0,
        mix={"View": 0.40, "Search": 0.15, "AddToCart": 0.12, "RemoveFromCart": 0.03, "Wishlist": 0.05,
             "Checkout": 0.08, "Purchase": 0.10, "Return": 0.02, "Review": 0.05},
        params={"customers": 20, "items": 50, "categories": 8, "session_minutes": 30.0, "items_per_session": 3},
        model=_Ecommerce,
    ),
    "cluster": StreamSpec(
        "cluster", "job/task lifecycle events and resource measurements",
        "GRETA cluster monitoring generator, Table 13.1 (3k events/s)",
        # Measurement is 55% of the mix, so runs of one type cannot all be 1 long (that needs a
        # type below half); 1.5 is about what independent draws from this mix give (1 / (1 - sum p^2))
        rate=3_000.0, burst=1.5,
        mix={"Measurement": 0.55, "Submit": 0.08, "Schedule": 0.08, "UpdatePending": 0.03,
             "UpdateRunning": 0.04, "Finish": 0.12, "Fail": 0.03, "Kill": 0.03, "Evict": 0.03, "Lost": 0.01},
        params={"max_job": 10, "max_mapper": 10, "machines": 100, "reducer_share": 0.3, "load_mean": 100.0},
        model=_Cluster,
    ),
    "bus": StreamSpec(
        "bus", "bus GPS records: moving, at a stop, in congestion",
        "Dublin bus GPS data set as used by GLORIA",
        rate=50.0, burst=2.0, mix={"Moving": 0.7, "AtStop": 0.2, "Congested": 0.1},
        params={"vehicles": 500, "lines": 40, "stops": 40, "journey_minutes": 60.0},
        model=_Bus,
    ),
    "taxi_zones": StreamSpec(
        "taxi_zones", "taxi trips typed by pickup zone",
        "NYC taxi data set as used by GLORIA (pickup location as event type)",
        rate=200 / 60, burst=1.0,
        mix={f"Z{i + 1}": float(w) for i, w in enumerate(_zone_weights())},
        params={},
        model=_TaxiZones,
    ),
}


def _spec(stream: str) -> StreamSpec:
    try:
        return STREAMS[stream]
    except KeyError:
        raise ValueError(f"no generator for stream {stream!r} (known: {', '.join(STREAMS)})") from None


def arrow_schema(stream: str | dict[str, Any]) -> pa.Schema:
    """Columns of a stream's events: type, ts, then every attribute in schema order."""
    if isinstance(stream, str):
        from trendlake.schemas import load_stream_schema

        stream = load_stream_schema(stream)
    fields = [pa.field("type", pa.string(), nullable=False), pa.field("ts", pa.timestamp("us", tz="UTC"), nullable=False)]
    for name, spec in stream["attributes"].items():
        fields.append(pa.field(name, ARROW_TYPES[spec["type"]]))
    return pa.schema(fields)


def _column(col: Col, kind: str, carried: np.ndarray | None) -> pa.Array:
    valid = col.valid
    if carried is not None:
        valid = carried if valid is None else (valid & carried)
    mask = None if valid is None else ~valid
    if col.vocab is not None:
        idx = pa.array(np.asarray(col.values, dtype=np.int32), mask=mask)
        return pc.take(pa.array(col.vocab, pa.string()), idx)
    values = np.asarray(col.values)
    if kind == "long":
        return pa.array(values.astype(np.int64), type=pa.int64(), mask=mask)
    if kind == "double":
        return pa.array(values.astype(np.float64), type=pa.float64(), mask=mask)
    if kind == "boolean":
        return pa.array(values.astype(bool), type=pa.bool_(), mask=mask)
    return pa.array([str(x) for x in values], type=pa.string(), mask=mask)


def _segments(stream: str, events: int, seed: int, start_us: int, rate: float, burst: float,
              mix: Mapping[str, float] | None, params: dict[str, Any]) -> Iterator[pa.Table]:
    spec = _spec(stream)
    schema = spec.schema()
    types = list(schema["event_types"])
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        known = ", ".join(spec.params) or "none"
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for stream {stream} (known: {known})")
    merged = {**spec.params, **params}
    weights = {t: float(spec.mix.get(t, 0.0)) for t in types}
    if mix:
        bad = sorted(set(mix) - set(types))
        if bad:
            raise ValueError(f"mix names unknown event type(s) {', '.join(bad)} of stream {stream}")
        weights.update({t: float(w) for t, w in mix.items()})
    chain = _TypeChain(types, np.array([weights[t] for t in types]), burst)
    ctx = _Context(stream, seed, start_us, rate, types, {t: i for i, t in enumerate(types)}, merged)
    model = spec.model(ctx)
    clock = _Clock(start_us, rate)
    arrow = arrow_schema(schema)
    type_names = pa.array(types, pa.string())
    attrs = schema["attributes"]
    carriers = {name: a.get("types", "*") for name, a in attrs.items()}
    done, segment = 0, 0
    while done < events:
        n = min(SEGMENT_EVENTS, events - done)
        codes = chain.take(n, _rng(seed, stream, segment, "types"))
        ts = clock.take(n, _rng(seed, stream, segment, "time"))
        cols = model.segment(codes, ts, done, _rng(seed, stream, segment, "attributes"))
        arrays = [pc.take(type_names, pa.array(codes)), pa.array(ts, pa.timestamp("us", tz="UTC"))]
        for name, a in attrs.items():
            carried = None if carriers[name] == "*" else np.isin(codes, [types.index(t) for t in carriers[name]])
            arrays.append(_column(cols[name], a["type"], carried))
        yield pa.Table.from_arrays(arrays, schema=arrow)
        done += n
        segment += 1


def generate(
    stream: str,
    events: int,
    seed: int = 0,
    *,
    start: str | datetime = "2026-01-01T00:00:00Z",
    rate_per_second: float | None = None,
    chunk_size: int = 1_000_000,
    burst: float | None = None,
    mix: Mapping[str, float] | None = None,
    **params: Any,
) -> Iterator[pa.Table]:
    """Yield ``events`` events of ``stream`` as time-ordered tables of at most ``chunk_size`` rows.

    ``rate_per_second`` and ``burst`` default to the stream's (``STREAMS[stream]``);
    ``mix`` overrides some type weights (others keep their defaults; all are
    normalised); other keyword arguments are the stream model's parameters
    (``STREAMS[stream].params``). Same arguments, same events.
    """
    spec = _spec(stream)
    events = int(events)
    if events < 0:
        raise ValueError("events must be >= 0")
    if int(seed) < 0:
        raise ValueError("seed must be >= 0")
    if int(chunk_size) < 1:
        raise ValueError("chunk_size must be >= 1")
    start_us = _parse_start(start)
    rate = float(spec.rate if rate_per_second is None else rate_per_second)
    b = float(spec.burst if burst is None else burst)
    source = _segments(stream, events, int(seed), start_us, rate, b, mix, dict(params))
    return _rechunk(source, int(chunk_size))


def _rechunk(tables: Iterable[pa.Table], size: int) -> Iterator[pa.Table]:
    pending: list[pa.Table] = []
    have = 0
    for table in tables:
        pending.append(table)
        have += table.num_rows
        while have >= size:
            merged = pa.concat_tables(pending) if len(pending) > 1 else pending[0]
            yield merged.slice(0, size).combine_chunks()
            rest = merged.slice(size)
            pending, have = ([rest] if rest.num_rows else []), rest.num_rows
    if have:
        merged = pa.concat_tables(pending) if len(pending) > 1 else pending[0]
        yield merged.combine_chunks()


# ---------------------------------------------------------------------------- measuring


class Measure:
    """Streaming statistics of event tables: rate, type mix, burst lengths."""

    def __init__(self) -> None:
        self.events = 0
        self.first_us: int | None = None
        self.last_us: int | None = None
        self.counts: dict[str, int] = {}
        self.runs: dict[str, int] = {}
        self.last_type: str | None = None
        self.ordered = True

    def update(self, table: pa.Table | pa.RecordBatch) -> Measure:
        n = table.num_rows
        if n == 0:
            return self
        ts = pc.cast(table.column("ts"), pa.timestamp("us", tz="UTC")).cast(pa.int64())
        ts_np = np.asarray(ts.to_numpy(zero_copy_only=False), dtype=np.int64)
        if self.last_us is not None and ts_np[0] < self.last_us:
            self.ordered = False
        if (np.diff(ts_np) < 0).any():
            self.ordered = False
        if self.first_us is None:
            self.first_us = int(ts_np[0])
        self.last_us = int(ts_np[-1])
        enc = pc.dictionary_encode(table.column("type")).combine_chunks()
        names = enc.dictionary.to_pylist()
        codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        counts = np.bincount(codes, minlength=len(names))
        starts = np.r_[True, codes[1:] != codes[:-1]]
        if self.last_type is not None and names[codes[0]] == self.last_type:
            starts[0] = False
        run_counts = np.bincount(codes[starts], minlength=len(names))
        for i, name in enumerate(names):
            self.counts[name] = self.counts.get(name, 0) + int(counts[i])
            self.runs[name] = self.runs.get(name, 0) + int(run_counts[i])
        self.last_type = names[codes[-1]]
        self.events += n
        return self

    def result(self) -> dict[str, Any]:
        span = 0.0 if self.first_us is None else (self.last_us - self.first_us) / US
        runs = sum(self.runs.values())
        return {
            "events": self.events,
            "start": None if self.first_us is None else _iso(self.first_us),
            "end": None if self.last_us is None else _iso(self.last_us),
            "span_seconds": span,
            "rate_per_second": (self.events - 1) / span if span > 0 else None,
            "type_mix": {t: c / self.events for t, c in sorted(self.counts.items())} if self.events else {},
            "type_counts": dict(sorted(self.counts.items())),
            "bursts": runs,
            "mean_burst": self.events / runs if runs else None,
            "mean_burst_by_type": {t: self.counts[t] / r for t, r in sorted(self.runs.items()) if r},
            "time_ordered": self.ordered,
        }


def _iso(us: int) -> str:
    seconds, micros = divmod(int(us), US)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=micros).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def measure(table: pa.Table | pa.RecordBatch | Iterable[pa.Table]) -> dict[str, Any]:
    """What events really look like: ``rate_per_second`` ((n-1)/span), ``type_mix`` (fractions),
    ``mean_burst`` (events per maximal run of one type), per-type burst lengths, span, order."""
    m = Measure()
    if isinstance(table, (pa.Table, pa.RecordBatch)):
        return m.update(table).result()
    for t in table:
        m.update(t)
    return m.result()


# ---------------------------------------------------------------------------- writing


def _format_of(path: Path, format: str | None) -> str:
    if format is None:
        return SUFFIX_FORMATS.get(path.suffix.lower(), "parquet")
    fmt = format.lower()
    if fmt == "json":
        fmt = "jsonl"
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    return fmt


def _text_columns(table: pa.Table) -> list[tuple[str, pa.Array, bool]]:
    """(name, text values with nulls, quoted-in-JSON) per column; ts as ISO-8601 UTC."""
    out = []
    for name in table.column_names:
        col = table.column(name).combine_chunks() if isinstance(table.column(name), pa.ChunkedArray) else table.column(name)
        if pa.types.is_timestamp(col.type):
            col = pc.cast(col, pa.timestamp("us", tz="UTC"))
            out.append((name, pc.strftime(col, format="%Y-%m-%dT%H:%M:%SZ"), True))
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            out.append((name, col, True))
        else:
            out.append((name, col.cast(pa.string()), False))
    return out


def _json_escape(arr: pa.Array) -> pa.Array:
    arr = pc.replace_substring(arr, "\\", "\\\\")
    arr = pc.replace_substring(arr, '"', '\\"')
    for raw, esc in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"), ("\f", "\\f")):
        arr = pc.replace_substring(arr, raw, esc)
    return arr


def _jsonl_bytes(table: pa.Table) -> bytes:
    if table.num_rows == 0:
        return b""
    parts = []
    for name, values, quoted in _text_columns(table):
        key = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '":'
        if quoted:
            values = pc.binary_join_element_wise(key + '"', _json_escape(values), '"', "")
        else:
            values = pc.binary_join_element_wise(key, values, "")
        parts.append(values)
    lines = pc.binary_join_element_wise(*parts, ",", null_handling="skip")
    lines = pc.binary_join_element_wise("{", lines, "}", "")
    return ("\n".join(lines.to_pylist()) + "\n").encode()


class _Writer:
    """One output file in one format; tables are appended in order."""

    def __init__(self, path: Path, fmt: str, schema: pa.Schema):
        self.path, self.fmt, self.schema = path, fmt, schema
        self.tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        self.rows = 0
        if fmt == "parquet":
            import pyarrow.parquet as pq

            self.pq = pq.ParquetWriter(str(self.tmp), schema, compression="snappy")
        else:
            self.fh = open(self.tmp, "wb")  # noqa: SIM115
            if fmt == "csv":
                self.fh.write((",".join(schema.names) + "\n").encode())

    def write(self, table: pa.Table) -> None:
        table = table.cast(self.schema) if table.schema != self.schema else table
        self.rows += table.num_rows
        if self.fmt == "parquet":
            self.pq.write_table(table)
        elif self.fmt == "csv":
            import pyarrow.csv as pcsv

            cols = _text_columns(table)
            text = pa.table({name: values for name, values, _ in cols})
            options = pcsv.WriteOptions(include_header=False, quoting_style="needed")
            pcsv.write_csv(text, self.fh, write_options=options)
        else:
            self.fh.write(_jsonl_bytes(table))

    def close(self) -> None:
        if self.fmt == "parquet":
            self.pq.close()
        else:
            self.fh.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        try:
            if self.fmt == "parquet":
                self.pq.close()
            else:
                self.fh.close()
        finally:
            self.tmp.unlink(missing_ok=True)


def write_tables(tables: Iterable[pa.Table], path: str | Path, schema: pa.Schema, *, format: str | None = None,
                 on_table: Callable[[pa.Table], None] | None = None) -> Path:
    """Write event tables to ``path`` (Parquet, CSV with an ISO-8601 ``ts``, or JSON lines).

    The file appears atomically (written under a hidden temporary name, then
    renamed), so a landing folder never shows a half-written file.
    """
    path = Path(path)
    fmt = _format_of(path, format)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = _Writer(path, fmt, schema)
    try:
        for table in tables:
            writer.write(table)
            if on_table is not None:
                on_table(table)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    return path


def write_events(
    stream: str,
    path: str | Path,
    events: int,
    seed: int = 0,
    *,
    format: str | None = None,
    progress: bool = False,
    stats: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Path:
    """Generate ``events`` events of ``stream`` into ``path``; returns the path.

    ``format`` is ``parquet``, ``csv`` or ``jsonl`` (default: from the suffix,
    else Parquet). Other keyword arguments go to ``generate``. With
    ``progress`` a tqdm bar counts events; a ``stats`` dict receives
    ``measure``'s figures plus ``seconds`` and ``events_per_second``.
    """
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=int(events), unit="ev", unit_scale=True, desc=f"{stream} -> {Path(path).name}",
                   file=sys.stderr, dynamic_ncols=True)
    meter = Measure() if stats is not None else None

    def seen(table: pa.Table) -> None:
        if bar is not None:
            bar.update(table.num_rows)
        if meter is not None:
            meter.update(table)

    started = time.perf_counter()
    try:
        out = write_tables(generate(stream, events, seed, **kwargs), path, arrow_schema(stream),
                           format=format, on_table=seen)
    finally:
        if bar is not None:
            bar.close()
    if stats is not None and meter is not None:
        elapsed = time.perf_counter() - started
        stats.update(meter.result())
        stats["seconds"] = elapsed
        stats["events_per_second"] = events / elapsed if elapsed > 0 else None
    return out


# ---------------------------------------------------------------------------- CLI


def _mix_arg(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"--mix wants TYPE=WEIGHT[,TYPE=WEIGHT...], got {part!r}")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--mix weight of {name!r} is not a number: {value!r}") from None
    return out


def _param_arg(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"--param wants NAME=VALUE, got {text!r}")
    v: Any = value
    for cast in (int, float):
        try:
            v = cast(value)
            break
        except ValueError:
            continue
    return name.strip(), v


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="write a seeded synthetic event stream (rides, stocks, linear_road, ...)",
        description=(
            "Generate N events of a bundled stream with a seeded generator shaped after the papers' data "
            "sets (docs/generators.md) and write them to a Parquet, CSV or JSON-lines file. Same seed and "
            "parameters, same bytes."
        ),
    )
    p.add_argument("stream", nargs="?", help=f"stream: {', '.join(STREAMS)}")
    p.add_argument("--events", "-n", type=int, help="number of events")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", "-o", type=Path, help="output file (.parquet, .csv, .jsonl)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: from the file suffix)")
    p.add_argument("--rate", type=float, metavar="R", help="events per second (default: the stream's)")
    p.add_argument("--burst", type=float, metavar="B", help="mean burst length: events per run of one type (default: the stream's)")
    p.add_argument("--start", default="2026-01-01T00:00:00Z", metavar="ISO", help="time of the first event (default 2026-01-01T00:00:00Z)")
    p.add_argument("--mix", type=_mix_arg, metavar="T=W,...", help="override type weights, e.g. Travel=8,Cancel=0.5")
    p.add_argument("--param", type=_param_arg, action="append", default=[], metavar="NAME=VALUE",
                   help="stream model parameter, e.g. drivers=500 (repeatable; see --list)")
    p.add_argument("--chunk-size", type=int, default=1_000_000, help="rows per written chunk / row group")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: on for 1M events or more)")
    p.add_argument("--list", action="store_true", help="list the streams with their defaults and parameters")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if args.list:
        for name, spec in STREAMS.items():
            params = ", ".join(f"{k}={v}" for k, v in spec.params.items()) or "-"
            print(f"{name:12s} {spec.description}")
            print(f"{'':12s}   source: {spec.source}")
            print(f"{'':12s}   rate {spec.rate:g}/s, burst {spec.burst:g}, params: {params}")
        return 0
    if not args.stream or args.events is None or args.out is None:
        print("trendlake generate: error: STREAM, --events and --out are required (or --list)", file=sys.stderr)
        return 2
    progress = args.progress if args.progress is not None else args.events >= 1_000_000
    stats: dict[str, Any] = {}
    try:
        path = write_events(
            args.stream, args.out, args.events, args.seed, format=args.format, progress=progress, stats=stats,
            start=args.start, rate_per_second=args.rate, burst=args.burst, mix=args.mix,
            chunk_size=args.chunk_size, **dict(args.param),
        )
    except (ValueError, FileNotFoundError) as err:
        print(f"trendlake generate: error: {err}", file=sys.stderr)
        return 2
    top = sorted(stats["type_mix"].items(), key=lambda kv: -kv[1])[:6]
    mix = ", ".join(f"{t} {f:.1%}" for t, f in top)
    rate = stats["rate_per_second"]
    burst = stats["mean_burst"]
    print(
        f"wrote {stats['events']} {args.stream} events to {path} in {stats['seconds']:.1f}s "
        f"({stats['events_per_second'] or 0:,.0f} events/s)\n"
        f"  {stats['start']} .. {stats['end']}, rate {rate or 0:.2f}/s, mean burst {burst or 0:.2f}, mix: {mix}",
        file=sys.stderr,
    )
    return 0
