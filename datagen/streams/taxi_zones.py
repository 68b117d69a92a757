"""Taxi trips typed by pickup zone (NYC taxi, as used by GLORIA): the ``taxi_zones`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import (
    Col,
    Model,
    StreamSpec,
    round_to,
    taxi_fare,
    weighted_choice,
)


def _zone_weights() -> np.ndarray:
    rank = np.random.default_rng(265).permutation(265) + 1
    return 1.0 / rank


class _TaxiZones(Model):
    """One event per taxi trip, typed by its pickup zone (Zipf-like zone popularity)."""

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        km = rng.gamma(2.0, 2.0, n)
        minutes = km / rng.uniform(12.0, 35.0, n) * 60.0 + 1.0
        return {
            "vendor": Col(np.where(rng.random(n) < 0.3, 1, 2)),
            "trip": Col(offset + np.arange(n, dtype=np.int64)),
            "dropoff_zone": Col(1 + weighted_choice(rng, n, _zone_weights())),
            "passengers": Col(1 + weighted_choice(rng, n, np.array([0.7, 0.15, 0.06, 0.04, 0.03, 0.02]))),
            "distance": Col(round_to(km, 3)),
            "duration": Col(round_to(minutes * 60.0, 1)),
            "price": Col(round_to(taxi_fare(km, minutes) + 1.0, 2)),
        }


SPEC = StreamSpec(
    "taxi_zones", "taxi trips typed by pickup zone",
    "NYC taxi data set as used by GLORIA (pickup location as event type)",
    rate=200 / 60, burst=1.0,
    mix={f"Z{i + 1}": float(w) for i, w in enumerate(_zone_weights())},
    params={},
    model=_TaxiZones,
)
