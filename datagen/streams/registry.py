"""The registry of stream models: ``STREAMS`` maps a bundled stream name to its ``StreamSpec``.

One module per model (``rides``, ``stocks``, ...); adding a stream means a
schema in ``schemas/streams/``, a module here with a ``SPEC`` and a line below.
"""

from __future__ import annotations

from trendlake.datagen.streams import (
    bus,
    cluster,
    ecommerce,
    linear_road,
    rides,
    smart_home,
    stocks,
    taxi_zones,
)
from trendlake.datagen.streams.base import StreamSpec

STREAMS: dict[str, StreamSpec] = {
    spec.name: spec
    for spec in (
        rides.SPEC, stocks.SPEC, linear_road.SPEC, smart_home.SPEC, ecommerce.SPEC, cluster.SPEC, bus.SPEC,
        taxi_zones.SPEC,
    )
}


def stream_spec(stream: str) -> StreamSpec:
    """The registry entry of ``stream``; an unknown name is a ValueError listing the known ones."""
    try:
        return STREAMS[stream]
    except KeyError:
        raise ValueError(f"no generator for stream {stream!r} (known: {', '.join(STREAMS)})") from None
