"""The Arrow half of the typing rules: raw Arrow columns (text, or the numbers, booleans,
timestamps and decimals Parquet and JSON lines hold) typed by ``rules``, column at a time.

``trendlake eval`` reads event files with it (``engine.files``); ingest reads Parquet
column types with ``arrow_type_problem`` and ``invalid_utf8`` before Spark does. What a
column becomes is a ``Typed``: its values (null where missing or bad), which present
values do not fit, and the reason of each (``rules``' words). Arrow is imported inside
the functions, numpy at the top; nothing here imports Spark.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from trendlake.schemas.typing.rules import (
    DECIMAL,
    DEFAULT_TIME_UNIT,
    FALSE_WORDS,
    INTEGER,
    ISO_TIME,
    LONG_LIMIT,
    MAX_OFFSET_MINUTES,
    MAX_US,
    MIN_US,
    TIME_UNITS,
    TRUE_WORDS,
    TypingError,
    check_kind,
    check_time_unit,
    implausible_iso_reason,
    implausible_number_reason,
    not_a_kind_reason,
    unparseable_time_reason,
)

# ---------------------------------------------------------------------- Arrow types


def arrow_type_problem(kind: Any, role: str = "attribute") -> str | None:
    """None when values of the Arrow type ``kind`` are typed by the rules; else why a column of
    it is refused (both readers refuse it whole, naming the first row holding a value).

    Typed: integers of every width (uint64 beyond 2**63 - 1 is no long), floats, booleans,
    decimals (as their exact decimal text), text of every encoding (dictionary-encoded too),
    and the null type; for the time column (``role="time"``) also timestamps and dates.
    Refused: binary data, times of day, durations, intervals, timestamps and dates as
    attributes, and every nested type (list, struct, map, union)."""
    import pyarrow as pa

    t = pa.types
    if t.is_dictionary(kind):
        return arrow_type_problem(kind.value_type, role)
    if (t.is_integer(kind) or t.is_floating(kind) or t.is_boolean(kind) or t.is_null(kind) or t.is_decimal(kind)
            or t.is_string(kind) or t.is_large_string(kind) or t.is_string_view(kind)):
        return None
    if role == "time" and (t.is_timestamp(kind) or t.is_date(kind)):
        return None
    if t.is_struct(kind):
        return "a JSON object where a single value belongs"
    if t.is_map(kind):
        return "a map where a single value belongs"
    if t.is_list(kind) or t.is_large_list(kind) or t.is_fixed_size_list(kind) or t.is_list_view(kind) or (
            t.is_large_list_view(kind)):
        return "a list where a single value belongs"
    if t.is_binary(kind) or t.is_large_binary(kind) or t.is_fixed_size_binary(kind) or t.is_binary_view(kind):
        return f"binary data ({kind}) where text or a number belongs: store it as UTF-8 text"
    if role == "time":
        return f"a {kind} column is no point in time: store times as timestamps, epoch numbers or ISO-8601 text"
    if t.is_temporal(kind) or t.is_interval(kind):
        return (f"a {kind} column is no attribute type (long, double, string, boolean): "
                "store it as epoch numbers or as text")
    return f"Arrow type {kind} is no attribute type (long, double, string, boolean)"


def invalid_utf8(arr: Any) -> tuple[int, int] | None:
    """(row, byte) of the first value of a text column (Parquet's strings are not checked on
    reading) holding bytes that are not UTF-8; None when all are UTF-8 or it is no text."""
    import pyarrow as pa

    arr = combined(arr)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    try:
        arr.validate(full=True)
        return None
    except pa.ArrowInvalid:
        pass
    raw = arr.cast(pa.large_binary() if pa.types.is_large_string(arr.type) else pa.binary())
    for i, value in enumerate(raw.to_pylist()):
        if value is not None:
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as err:
                return i, value[err.start]
    return None



def java_double_text(value: float) -> str:
    """A double as Java's ``Double.toString`` writes it (shortest digits; ``1000.0``,
    ``1.0E20``, ``1.5E-5``, ``-0.0``, ``Infinity``): the text Spark gives a JSON number read as
    text, which both readers then type (a JSON number in a ``string`` column)."""
    import decimal

    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    magnitude = abs(value)
    if magnitude == 0.0:
        return f"{sign}0.0"
    exact = decimal.Decimal(repr(magnitude)).normalize()
    if 1e-3 <= magnitude < 1e7:
        text = f"{exact:f}"
        return sign + (text if "." in text else text + ".0")
    digits = "".join(map(str, exact.as_tuple().digits))
    exponent = len(digits) + int(exact.as_tuple().exponent) - 1
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"



# ---------------------------------------------------------------------- typing


@dataclass
class Typed:
    """A typed column: ``values`` (null where missing or bad), ``bad`` (a present value that
    does not fit), and the reason of each bad row on demand."""

    values: Any
    bad: np.ndarray
    reason_of: Callable[[int], str]

    def first_bad(self) -> int | None:
        hits = np.flatnonzero(self.bad)
        return int(hits[0]) if len(hits) else None


def np_bool(arr: Any) -> np.ndarray:
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def combined(arr: Any) -> Any:
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def as_text(arr: Any) -> Any:
    """A column as text the way the rules see it: strings as they are, empty text as null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = combined(arr)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if pa.types.is_floating(arr.type):
        # text of a float as ingest's Spark cast shows it: NaN and infinities as words
        arr = pc.if_else(pc.is_nan(arr), pa.scalar("NaN"), pc.cast(arr, pa.string()))
    elif not pa.types.is_string(arr.type):
        arr = pc.cast(arr, pa.string())
    if _has_empty(arr):
        arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, pa.string()), arr)
    return arr


