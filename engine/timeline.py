"""Time in the engine: µs time stamps from text, windows, panes and key runs.

Windows are ``[k*slide, k*slide + within)`` (µs); a time stamp lies in the
windows ``window_range``; the stream is cut into *panes* at every window start
and end (``panes``). Events with equal time stamps form one *time-stamp group*
(``time_groups``): they are never adjacent in a trend. Sorted tables hold one
*key run* per partition (``key_runs``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = [
    "bool_mask",
    "format_ts",
    "key_runs",
    "number_or_text",
    "panes",
    "parse_ts",
    "time_groups",
    "window_bounds",
    "window_range",
]


def window_range(ts: int, within: int, slide: int) -> range:
    """Indexes k of the windows ``[k*slide, k*slide + within)`` containing ``ts``."""
    return range((ts - within) // slide + 1, ts // slide + 1)


def window_bounds(k: int, within: int, slide: int) -> tuple[int, int]:
    """Start and end (exclusive) of window ``k``."""
    start = k * slide
    return start, start + within


def panes(ts: np.ndarray, within: int, slide: int) -> np.ndarray:
    """Pane number of each time stamp: panes are cut at every window start and end."""
    q, r = np.divmod(ts, slide)
    off = within % slide
    if off == 0:
        return q
    return 2 * q + (r >= off)


class _Stamped(Protocol):
    ts: int


E = TypeVar("E", bound=_Stamped)


def time_groups(events: Sequence[E]) -> list[tuple[int, list[E]]]:
    """Time-ordered events as (time stamp, events with that time stamp) groups."""
    groups: list[tuple[int, list[E]]] = []
    for e in events:
        if groups and groups[-1][0] == e.ts:
            groups[-1][1].append(e)
        else:
            groups.append((e.ts, [e]))
    return groups


def bool_mask(arr: Any) -> np.ndarray:
    """A numpy bool array of an Arrow boolean (chunked) array without nulls."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.to_numpy(zero_copy_only=False).astype(bool, copy=False)


def key_runs(table: Any, keys: Sequence[str]) -> np.ndarray:
    """Boolean array: row i starts a new run of equal ``keys`` values (row 0 always does)."""
    import pyarrow.compute as pc

    n = table.num_rows
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    if n < 2:
        return change
    for k in keys:
        col = table.column(k)
        diff = pc.not_equal(col.slice(1), col.slice(0, n - 1))
        # a null next to a value (or two nulls) also separates runs
        diff = pc.fill_null(diff, True)
        change[1:] |= bool_mask(diff)
    return change


def number_or_text(text: str) -> Any:
    """An int or finite float when ``text`` reads as one, else ``text`` itself."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def parse_ts(value: Any) -> int:
    """A timestamp in µs UTC from ISO-8601 text, epoch seconds, or a datetime."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        delta = value - datetime(1970, 1, 1, tzinfo=UTC)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, bool):
        raise ValueError(f"not a timestamp: {value!r}")
    if isinstance(value, int):
        return value * 1_000_000
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a timestamp: {value!r}")
        return round(value * 1_000_000)
    if isinstance(value, str):
        text = value.strip()
        number = number_or_text(text)
        if isinstance(number, (int, float)):
            return parse_ts(number)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            return parse_ts(datetime.fromisoformat(text))
        except ValueError:
            raise ValueError(f"not a timestamp: {value!r}") from None
    raise ValueError(f"not a timestamp: {value!r}")


@functools.lru_cache(maxsize=4096)  # result rows repeat their windows' bounds
def format_ts(us: int) -> str:
    """ISO-8601 UTC text of a µs timestamp (``2026-01-01T00:30:00Z``)."""
    seconds, micros = divmod(us, 1_000_000)
    dt = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=micros)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if micros:
        text += f".{micros:06d}"
    return text + "Z"


KERNEL_CHUNK = 1 << 18  # events per kernel call over many partitions (whole partitions: a chunk may be larger)


def partition_chunks(idx: np.ndarray, starts: np.ndarray, size: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` ranges of ``idx`` (increasing rows of a key set whose partition p starts
    at row ``starts[p]``), about ``size`` long, never splitting a partition."""
    n = len(idx)
    out = []
    lo = 0
    while lo < n:
        hi = min(n, lo + size)
        if hi < n:
            nxt = int(np.searchsorted(starts, idx[hi - 1], side="right"))  # the next partition
            # the value in idx's own type: numpy would otherwise search a converted copy of idx
            hi = n if nxt >= len(starts) else int(np.searchsorted(idx, idx.dtype.type(starts[nxt]), side="left"))
        out.append((lo, hi))
        lo = hi
    return out


def partition_of(starts: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The partition of each of ``positions`` (rows, increasing or not), where partition p
    starts at row ``starts[p]``: 4-byte ids below 2**31 partitions."""
    out = np.searchsorted(starts, positions, side="right")
    out -= 1
    return out.astype(np.int32 if len(starts) < 2**31 else np.int64, copy=False)
