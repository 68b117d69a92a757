"""Time stamps as the jobs pass them: microseconds since the Unix epoch (``micros``) and the
UTC ``datetime`` a Delta table or a message shows (``utc``); the parsing rules are the
engine's (``engine.timeline.parse_ts``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def micros(value: Any) -> int:
    """µs since the epoch of ISO-8601 text, epoch seconds, a ``datetime``, or µs (an int)."""
    from trendlake.engine.timeline import parse_ts

    return value if isinstance(value, int) and not isinstance(value, bool) else parse_ts(value)


def utc(us: int) -> datetime:
    """The UTC ``datetime`` of ``us`` µs since the epoch, exact to the microsecond."""
    seconds, rest = divmod(us, 1_000_000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=rest)