def _has_empty(arr: Any) -> bool:
    import pyarrow.compute as pc

    return bool(pc.any(pc.equal(pc.utf8_length(arr), 0)).as_py())


def _raw_at(arr: Any, i: int) -> str:
    value = arr[i].as_py()
    return "" if value is None else str(value)


def cast_column(arr: Any, kind: str, name: str) -> Typed:
    """Type a raw column (text, or Arrow numbers/booleans read from Parquet/JSON) as ``kind``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    check_kind(name, kind)
    arr = combined(arr)
    n = len(arr)
    # fast paths: Arrow values that already are of the kind
    if kind == "long" and pa.types.is_integer(arr.type):
        if pa.types.is_uint64(arr.type):
            big = np_bool(pc.greater(arr, pa.scalar(2**63 - 1, pa.uint64())))
            values = pc.if_else(pa.array(big), pa.scalar(None, pa.uint64()), arr).cast(pa.int64())
            return Typed(values, big, lambda i: not_a_kind_reason(name, "long", _raw_at(arr, i)))
        return Typed(arr.cast(pa.int64()), np.zeros(n, dtype=bool), _no_reason)
    if kind == "double" and (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        values = arr.cast(pa.float64(), safe=False)  # integers beyond 2**53 round, as their text does
        bad = ~np_bool(pc.is_finite(values)) & np_bool(values.is_valid())
        if bad.any():
            values = pc.if_else(pa.array(bad), pa.scalar(None, pa.float64()), values)
        return Typed(values, bad, lambda i: not_a_kind_reason(name, "double", _raw_at(as_text(arr), i)))
    if kind == "boolean" and pa.types.is_boolean(arr.type):
        return Typed(arr, np.zeros(n, dtype=bool), _no_reason)
    if kind == "string" and (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return Typed(as_text(arr), np.zeros(n, dtype=bool), _no_reason)

    text = as_text(arr)
    if kind == "string":
        return Typed(text, np.zeros(n, dtype=bool), _no_reason)
    if kind in ("long", "double"):
        fast = _plain_integers(text, kind)
        if fast is not None:
            return Typed(fast, np.zeros(n, dtype=bool), _no_reason)
    present = np_bool(text.is_valid())
    trimmed = pc.ascii_trim_whitespace(text)
    if kind == "boolean":
        lower = pc.utf8_lower(trimmed)
        is_true = np_bool(pc.is_in(lower, pa.array(TRUE_WORDS)))
        is_false = np_bool(pc.is_in(lower, pa.array(FALSE_WORDS)))
        ok = is_true | is_false
        values = pa.array(is_true, mask=~ok)
    else:
        values, ok = _numbers(trimmed, kind)
    bad = present & ~ok

    def reason(i: int) -> str:
        return not_a_kind_reason(name, kind, _raw_at(text, i))

    return Typed(values, bad, reason)


def _plain_integers(text: Any, kind: str) -> Any | None:
    """Fast path: when every present value is ``[-]digits`` (the common case), the column
    converted by Arrow's own cast; None when the full rules are needed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(text) == 0 or text.null_count == len(text):
        return None
    plain = pc.ascii_is_decimal(text)
    if not pc.all(plain).as_py():
        negative = pc.starts_with(text, "-")
        body = pc.if_else(negative, pc.utf8_slice_codeunits(text, 1), text)
        if not pc.all(pc.ascii_is_decimal(body)).as_py():
            return None
    try:
        longs = pc.cast(text, pa.int64())
    except (pa.ArrowInvalid, OverflowError):
        return None  # beyond 64 bits: the full rules decide
    if kind == "long":
        return longs
    if pc.any(pc.and_(pc.starts_with(text, "-"), pc.equal(longs, 0))).as_py():
        return None  # "-0" is the double -0.0, which the integer 0 cannot give
    return pc.cast(longs, pa.float64()) if _exact_doubles(longs) else None


