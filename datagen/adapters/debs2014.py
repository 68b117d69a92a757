"""DEBS 2014 grand challenge smart-plug CSV -> ``smart_home``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from trendlake.datagen.adapters.base import (
    US,
    Adapter,
    Chunk,
    Events,
    Reasons,
    arrow_col,
    headerless_csv,
    parse_float,
    parse_int,
)

DEBS_COLUMNS = ["id", "timestamp", "value", "property", "plug_id", "household_id", "house_id"]


def _debs_events(chunk: Chunk, opts: dict[str, Any], reasons: Reasons) -> Events:
    c = chunk.columns
    n = chunk.size
    rid = parse_int(c["id"])
    ts = parse_float(c["timestamp"])
    value = parse_float(c["value"])
    prop = parse_int(c["property"])
    plug, household, house = parse_int(c["plug_id"]), parse_int(c["household_id"]), parse_int(c["house_id"])
    reasons.parsed(ts, "timestamp", required=True)
    reasons.parsed(value, "value", required=True)
    reasons.parsed(prop, "property", "integer", required=True)
    reasons.add(prop.ok & (prop.values != 0) & (prop.values != 1), "property not 0 (work) or 1 (load)")
    for num, name in ((rid, "id"), (plug, "plug_id"), (household, "household_id"), (house, "house_id")):
        reasons.parsed(num, name, "integer", required=name != "id")
    is_load = prop.values == 1
    types = pa.array(np.where(is_load, "Load", "Work").astype(object), pa.string())
    ts_us = np.round(np.nan_to_num(ts.values) * US).astype(np.int64)
    return Events(np.arange(n), types, ts_us, {
        "house": arrow_col(house.values, pa.int64(), house.ok),
        "household": arrow_col(household.values, pa.int64(), household.ok),
        "plug": arrow_col(plug.values, pa.int64(), plug.ok),
        "load": arrow_col(value.values, pa.float64(), value.ok),
        "work": arrow_col(value.values, pa.float64(), value.ok),
        "reading": arrow_col(rid.values, pa.int64(), rid.ok),
    })


ADAPTER = Adapter(
    "debs2014", "smart_home", "DEBS 2014 grand challenge smart-plug CSV -> smart_home",
    "https://debs.org/grand-challenges/2014/", (), read=headerless_csv(DEBS_COLUMNS, _debs_events),
)
