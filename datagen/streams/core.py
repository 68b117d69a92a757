"""Generation: a stream's type chain, clock and model run segment by segment into Arrow tables.

``generate(stream, events, seed)`` yields time-ordered tables of at most
``chunk_size`` rows; events are made in fixed segments of
``base.SEGMENT_EVENTS`` events, so ``chunk_size`` never changes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from trendlake.datagen.streams import base
from trendlake.datagen.streams.base import Clock, Col, Context, TypeChain, parse_start, seeded_rng
from trendlake.datagen.streams.registry import stream_spec

ARROW_TYPES = {"long": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_()}


def arrow_schema(stream: str | dict[str, Any]) -> pa.Schema:
    """Columns of a stream's events: type, ts, then every attribute in schema order."""
    if isinstance(stream, str):
        from trendlake.schemas import load_stream_schema

        stream = load_stream_schema(stream)
    fields = [pa.field("type", pa.string(), nullable=False), pa.field("ts", pa.timestamp("us", tz="UTC"), nullable=False)]
    for name, spec in stream["attributes"].items():
        fields.append(pa.field(name, ARROW_TYPES[spec["type"]]))
    return pa.schema(fields)


def _column(col: Col, kind: str, carried: np.ndarray | None) -> pa.Array:
    valid = col.valid
    if carried is not None:
        valid = carried if valid is None else (valid & carried)
    mask = None if valid is None else ~valid
    if col.vocab is not None:
        idx = pa.array(np.asarray(col.values, dtype=np.int32), mask=mask)
        return pc.take(pa.array(col.vocab, pa.string()), idx)
    values = np.asarray(col.values)
    if kind == "long":
        return pa.array(values.astype(np.int64), type=pa.int64(), mask=mask)
    if kind == "double":
        return pa.array(values.astype(np.float64), type=pa.float64(), mask=mask)
    if kind == "boolean":
        return pa.array(values.astype(bool), type=pa.bool_(), mask=mask)
    return pa.array([str(x) for x in values], type=pa.string(), mask=mask)


def _segments(stream: str, events: int, seed: int, start_us: int, rate: float, burst: float,
              mix: Mapping[str, float] | None, params: dict[str, Any]) -> Iterator[pa.Table]:
    spec = stream_spec(stream)
    schema = spec.schema()
    types = list(schema["event_types"])
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        known = ", ".join(spec.params) or "none"
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for stream {stream} (known: {known})")
    merged = {**spec.params, **params}
    weights = {t: float(spec.mix.get(t, 0.0)) for t in types}
    if mix:
        bad = sorted(set(mix) - set(types))
        if bad:
            raise ValueError(f"mix names unknown event type(s) {', '.join(bad)} of stream {stream}")
        weights.update({t: float(w) for t, w in mix.items()})
    chain = TypeChain(types, np.array([weights[t] for t in types]), burst)
    ctx = Context(stream, seed, start_us, rate, types, {t: i for i, t in enumerate(types)}, merged)
    model = spec.model(ctx)
    clock = Clock(start_us, rate)
    arrow = arrow_schema(schema)
    type_names = pa.array(types, pa.string())
    attrs = schema["attributes"]
    carriers = {name: a.get("types", "*") for name, a in attrs.items()}
    done, segment = 0, 0
    while done < events:
        n = min(base.SEGMENT_EVENTS, events - done)
        codes = chain.take(n, seeded_rng(seed, stream, segment, "types"))
        ts = clock.take(n, seeded_rng(seed, stream, segment, "time"))
        cols = model.segment(codes, ts, done, seeded_rng(seed, stream, segment, "attributes"))
        arrays = [pc.take(type_names, pa.array(codes)), pa.array(ts, pa.timestamp("us", tz="UTC"))]
        for name, a in attrs.items():
            carried = None if carriers[name] == "*" else np.isin(codes, [types.index(t) for t in carriers[name]])
            arrays.append(_column(cols[name], a["type"], carried))
        yield pa.Table.from_arrays(arrays, schema=arrow)
        done += n
        segment += 1


def generate(
    stream: str,
    events: int,
    seed: int = 0,
    *,
    start: str | datetime = "2026-01-01T00:00:00Z",
    rate_per_second: float | None = None,
    chunk_size: int = 1_000_000,
    burst: float | None = None,
    mix: Mapping[str, float] | None = None,
    **params: Any,
) -> Iterator[pa.Table]:
    """Yield ``events`` events of ``stream`` as time-ordered tables of at most ``chunk_size`` rows.

    ``rate_per_second`` and ``burst`` default to the stream's (``STREAMS[stream]``);
    ``mix`` overrides some type weights (others keep their defaults; all are
    normalised); other keyword arguments are the stream model's parameters
    (``STREAMS[stream].params``). Same arguments, same events.
    """
    spec = stream_spec(stream)
    events = int(events)
    if events < 0:
        raise ValueError("events must be >= 0")
    if int(seed) < 0:
        raise ValueError("seed must be >= 0")
    if int(chunk_size) < 1:
        raise ValueError("chunk_size must be >= 1")
    start_us = parse_start(start)
    rate = float(spec.rate if rate_per_second is None else rate_per_second)
    b = float(spec.burst if burst is None else burst)
    source = _segments(stream, events, int(seed), start_us, rate, b, mix, dict(params))
    return _rechunk(source, int(chunk_size))


def _rechunk(tables: Iterable[pa.Table], size: int) -> Iterator[pa.Table]:
    pending: list[pa.Table] = []
    have = 0
    for table in tables:
        pending.append(table)
        have += table.num_rows
        while have >= size:
            merged = pa.concat_tables(pending) if len(pending) > 1 else pending[0]
            yield merged.slice(0, size).combine_chunks()
            rest = merged.slice(size)
            pending, have = ([rest] if rest.num_rows else []), rest.num_rows
    if have:
        merged = pa.concat_tables(pending) if len(pending) > 1 else pending[0]
        yield merged.combine_chunks()
