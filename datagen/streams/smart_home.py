"""Smart-plug load and work readings (DEBS 2014): the ``smart_home`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import US, Col, Context, Model, StreamSpec, round_to


class _SmartHome(Model):
    """Plugs of households of houses (DEBS 2014): noisy load around a per-plug level, monotone work."""

    def __init__(self, ctx: Context) -> None:
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
            "load": Col(round_to(load, 3)),
            "work": Col(round_to(self.work0[k] + self.base[k] * hours / 1000.0, 3)),
            "reading": Col(offset + np.arange(n, dtype=np.int64)),
        }


SPEC = StreamSpec(
    "smart_home", "smart-plug load and work readings",
    "DEBS 2014 grand challenge as used by Hamlet (20k events/min)",
    rate=20_000 / 60, burst=2.0, mix={"Load": 0.5, "Work": 0.5},
    params={"houses": 40, "households": 6, "plugs": 9},
    model=_SmartHome,
)
