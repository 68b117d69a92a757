"""Job/task lifecycle events and resource measurements (GRETA): the ``cluster`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import Col, Context, Model, StreamSpec, round_to


class _Cluster(Model):
    """GRETA Table 13.1: job and mapper ids uniform 0-10, CPU and memory uniform 0-1k, load Poisson(100)."""

    def __init__(self, ctx: Context) -> None:
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
            "cpu": Col(round_to(rng.uniform(0.0, 1000.0, n), 2)),
            "memory": Col(round_to(rng.uniform(0.0, 1000.0, n), 2)),
            "load": Col(np.minimum(rng.poisson(self.load_mean, n), 10_000)),
            "priority": Col(rng.integers(0, 12, n)),
            "machine": Col(rng.integers(0, self.machines, n)),
        }


SPEC = StreamSpec(
    "cluster", "job/task lifecycle events and resource measurements",
    "GRETA cluster monitoring generator, Table 13.1 (3k events/s)",
    # Measurement is 55% of the mix, so runs of one type cannot all be 1 long (that needs a
    # type below half); 1.5 is about what independent draws from this mix give (1 / (1 - sum p^2))
    rate=3_000.0, burst=1.5,
    mix={"Measurement": 0.55, "Submit": 0.08, "Schedule": 0.08, "UpdatePending": 0.03,
         "UpdateRunning": 0.04, "Finish": 0.12, "Fail": 0.03, "Kill": 0.03, "Evict": 0.03, "Lost": 0.01},
    params={"max_job": 10, "max_mapper": 10, "machines": 100, "reducer_share": 0.3, "load_mean": 100.0},
    model=_Cluster,
)
