"""NYC TLC trip records (yellow / green / high-volume FHV Parquet) -> ``rides`` or ``taxi_zones``."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from trendlake.datagen.adapters.base import (
    MILE_KM,
    US,
    Adapter,
    AdaptError,
    AdaptReport,
    Chunk,
    Events,
    MakeEvents,
    Num,
    Reasons,
    arrow_col,
    parquet_chunks,
    parse_float,
    parse_int,
    rename_values,
    text_values,
    timestamps,
)

TLC_COLUMNS = {  # role -> accepted column names (case-insensitive), first found wins
    "pickup": ("tpep_pickup_datetime", "lpep_pickup_datetime", "pickup_datetime"),
    "dropoff": ("tpep_dropoff_datetime", "lpep_dropoff_datetime", "dropoff_datetime"),
    "request": ("request_datetime",),
    "pu": ("pulocationid",),
    "do": ("dolocationid",),
    "passengers": ("passenger_count",),
    "distance": ("trip_distance", "trip_miles"),
    "fare": ("fare_amount", "base_passenger_fare"),
    "vendor": ("vendorid", "hvfhs_license_num"),
}
TLC_REQUIRED = ("pickup", "dropoff", "pu")
TLC_VENDORS = {1: "CMT", 2: "Curb", 6: "Myle", 7: "Helix"}
HVFHS = {"HV0002": "Juno", "HV0003": "Uber", "HV0004": "Via", "HV0005": "Lyft"}


def _load_zone_lookup(path: str | Path | None) -> dict[int, str] | None:
    """LocationID -> Borough from TLC's ``taxi_zone_lookup.csv`` (LocationID,Borough,Zone,service_zone)."""
    if path is None:
        return None
    out = {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        for row in csv.DictReader(fh):
            keys = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
            try:
                out[int(keys["locationid"])] = keys.get("borough") or "Unknown"
            except (KeyError, ValueError):
                continue
    if not out:
        raise AdaptError(f"{path}: no LocationID,Borough rows (want TLC's taxi_zone_lookup.csv)")
    return out


def _tlc_events(chunk: Chunk, cols: dict[str, str], opts: dict[str, Any], reasons: Reasons) -> Events:
    n = chunk.size
    c = chunk.columns
    tz = opts["timezone"]
    pick = timestamps(c[cols["pickup"]], tz)
    drop = timestamps(c[cols["dropoff"]], tz)
    reasons.parsed(pick, "pickup time", required=True)
    reasons.parsed(drop, "dropoff time", required=True)
    reasons.add(pick.present & drop.present & (drop.values < pick.values), "dropoff before pickup")
    if "request" in cols:
        req = timestamps(c[cols["request"]], tz)
        req_ts = np.where(req.present, req.values, pick.values)
        reasons.add(req.present & pick.present & (req.values > pick.values), "request after pickup")
    else:
        req_ts = pick.values
    pu = parse_int(c[cols["pu"]])
    reasons.parsed(pu, "PULocationID", "integer", required=True)
    reasons.add(pu.ok & ((pu.values < 1) | (pu.values > 265)), "PULocationID outside 1..265")
    do = parse_int(c[cols["do"]]) if "do" in cols else Num(np.zeros(n, np.int64), np.zeros(n, bool), np.zeros(n, bool))
    reasons.parsed(do, "DOLocationID", "integer")
    reasons.add(do.ok & ((do.values < 1) | (do.values > 265)), "DOLocationID outside 1..265")
    missing = Num(np.full(n, np.nan), np.zeros(n, bool), np.zeros(n, bool))
    pax = parse_int(c[cols["passengers"]]) if "passengers" in cols else missing
    reasons.parsed(pax, "passenger_count", "integer")
    reasons.add(pax.ok & ((pax.values < 0) | (pax.values > 9)), "passenger_count outside 0..9")
    dist = parse_float(c[cols["distance"]]) if "distance" in cols else missing
    reasons.parsed(dist, "trip distance")
    reasons.add(dist.ok & (dist.values < 0), "negative trip distance")
    fare = parse_float(c[cols["fare"]]) if "fare" in cols else missing
    reasons.parsed(fare, "fare")
    reasons.add(fare.ok & (fare.values < 0), "negative fare (a TLC correction record)")

    vendor_text: pa.Array = pa.nulls(n, pa.string())
    vendor_num = np.zeros(n, np.int64)
    vendor_ok = np.zeros(n, bool)
    if "vendor" in cols:
        raw = c[cols["vendor"]]
        raw = raw.combine_chunks() if isinstance(raw, pa.ChunkedArray) else raw
        if pa.types.is_string(raw.type) or pa.types.is_large_string(raw.type):  # HVFHV licence HV0003
            text, present = text_values(raw)
            v = parse_int(pc.replace_substring_regex(text, r"^[A-Za-z]+", ""))
            vendor_num, vendor_ok = v.values, v.ok
            vendor_text = rename_values(text, HVFHS)
            reasons.add(present & ~v.ok, "licence number without digits")
        else:
            v = parse_int(raw)
            reasons.parsed(v, "VendorID", "integer")
            vendor_num, vendor_ok = v.values, v.ok
            vendor_text = rename_values(arrow_col(vendor_num, pa.int64(), vendor_ok).cast(pa.string()),
                                  {str(k): name for k, name in TLC_VENDORS.items()})

    km = np.round(dist.values * MILE_KM, 3)
    duration = np.round((drop.values - pick.values) / US, 1)
    trip = chunk.lines.astype(np.int64)  # the source row number: a trip's key
    if opts["mode"] == "zones":
        reasons.add(~vendor_ok, "missing VendorID")
        types = pc.binary_join_element_wise("Z", pa.array(pu.values).cast(pa.string()), "")
        return Events(np.arange(n), types, pick.values, {
                           "vendor": arrow_col(vendor_num, pa.int64(), vendor_ok),
                           "trip": arrow_col(trip, pa.int64()),
                           "dropoff_zone": arrow_col(do.values, pa.int64(), do.ok),
                           "passengers": arrow_col(np.nan_to_num(pax.values).astype(np.int64), pa.int64(), pax.ok),
                           "distance": arrow_col(km, pa.float64(), dist.ok),
                           "duration": arrow_col(duration, pa.float64(), pick.ok & drop.ok),
                           "price": arrow_col(np.round(fare.values, 2), pa.float64(), fare.ok),
                       })
    # rides: Request, Pickup, Dropoff per trip (in this order for equal times)
    lookup = opts.get("zones")
    zone = np.where(pu.ok, pu.values, 0).clip(0, 265)
    if lookup is not None:
        names = pa.array([lookup.get(z, "Unknown") for z in range(266)], pa.string())
    else:
        names = pa.array([f"Z{z}" for z in range(266)], pa.string())
    district = pc.if_else(pa.array(pu.ok), names.take(pa.array(zone)), pa.scalar(None, pa.string()))
    pax_ok = pax.ok & (np.nan_to_num(pax.values) >= 1)  # 0 passengers = unknown in TLC data
    src = np.concatenate([np.arange(n)] * 3)
    types = pa.array(["Request"] * n + ["Pickup"] * n + ["Dropoff"] * n, pa.string())
    three = lambda a: np.concatenate([a] * 3)  # noqa: E731
    attrs = {
        "driver": arrow_col(three(trip), pa.int64()),
        "rider": arrow_col(three(trip), pa.int64()),
        "district": pa.concat_arrays([district] * 3),
        "duration": arrow_col(three(duration), pa.float64(), three(pick.ok & drop.ok)),
        "price": arrow_col(np.r_[np.full(n, np.nan), np.full(n, np.nan), np.round(fare.values, 2)], pa.float64(),
                      np.r_[np.zeros(2 * n, bool), fare.ok]),
        "distance": arrow_col(three(km), pa.float64(), three(dist.ok)),
        "passengers": arrow_col(three(np.nan_to_num(pax.values).astype(np.int64)), pa.int64(), three(pax_ok)),
        "pickup_zone": arrow_col(three(pu.values), pa.int64(), three(pu.ok)),
        "dropoff_zone": arrow_col(three(do.values), pa.int64(), three(do.ok)),
        "vendor": pa.concat_arrays([vendor_text] * 3),
    }
    return Events(src, types, np.concatenate([req_ts, pick.values, drop.values]), attrs)


def prepare(opts: dict[str, Any]) -> str:
    """Defaults (rides mode, New York local times), the zone lookup; the stream of the chosen mode."""
    opts.setdefault("mode", "rides")
    opts.setdefault("timezone", "America/New_York")
    if opts["mode"] not in ("rides", "zones"):
        raise AdaptError(f"tlc mode must be 'rides' or 'zones', got {opts['mode']!r}")
    opts["zones"] = _load_zone_lookup(opts.get("zone_lookup"))
    return "taxi_zones" if opts["mode"] == "zones" else "rides"


def read(src: Path, opts: dict[str, Any], report: AdaptReport, chunk_rows: int) -> Iterator[tuple[Chunk, MakeEvents]]:
    """Parquet row batches of the columns TLC files of every vintage name differently."""
    import pyarrow.parquet as pq

    if src.suffix.lower() not in (".parquet", ".parq", ".pq"):
        raise AdaptError(f"{src}: TLC trip records are read from Parquet files (as TLC publishes them)")
    names = pq.ParquetFile(str(src)).schema_arrow.names
    lower = {n.lower(): n for n in names}
    cols = {}
    for role, alts in TLC_COLUMNS.items():
        hit = next((lower[a] for a in alts if a in lower), None)
        if hit is not None:
            cols[role] = hit
    missing = [r for r in TLC_REQUIRED if r not in cols]
    if missing:
        want = "; ".join(" or ".join(TLC_COLUMNS[r]) for r in missing)
        raise AdaptError(f"{src}: not a TLC trip file, missing column(s): {want}")
    for chunk in parquet_chunks(src, report, sorted(set(cols.values())), chunk_rows):
        yield chunk, lambda ch, r, cols=cols: _tlc_events(ch, cols, opts, r)


ADAPTER = Adapter(
    "tlc", "rides", "NYC TLC trip records (yellow / green / HVFHV Parquet) -> rides (or taxi_zones)",
    "https://www.nyc.gov/site/tlc/about/tlc-trip-record-data.page", ("mode", "timezone", "zone_lookup"),
    read=read, prepare=prepare,
)
