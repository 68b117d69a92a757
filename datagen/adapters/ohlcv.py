"""Daily or minute OHLCV bars (Date[,Time],Open,High,Low,Close,Volume[,Ticker]) -> ``stocks``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from trendlake.datagen.adapters.base import (
    Adapter,
    AdaptError,
    AdaptReport,
    Chunk,
    Events,
    MakeEvents,
    Reasons,
    arrow_col,
    csv_block_bytes,
    csv_chunks,
    local_to_utc,
    parse_float,
    parse_int,
    text_values,
)

OHLCV_NAMES = {  # canonical -> accepted header names (lower case, <> and spaces removed)
    "date": ("date", "day", "datetime", "timestamp"),
    "time": ("time",),
    "open": ("open",),
    "high": ("high",),
    "low": ("low",),
    "close": ("close", "last", "price"),
    "volume": ("volume", "vol"),
    "ticker": ("ticker", "symbol", "name"),
}
DATE_FORMATS = ("%Y-%m-%d", "%Y%m%d", "%m/%d/%Y", "%d.%m.%Y")
TIME_FORMATS = ("%H:%M:%S", "%H:%M", "%H%M%S", "%H%M")


def _ohlcv_header(fields: list[str]) -> list[str] | None:
    """Canonical column names of a header line, or None when the line is data (its first field is a date)."""
    first = fields[0].strip().strip('"') if fields else ""
    if first[:1].isdigit():
        return None
    names = []
    for f in fields:
        key = f.strip().strip('"').strip("<>").lower().replace(" ", "").replace("_", "")
        canon = next((c for c, alts in OHLCV_NAMES.items() if key in alts), None)
        names.append(canon if canon and canon not in names else f"_{key or len(names)}")
    return names


def _parse_times(text: pa.Array, formats: list[str]) -> tuple[np.ndarray, np.ndarray]:
    out = pa.nulls(len(text), pa.timestamp("us"))
    for fmt in formats:
        parsed = pc.strptime(text, format=fmt, unit="us", error_is_null=True)
        out = pc.coalesce(out, parsed)
    ok = ~np.asarray(out.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return np.asarray(out.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64), ok


def _ohlcv_events(chunk: Chunk, opts: dict[str, Any], reasons: Reasons) -> Events:
    c = chunk.columns
    n = chunk.size
    for need in ("date", "open", "high", "low", "close"):
        if need not in c:
            raise AdaptError(f"OHLCV file without a {need!r} column (columns: {', '.join(c)})")
    date, date_present = text_values(c["date"])
    reasons.add(~date_present, "missing date")
    if "time" in c:
        tm, tm_present = text_values(c["time"])
        reasons.add(date_present & ~tm_present, "missing time")
        joined = pc.binary_join_element_wise(date, tm, " ")
        formats = [f"{d} {t}" for d in DATE_FORMATS for t in TIME_FORMATS]
    else:
        joined = date
        formats = [f"{d} {t}" for d in DATE_FORMATS for t in ("%H:%M:%S", "%H:%M")] + list(DATE_FORMATS)
        formats += ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ"]
    local, ok = _parse_times(pc.fill_null(joined, ""), formats)
    reasons.add(date_present & ~ok, "unparseable date/time")
    ts = local_to_utc(local, opts["timezone"])
    prices = {k: parse_float(c[k]) for k in ("open", "high", "low", "close")}
    for k, num in prices.items():
        reasons.parsed(num, k.capitalize(), required=k == "close")
        reasons.add(num.ok & (num.values < 0), f"negative {k.capitalize()}")
    if "volume" in c:
        vol = parse_int(c["volume"])
        reasons.parsed(vol, "Volume", "integer", required=True)
        reasons.add(vol.ok & (vol.values < 0), "negative Volume")
        volume = arrow_col(vol.values, pa.int64(), vol.ok)
    else:
        volume = arrow_col(np.zeros(n, np.int64), pa.int64())
    if opts.get("ticker"):
        company = pa.array([opts["ticker"]] * n, pa.string())
    elif "ticker" in c:
        company, present = text_values(c["ticker"])
        reasons.add(~present, "missing ticker")
    else:
        company = pa.array([opts["file_ticker"]] * n, pa.string())
    return Events(np.arange(n), pa.array(["Trade"] * n, pa.string()), ts, {
        "company": company,
        "sector": pa.array([opts["sector"]] * n, pa.string()),
        "price": arrow_col(prices["close"].values, pa.float64(), prices["close"].ok),
        "volume": volume,
        "open": arrow_col(prices["open"].values, pa.float64(), prices["open"].ok),
        "high": arrow_col(prices["high"].values, pa.float64(), prices["high"].ok),
        "low": arrow_col(prices["low"].values, pa.float64(), prices["low"].ok),
    })


def _ticker_from_name(path: Path) -> str:
    """``aapl.us.txt`` -> ``AAPL``, ``MSFT_1min.csv`` -> ``MSFT``, ``BRK-B.csv`` -> ``BRK-B``."""
    name = path.name
    for suffix in (".gz", ".bz2", ".zst"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    stem = name.split(".")[0].split("_")[0]
    return stem.upper() or "UNKNOWN"


def prepare(opts: dict[str, Any]) -> str:
    """Defaults: sector ``unknown``, bar times in UTC."""
    opts.setdefault("sector", "unknown")
    opts.setdefault("timezone", "UTC")
    return "stocks"


def read(src: Path, opts: dict[str, Any], report: AdaptReport, chunk_rows: int) -> Iterator[tuple[Chunk, MakeEvents]]:
    """CSV blocks with a recognised header, or header-less Date[,Time],Open,High,Low,Close,Volume."""
    opts["file_ticker"] = _ticker_from_name(src)
    default = ["date", "time", "open", "high", "low", "close", "volume"]
    state: dict[str, Any] = {}

    def header(fields: list[str]) -> tuple[list[str], bool]:
        got = _ohlcv_header(fields)
        if got is not None:
            return got, True
        # no header: Date[,Time],Open,High,Low,Close,Volume[,more]
        timed = len(fields) > 1 and ":" in fields[1]
        names = [c for c in default if timed or c != "time"]
        state["headless"] = True
        return (names + [f"_extra{i}" for i in range(len(fields))])[: len(fields)], False

    for chunk in csv_chunks(src, report, names=None, header=header, block_bytes=csv_block_bytes(chunk_rows)):
        yield chunk, lambda ch, r: _ohlcv_events(ch, opts, r)
    if state.get("headless"):
        report.notes.append("no header line: columns taken as Date[,Time],Open,High,Low,Close,Volume")


ADAPTER = Adapter(
    "ohlcv", "stocks", "daily or minute OHLCV bars CSV -> stocks (one Trade per bar)",
    "Yahoo Finance / Stooq / Kaggle price histories", ("ticker", "sector", "timezone"),
    read=read, prepare=prepare,
)
