"""The registry of source adapters: ``ADAPTERS`` maps a kind to its ``Adapter``; ``ALIASES`` other names users type."""

from __future__ import annotations

from trendlake.datagen.adapters import debs2014, dublin_bus, ohlcv, tlc
from trendlake.datagen.adapters.base import Adapter

ADAPTERS: dict[str, Adapter] = {a.kind: a for a in (tlc.ADAPTER, debs2014.ADAPTER, ohlcv.ADAPTER, dublin_bus.ADAPTER)}
ALIASES = {"nyc_tlc": "tlc", "taxi": "tlc", "debs": "debs2014", "smart_plugs": "debs2014", "stocks": "ohlcv",
           "bus": "dublin_bus", "dublin": "dublin_bus"}
