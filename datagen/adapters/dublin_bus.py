"""Dublin bus GPS CSV (Dublinked 2012/2013, no header, 15 columns) -> ``bus``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from trendlake.datagen.adapters.base import (
    Adapter,
    Chunk,
    Events,
    Reasons,
    arrow_col,
    headerless_csv,
    parse_float,
    parse_int,
    text_values,
)

DUBLIN_COLUMNS = ["timestamp", "line", "direction", "journey_pattern", "time_frame", "journey", "operator",
                  "congestion", "lon", "lat", "delay", "block", "vehicle", "stop", "at_stop"]


def _dublin_events(chunk: Chunk, opts: dict[str, Any], reasons: Reasons) -> Events:
    c = chunk.columns
    n = chunk.size
    ts = parse_int(c["timestamp"])
    reasons.parsed(ts, "timestamp", "integer", required=True)
    nums = {}
    for name in ("direction", "journey", "congestion", "delay", "block", "vehicle", "stop", "at_stop"):
        nums[name] = parse_int(c[name])
        reasons.parsed(nums[name], name, "integer", required=name not in ("block", "stop"))
    for name in ("congestion", "at_stop"):
        v = nums[name]
        reasons.add(v.ok & (v.values != 0) & (v.values != 1), f"{name} not 0 or 1")
    lon, lat = parse_float(c["lon"]), parse_float(c["lat"])
    reasons.parsed(lon, "lon", required=True)
    reasons.parsed(lat, "lat", required=True)
    at_stop = nums["at_stop"].values == 1
    congested = nums["congestion"].values == 1
    types = np.where(at_stop, "AtStop", np.where(congested, "Congested", "Moving")).astype(object)
    line, _ = text_values(c["line"])
    pattern, _ = text_values(c["journey_pattern"])
    operator, _ = text_values(c["operator"])
    attrs = {name: arrow_col(nums[name].values, pa.int64(), nums[name].ok)
             for name in ("vehicle", "direction", "journey", "block", "stop", "delay")}
    attrs.update({
        "line": line, "journey_pattern": pattern, "operator": operator,
        "congestion": arrow_col(congested, pa.bool_(), nums["congestion"].ok),
        "at_stop": arrow_col(at_stop, pa.bool_(), nums["at_stop"].ok),
        "lon": arrow_col(lon.values, pa.float64(), lon.ok),
        "lat": arrow_col(lat.values, pa.float64(), lat.ok),
    })
    return Events(np.arange(n), pa.array(types, pa.string()), ts.values, attrs)


ADAPTER = Adapter(
    "dublin_bus", "bus", "Dublin bus GPS CSV (Dublinked 2012/2013) -> bus",
    "https://data.gov.ie/dataset/dublin-bus-gps-sample-data-from-dublin-city-council-insight-project",
    (), read=headerless_csv(DUBLIN_COLUMNS, _dublin_events),
)
