"""Seeded synthetic event streams (``trendlake generate``), shaped after the papers' data sets.

``generate(stream, events, seed)`` yields time-ordered ``pyarrow.Table`` chunks
with the columns ``type``, ``ts`` (timestamp[us, UTC]) and every attribute of
the stream schema (``schemas/streams/<stream>.json``), null where an event
type does not carry the attribute. ``write_events`` streams the chunks to a
Parquet, CSV or JSON-lines file; ``measure`` reports what a table really has
(rate, type mix, mean burst length) so tests can hold the output to the
parameters.

How a stream is made (docs/generators.md has the details and the per-stream
models):

* **Types.** The type sequence is a chain of *bursts* (maximal runs of one
  type). Consecutive bursts have different types; burst lengths are geometric
  with mean ``burst``; the burst types follow a Markov chain whose stationary
  distribution is the type mix, so the event mix is the requested mix and the
  mean burst length is the requested ``burst``.
* **Time.** A Poisson process of ``rate_per_second`` events per second from
  ``start`` (the first event is at ``start``), µs precision.
* **Attributes.** A per-stream model fills them: trip lifecycles for ``rides``,
  per-company random-walk prices for ``stocks``, vehicles on a road for
  ``linear_road``, plugs for ``smart_home`` and so on.
* **Determinism.** Events are made in fixed internal segments of
  ``base.SEGMENT_EVENTS`` events, each with its own random generator derived from
  (seed, stream, segment number); ``chunk_size`` only re-slices the output, so
  the same seed and parameters give the same events at any chunk size and the
  same bytes in a file.

Layout: ``base`` (randomness, type chain, clock, ``Model``, ``StreamSpec``),
one module per stream model (``rides``, ``stocks``, ``linear_road``,
``smart_home``, ``ecommerce``, ``cluster``, ``bus``, ``taxi_zones``), the
registry ``STREAMS`` (``registry``), generation (``core``), ``measure``,
``writer``; the ``trendlake generate`` command is ``jobs/cli/generate.py``.
"""

from trendlake.datagen.streams.base import StreamSpec
from trendlake.datagen.streams.core import ARROW_TYPES, arrow_schema, generate
from trendlake.datagen.streams.measure import Measure, measure
from trendlake.datagen.streams.registry import STREAMS, stream_spec
from trendlake.datagen.streams.writer import FORMATS, SUFFIX_FORMATS, write_events, write_tables

__all__ = [
    "ARROW_TYPES",
    "FORMATS",
    "STREAMS",
    "SUFFIX_FORMATS",
    "Measure",
    "StreamSpec",
    "arrow_schema",
    "generate",
    "measure",
    "stream_spec",
    "write_events",
    "write_tables",
]
