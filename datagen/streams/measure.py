"""What event tables really hold: rate, type mix, burst lengths (``measure``, ``Measure``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from trendlake.datagen.streams.base import US


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
