"""A small, seeded ride-sharing stream for pipeline tests (two days, a few hundred trips).

Trips follow the lifecycle Request -> Accept -> Travel+ -> (Pickup -> Travel+ ->
Dropoff | Cancel), interleaved across districts, so every query of the sample
workload finds trends, including trips with no pickup in a window.
"""

from __future__ import annotations

import csv
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

DISTRICTS = ("north", "south", "center", "harbor")
COLUMNS = ("type", "ts", "driver", "rider", "district", "duration", "speed", "price")
DAY = datetime(2026, 1, 1, tzinfo=UTC)


def trip_rows(trips: int, seed: int, start: datetime = DAY, hours: float = 48.0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(trips):
        t = start + timedelta(seconds=rng.uniform(0, hours * 3600 - 3600))
        driver, rider, district = rng.randrange(12), rng.randrange(40), rng.choice(DISTRICTS)
        base = {"driver": driver, "rider": rider, "district": district}

        def emit(etype: str, **attrs: float) -> None:
            rows.append({"type": etype, "ts": t.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), **base, **attrs})  # noqa: B023 - called at once, never stored

        emit("Request", price=round(rng.uniform(5, 40), 2))
        t += timedelta(seconds=rng.randint(5, 60))
        emit("Accept")
        for _ in range(rng.randint(1, 4)):
            t += timedelta(seconds=rng.randint(20, 200))
            emit("Travel", duration=float(rng.randint(20, 200)), speed=round(rng.uniform(2, 30), 1))
        t += timedelta(seconds=rng.randint(20, 200))
        if rng.random() < 0.25:
            emit("Cancel")
            continue
        if rng.random() < 0.2:
            continue  # stuck: never picked up
        emit("Pickup")
        for _ in range(rng.randint(1, 3)):
            t += timedelta(seconds=rng.randint(20, 300))
            emit("Travel", duration=float(rng.randint(20, 300)), speed=round(rng.uniform(5, 60), 1))
        t += timedelta(seconds=rng.randint(20, 200))
        emit("Dropoff", duration=float(rng.randint(200, 2000)), price=round(rng.uniform(5, 80), 2))
    rows.sort(key=lambda r: r["ts"])
    return rows


def write_csv(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in COLUMNS})
    return path