def _exact_doubles(longs: Any) -> bool:
    import pyarrow.compute as pc

    # min and max, not abs: the absolute value of the int64 minimum wraps to itself
    bounds = pc.min_max(longs).as_py()
    return bounds["min"] is None or (-(2**53) <= bounds["min"] and bounds["max"] <= 2**53)


def _no_reason(i: int) -> str:
    raise AssertionError("no bad value")


def _numbers(trimmed: Any, kind: str) -> tuple[Any, np.ndarray]:
    """``long`` or ``double`` values of trimmed text, and where they fit."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(trimmed)
    decimal = np_bool(pc.match_substring_regex(trimmed, DECIMAL))
    doubles = np.full(n, np.nan)
    if decimal.any():
        picked = pc.filter(trimmed, pa.array(decimal))
        doubles[decimal] = np.asarray(pc.cast(picked, pa.float64()).to_numpy(zero_copy_only=False))
    finite = decimal & np.isfinite(doubles)
    if kind == "double":
        return pa.array(np.where(finite, doubles, 0.0), mask=~finite), finite
    integer = np_bool(pc.match_substring_regex(trimmed, INTEGER))
    longs = np.zeros(n, dtype=np.int64)
    ok = np.zeros(n, dtype=bool)
    if integer.any():
        as_int = _int64_or_null(pc.filter(trimmed, pa.array(integer)))
        valid = np_bool(as_int.is_valid())
        where = np.flatnonzero(integer)
        longs[where[valid]] = np.asarray(pc.fill_null(as_int, 0).to_numpy(zero_copy_only=False))[valid]
        ok[where[valid]] = True
    with np.errstate(invalid="ignore"):
        integral = ~integer & finite & (doubles == np.floor(doubles)) & (np.abs(doubles) < LONG_LIMIT)
    if integral.any():
        longs[integral] = doubles[integral].astype(np.int64)
        ok |= integral
    return pa.array(longs, mask=~ok), ok


def _int64_or_null(text: Any) -> Any:
    """Integer text as int64, null where it does not fit in 64 bits."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return pc.cast(text, pa.int64())
    except (pa.ArrowInvalid, OverflowError):
        digits = pc.utf8_ltrim(pc.utf8_ltrim(text, "+"), "0")  # "+0005" -> "5"
        long_enough = np_bool(pc.greater_equal(pc.utf8_length(digits), 19))
        out = []
        for i, value in enumerate(text.to_pylist()):
            if long_enough[i]:
                v = int(value)
                out.append(v if -(2**63) <= v < 2**63 else None)
            else:
                out.append(int(value))
        return pa.array(out, pa.int64())


