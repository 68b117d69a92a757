"""Bus GPS records (Dublin bus, as used by GLORIA): the ``bus`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import (
    US,
    Col,
    Context,
    Model,
    StreamSpec,
    hash_ints,
    round_to,
    splitmix,
    unit_float,
)

BUS_LINES = ["1", "4", "7", "9", "11", "13", "14", "15", "15A", "15B", "16", "25", "25A", "27", "27B",
             "31", "32", "33", "37", "38", "39", "39A", "40", "41", "42", "44", "46A", "47", "49", "54A",
             "56A", "65", "66", "67", "68", "69", "70", "79", "83", "84", "102", "104", "123", "130",
             "140", "145", "150", "151"]
BUS_OPERATORS = ["D1", "D2", "D3", "D4", "D5", "SL", "HN", "PO", "CD", "RD"]


class _Bus(Model):
    """Buses driving their line back and forth; delay drifts within a journey."""

    def __init__(self, ctx: Context) -> None:
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
        lon = round_to(a[:, 0] + (b[:, 0] - a[:, 0]) * frac + rng.normal(0, 2e-4, n), 6)
        lat = round_to(a[:, 1] + (b[:, 1] - a[:, 1]) * frac + rng.normal(0, 2e-4, n), 6)
        h = hash_ints(self.ctx.seed, v, trip)
        base = -60.0 + unit_float(h) * 360.0
        slope = -5.0 + unit_float(splitmix(h)) * 25.0  # s per minute
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


SPEC = StreamSpec(
    "bus", "bus GPS records: moving, at a stop, in congestion",
    "Dublin bus GPS data set as used by GLORIA",
    rate=50.0, burst=2.0, mix={"Moving": 0.7, "AtStop": 0.2, "Congested": 0.1},
    params={"vehicles": 500, "lines": 40, "stops": 40, "journey_minutes": 60.0},
    model=_Bus,
)
