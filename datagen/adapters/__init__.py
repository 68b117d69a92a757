"""Adapters for real public data files (``trendlake adapt``): source rows -> an event file ``ingest`` accepts.

``adapt(kind, src_path, out_path, **options)`` reads the source in chunks
(never the whole file in memory), converts every row to events of a bundled
stream, checks the events against the stream schema (so the file it writes
passes ``ingest`` with no quarantined row) and writes them with
``trendlake.datagen.streams.write_tables`` (Parquet, CSV or JSON lines from the suffix of
``out_path``; the file appears atomically). A source row that cannot be
converted is skipped, counted and its reason reported with the first few line
(or Parquet row) numbers: ``rows_read == rows_converted + rows_skipped``.

Kinds (docs/generators.md has the formats and download pages):

* ``tlc``: NYC TLC trip records (yellow / green / high-volume FHV Parquet).
  ``mode="rides"`` (default) -> ``rides``: Request, Pickup and Dropoff per trip;
  ``mode="zones"`` -> ``taxi_zones``: one event per trip at pickup, typed ``Z<PULocationID>``.
* ``debs2014``: DEBS 2014 grand challenge smart-plug CSV (no header:
  id,timestamp,value,property,plug_id,household_id,house_id) -> ``smart_home``.
* ``ohlcv``: daily or minute bars (Date[,Time],Open,High,Low,Close,Volume[,Ticker])
  -> ``stocks``: one Trade per bar.
* ``dublin_bus``: Dublin bus GPS CSV (Dublinked 2012/2013, no header, 15 columns) -> ``bus``.

Events are sorted by time within each chunk (stable); a source sorted by
time gives a sorted file. Replay orders by time anyway.

Layout: ``base`` (report, parsing, chunked reading, schema checks, the
``Adapter`` entry), one module per source (``tlc``, ``debs2014``, ``ohlcv``,
``dublin_bus``), the registry ``ADAPTERS`` (``registry``), ``adapt``
(``core``); the ``trendlake adapt`` command is ``jobs/cli/adapt.py``.
"""

from trendlake.datagen.adapters.base import Adapter, AdaptError, AdaptReport
from trendlake.datagen.adapters.core import adapt
from trendlake.datagen.adapters.registry import ADAPTERS, ALIASES

__all__ = ["ADAPTERS", "ALIASES", "AdaptError", "AdaptReport", "Adapter", "adapt"]
