"""Vehicle position reports typed by street (Linear Road): the ``linear_road`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import (
    US,
    Col,
    Context,
    Model,
    StreamSpec,
    round_to,
    weighted_choice,
)


class _LinearRoad(Model):
    """Vehicles cruising along expressways of 100 one-mile segments; the type is the street reported."""

    LENGTH_FT = 100 * 5280

    def __init__(self, ctx: Context) -> None:
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
        speed = round_to(np.clip(self.cruise[v] * (1.0 + rng.normal(0.0, 0.15, n)), 0.0, 100.0), 1)
        return {
            "vehicle": Col(v),
            "xway": Col(self.xway[v]),
            "direction": Col(self.direction[v]),
            "lane": Col(weighted_choice(rng, n, np.array([0.05, 0.3, 0.3, 0.3, 0.05]))),
            "segment": Col(pos // 5280),
            "position": Col(pos),
            "speed": Col(speed),
        }


SPEC = StreamSpec(
    "linear_road", "vehicle position reports typed by street",
    "Linear Road benchmark as used by Sharon/GRETA (up to 4k events/s)",
    rate=2_000.0, burst=1.0,
    mix={s: 1.0 for s in ["OakSt", "MainSt", "StateSt", "ElmSt", "ParkAve", "BroadSt", "WaterSt",
                          "HighSt", "MarketSt", "LakeSt", "HillRd", "RiverRd"]},
    params={"vehicles": 1000, "xways": 1},
    model=_LinearRoad,
)