def _days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    y = y - (m <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * np.where(m > 2, m - 3, m + 9) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_DAYS_IN_MONTH = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def parse_time(arr: Any, unit: str = DEFAULT_TIME_UNIT, name: str = "ts") -> Typed:
    """Times of a raw column as µs since the epoch (int64), by the rules (the package
    docstring): Arrow timestamps as they are, Arrow numbers and decimal text as epoch
    numbers in ``unit``, other text as ISO-8601.

    Missing values (null or blank text) are null and not bad: the caller decides
    (ingest's reason ``missing timestamp``)."""
    import pyarrow as pa

    unit = check_time_unit(unit)
    if pa.types.is_integer(arr.type) and not pa.types.is_uint64(arr.type):
        fast = _integer_times(arr, unit)  # chunk by chunk, before any copy
        if fast is not None:
            return fast
    arr = combined(arr)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_timestamp(arr.type):
        return _timestamp_times(arr, name)
    if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
        return _number_times(arr, unit, name)
    text = as_text(arr)
    fast = _plain_integers(text, "long")
    if fast is not None:
        return parse_time(fast, unit, name)
    return _text_times(text, unit, name)


def _timestamp_times(arr: Any, name: str) -> Typed:
    """An Arrow timestamp column of any unit (naive ones as UTC) in µs, range-checked."""
    import pyarrow as pa
    import pyarrow.compute as pc

    raw = pc.cast(arr, pa.int64())
    per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[arr.type.unit]
    valid = np_bool(raw.is_valid())
    ints = np.asarray(pc.fill_null(raw, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    if per_second >= 1_000_000:
        us = ints // (per_second // 1_000_000)
    else:
        with np.errstate(over="ignore"):
            us = ints * (1_000_000 // per_second)
        limit = (2**62) // (1_000_000 // per_second)
        us[(ints > limit) | (ints < -limit)] = MAX_US  # not abs: abs of the int64 minimum wraps
    ok = valid.copy()
    reasons: dict[int, str] = {}
    _range_check(us, ok, reasons, lambda i: _iso_range_reason(name, arr, i, us))
    return _timed(us, ok, valid, reasons, name, arr)


def _no_times(n: int) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """The µs of ``n`` rows, which are good, and the reasons of the bad ones: none yet."""
    return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool), {}


def _number_times(arr: Any, unit: str, name: str) -> Typed:
    """An Arrow integer or float column of epoch numbers in ``unit``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    us, ok, reasons = _no_times(len(arr))
    present = np_bool(arr.is_valid())
    if pa.types.is_floating(arr.type):
        values = np.asarray(pc.fill_null(arr, 0).to_numpy(zero_copy_only=False), dtype=np.float64)
        finite = present & np.isfinite(values)
        _numeric_times(values, None, finite, unit, name, us, ok, reasons, lambda i: _float_text(values[i]))
    else:
        ints = np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
        values = ints.astype(np.float64)
        _numeric_times(values, ints, present.copy(), unit, name, us, ok, reasons, lambda i: str(ints[i]))
    return _timed(us, ok, present, reasons, name, arr)


def _text_times(text: Any, unit: str, name: str) -> Typed:
    """Text times: decimal text as epoch numbers in ``unit``, any other as ISO-8601."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(text)
    us, ok, reasons = _no_times(n)
    trimmed = pc.ascii_trim_whitespace(text)
    present = np_bool(pc.not_equal(trimmed, ""))
    decimal = present & np_bool(pc.match_substring_regex(trimmed, DECIMAL))
    if decimal.any():
        values = np.full(n, np.nan)
        picked = pc.filter(trimmed, pa.array(decimal))
        values[decimal] = np.asarray(pc.cast(picked, pa.float64()).to_numpy(zero_copy_only=False))
        ints, exact = _exact_integers(trimmed, decimal, values)
        finite = decimal & np.isfinite(values)
        _numeric_times(values, ints, finite, unit, name, us, ok, reasons, lambda i: _raw_at(trimmed, i), exact)
    iso = present & ~decimal
    if iso.any():
        _iso_times(trimmed, iso, name, us, ok, reasons)
    return _timed(us, ok, present, reasons, name, text)


def _exact_integers(
    trimmed: Any, decimal: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The integer texts below 2**62 of a time column as int64, and where they are (both None
    where the column holds no integer text): those convert exactly, not through a double."""
    import pyarrow as pa
    import pyarrow.compute as pc

    integer = decimal & np_bool(pc.match_substring_regex(trimmed, INTEGER))
    if not integer.any():
        return None, None
    ints = np.zeros(len(values), dtype=np.int64)
    small = integer & (np.abs(values) < 2**62)
    if small.any():
        got = pc.cast(pc.filter(trimmed, pa.array(small)), pa.int64())
        ints[small] = np.asarray(got.to_numpy(zero_copy_only=False))
    exact = np.zeros(len(values), dtype=bool)
    exact[small] = True
    return ints, exact


def _float_text(value: float) -> str:
    return repr(float(value))


def _numeric_times(
    values: np.ndarray, ints: np.ndarray | None, finite: np.ndarray, unit: str, name: str,
    us: np.ndarray, ok: np.ndarray, reasons: dict[int, str], raw: Callable[[int], str],
    exact: np.ndarray | None = None,
) -> None:
    factor = TIME_UNITS[unit]
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = values * factor
        inside = finite & (scaled >= MIN_US) & (scaled < MAX_US)
    for i in np.flatnonzero(finite & ~inside)[:1000].tolist():
        reasons[i] = implausible_number_reason(name, raw(i), float(values[i]), unit)
    if ints is not None:
        use_int = inside if exact is None else inside & exact
        us[use_int] = ints[use_int] * factor
    else:
        use_int = np.zeros(len(values), dtype=bool)
    rounded = inside & ~use_int
    if rounded.any():
        x = scaled[rounded]
        whole = np.trunc(x)
        frac = x - whole
        us[rounded] = (whole + np.where(np.abs(frac) >= 0.5, np.sign(x), 0.0)).astype(np.int64)
    ok |= inside


def _iso_times(
    trimmed: Any, which: np.ndarray, name: str, us: np.ndarray, ok: np.ndarray, reasons: dict[int, str]
) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    idx = np.flatnonzero(which)
    picked = pc.take(trimmed, pa.array(idx))
    pattern = ISO_TIME.replace("([0-9]{4})", "(?P<y>[0-9]{4})", 1)
    for group in ("mo", "d", "h", "mi", "s"):
        pattern = pattern.replace("([0-9]{2})", f"(?P<{group}>[0-9]{{2}})", 1)
    pattern = pattern.replace("([0-9]{1,9})", "(?P<f>[0-9]{1,9})", 1)
    pattern = pattern.replace("(Z|z|", "(?P<z>Z|z|", 1)
    parts = pc.extract_regex(picked, pattern)
    matched = np_bool(parts.is_valid())

    def field(key: str) -> np.ndarray:
        col = pc.struct_field(parts, key)
        col = pc.if_else(pc.equal(col, ""), pa.scalar("0"), col)
        return np.asarray(pc.cast(pc.fill_null(col, "0"), pa.int64()).to_numpy(zero_copy_only=False))

    y, mo, d, h, mi, s = (field(k) for k in ("y", "mo", "d", "h", "mi", "s"))
    frac_text = pc.fill_null(pc.struct_field(parts, "f"), "")
    frac_text = pc.utf8_slice_codeunits(pc.binary_join_element_wise(frac_text, "000000", ""), 0, 6)
    frac = np.asarray(pc.cast(frac_text, pa.int64()).to_numpy(zero_copy_only=False))
    zone = pc.fill_null(pc.struct_field(parts, "z"), "")
    sign = np.where(np_bool(pc.starts_with(zone, "-")), -1, 1)
    has_offset = np_bool(pc.greater(pc.utf8_length(zone), 1))
    oh = np.where(has_offset, _slice_int(zone, 1, 3), 0)
    om = np.where(has_offset, _slice_int(zone, 4, 6), 0)
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    dim = _DAYS_IN_MONTH[np.clip(mo, 0, 12)] + ((mo == 2) & leap)
    valid = (
        matched & (mo >= 1) & (mo <= 12) & (d >= 1) & (d <= dim) & (h < 24) & (mi < 60) & (s < 60)
        & (om < 60) & (oh * 60 + om <= MAX_OFFSET_MINUTES)
    )
    days = _days_from_civil(y, np.clip(mo, 1, 12), d)
    seconds = days * 86_400 + h * 3_600 + mi * 60 + s - sign * (oh * 3_600 + om * 60)
    value = seconds * 1_000_000 + frac
    inside = valid & (value >= MIN_US) & (value < MAX_US)
    us[idx[inside]] = value[inside]
    ok[idx[inside]] = True
    for j in np.flatnonzero(valid & ~inside)[:1000].tolist():
        reasons[int(idx[j])] = implausible_iso_reason(name, _raw_at(picked, j), _utc_year(int(value[j])))


def _slice_int(text: Any, start: int, stop: int) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    part = pc.utf8_slice_codeunits(text, start, stop)
    part = pc.if_else(pc.match_substring_regex(part, "^[0-9]+$"), part, pa.scalar("0"))
    return np.asarray(pc.cast(part, pa.int64()).to_numpy(zero_copy_only=False))


def _utc_year(us: int) -> int:
    """Civil year of a µs time (proleptic Gregorian)."""
    days = us // 86_400_000_000
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return int(yoe + era * 400 + (month <= 2))


def _iso_range_reason(name: str, arr: Any, i: int, us: np.ndarray) -> str:
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        shown = pc.cast(arr.slice(i, 1), pa.string())[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        shown = f"{arr.slice(i, 1).cast(pa.int64())[0].as_py()} {arr.type.unit} since 1970"
    return implausible_iso_reason(name, shown, _utc_year(int(us[i])))


def _range_check(us: np.ndarray, ok: np.ndarray, reasons: dict[int, str], reason: Callable[[int], str]) -> None:
    outside = ok & ((us < MIN_US) | (us >= MAX_US))
    for i in np.flatnonzero(outside)[:1000].tolist():
        reasons[i] = reason(i)
    ok &= ~outside


def _timed(us: np.ndarray, ok: np.ndarray, present: np.ndarray, reasons: dict[int, str], name: str, raw: Any) -> Typed:
    import pyarrow as pa

    bad = present & ~ok

    def reason(i: int) -> str:
        if i in reasons:
            return reasons[i]
        return unparseable_time_reason(_raw_at(raw, i))

    return Typed(pa.array(us, mask=~ok), bad, reason)


def cast_value(value: Any, kind: str) -> Any:
    """One value by the rules (for tests and messages); raises ``TypingError`` with the reason."""
    import pyarrow as pa

    typed = cast_column(pa.array([value]), kind, "value")
    if typed.bad[0]:
        raise TypingError(typed.reason_of(0))
    return typed.values[0].as_py()


def _integer_times(arr: Any, unit: str) -> Typed | None:
    """Fast path of integer times, exact and without temporaries (a chunked column stays
    chunked): every value within range, else None (the full rules give the reasons)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    factor = TIME_UNITS[unit]
    lowest, highest = pc.min_max(arr).values()
    lo_ok = -(-MIN_US // factor)  # the smallest integer whose time is >= MIN_US
    hi_ok = -(-MAX_US // factor)  # the smallest integer whose time is >= MAX_US
    if lowest.as_py() is None or (lo_ok <= lowest.as_py() and highest.as_py() < hi_ok):
        us_arr = pc.multiply(arr.cast(pa.int64()), pa.scalar(factor, pa.int64()))
        return Typed(us_arr, np.zeros(len(arr), dtype=bool), _no_reason)
    return None


def parse_time_value(value: Any, unit: str = DEFAULT_TIME_UNIT, name: str = "ts") -> int | None:
    """One time by the rules, in µs (None when missing); raises ``TypingError`` with the reason."""
    import pyarrow as pa

    typed = parse_time(pa.array([value]), unit, name)
    if typed.bad[0]:
        raise TypingError(typed.reason_of(0))
    return typed.values[0].as_py()
