"""The typing rules as data: the patterns, words and limits both halves read, and every
reason a row or a value is refused with (the rules themselves are told in the package
docstring, ``trendlake.schemas.typing``).

Nothing here imports Arrow, numpy or Spark. A reason is a function of the raw text: the
Arrow half (``arrow``) calls it with the value, the Spark half (``spark``) with ``HOLE``
where a SQL expression's text goes (``spark.message``), so both halves say the same
words.

The row rules ingest applies, in order; the first failing one is the row's reason:

1. the record could not be read (``malformed JSON line``, an over-long line, bytes that
   are not UTF-8: set by the reader);
2. ``MISSING_EVENT_TYPE``, then ``unknown_event_type_reason``;
3. ``MISSING_TIMESTAMP``, then the time's reason (``implausible_number_reason``,
   ``implausible_iso_reason``, ``unparseable_time_reason``);
4. per attribute, in the schema's order: ``missing_required_reason``,
   ``not_a_kind_reason``, ``below_min_reason``, ``above_max_reason``,
   ``not_allowed_reason``.

``trendlake eval`` applies the typing of 3 and 4 (a value that does not fit its type) and
stops at the first bad value; it does not check the schema's event types, ``required``,
``min``, ``max`` or ``values``.
"""

from __future__ import annotations

import math
from typing import Any

KINDS = ("long", "double", "string", "boolean")
TIME_UNITS: dict[str, int] = {"seconds": 1_000_000, "milliseconds": 1_000, "microseconds": 1}
DEFAULT_TIME_UNIT = "seconds"

INTEGER = r"^[+-]?[0-9]+$"
DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
ISO_TIME = (
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?)?"
    r"(Z|z|[+-][0-9]{2}:[0-9]{2})?$"
)
TRUE_WORDS = ("true", "t", "yes", "y", "1")
FALSE_WORDS = ("false", "f", "no", "n", "0")

MIN_YEAR, MAX_YEAR = 1900, 2299  # inclusive
MIN_US = -2_208_988_800 * 1_000_000  # 1900-01-01T00:00:00Z
MAX_US = 10_413_792_000 * 1_000_000  # 2300-01-01T00:00:00Z (exclusive)
LONG_LIMIT = 9.2e18  # |double| below this converts to a long exactly when integral
SECONDS_PER_YEAR = 31_556_952.0  # mean Gregorian year, for the year shown in a reason
MAX_OFFSET_MINUTES = 18 * 60
FAR_YEARS = 1e15  # an epoch number this many years from 1970 or more is "no time" (implausible_number_reason)
# the units a reason suggests for an implausible epoch number, in the order they are tried:
# the declared units and nanoseconds (µs per unit)
HINT_UNITS: tuple[tuple[str, float], ...] = (*TIME_UNITS.items(), ("nanoseconds", 0.001))

HOLE = "\0"  # where the Spark half puts an expression's text in a reason (``spark.message``)


class TypingError(ValueError):
    """A raw value does not fit the typing rules, or a schema asks for a type or unit they
    do not know (the message is the reason)."""


def raw_columns(stream_schema: dict[str, Any]) -> list[str]:
    """The raw columns the rules type, as text: the type and time columns, then the
    attributes (ingest keeps them in ``quarantine.fields``)."""
    return [stream_schema["type_column"], stream_schema["time_column"], *stream_schema["attributes"]]


def check_kind(name: str, kind: Any) -> str:
    """An attribute's declared type; unknown types are refused."""
    if kind not in KINDS:
        raise TypingError(f"attribute {name!r}: unknown type {kind!r} ({', '.join(KINDS)})")
    return kind


def check_time_unit(unit: str | None) -> str:
    """The stream schema's ``time_unit`` (default seconds); unknown units are refused."""
    unit = DEFAULT_TIME_UNIT if unit is None else unit
    if unit not in TIME_UNITS:
        raise TypingError(f"unknown time_unit {unit!r} (use {', '.join(TIME_UNITS)})")
    return unit


def approximate_year(us: float) -> int:
    """The year of a (possibly huge) microsecond time, as reasons show it."""
    return math.floor(us / 1_000_000.0 / SECONDS_PER_YEAR + 1970.0)


# ---------------------------------------------------------------------- reasons

MISSING_EVENT_TYPE = "missing event type"
MISSING_TIMESTAMP = "missing timestamp"
OUTSIDE_YEARS = f", outside {MIN_YEAR}..{MAX_YEAR}"


def unknown_event_type_reason(raw: str) -> str:
    return f"unknown event type '{raw}'"


def unparseable_time_reason(raw: str) -> str:
    return f"unparseable timestamp '{raw}'"


def not_a_kind_reason(name: str, kind: str, raw: str) -> str:
    return f"attribute '{name}' is not a {kind}: '{raw}'"


def missing_required_reason(name: str) -> str:
    return f"missing required attribute '{name}'"


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def below_min_reason(name: str, shown: str, bound: Any) -> str:
    """``shown``: the value as text (a string quoted)."""
    return f"attribute '{name}' = {shown} below min {_shown(bound)}"


def above_max_reason(name: str, shown: str, bound: Any) -> str:
    return f"attribute '{name}' = {shown} above max {_shown(bound)}"


def not_allowed_reason(name: str, shown: str, allowed: list[Any]) -> str:
    return f"attribute '{name}' = {shown} not in allowed values {allowed}"


def number_year_head(name: str, raw: str, year: str, unit: str) -> str:
    """The start of an implausible epoch number's reason; a hint or ``OUTSIDE_YEARS`` follows."""
    return f"{name} {raw} is year {year} as {unit}"


def unit_hint(unit: str) -> str:
    """What an epoch number that is plausible in ``unit`` (one of ``HINT_UNITS``) looks like."""
    if unit == "nanoseconds":
        return "looks like epoch nanoseconds; convert to microseconds"
    return f'looks like epoch {unit}; declare "time_unit": "{unit}"'


def implausible_number_reason(name: str, raw: str, number: float, unit: str) -> str:
    """Why the epoch number ``raw`` (as ``number``) is out of range in ``unit``.

    A number whose year would be ``FAR_YEARS`` or more away (1.7e308, -1e300) is no time
    in any unit: the reason says so instead of showing a year of hundreds of digits."""
    factor = TIME_UNITS[unit]
    years = number * factor / 1_000_000.0 / SECONDS_PER_YEAR + 1970.0
    if not abs(years) < FAR_YEARS:
        return far_number_reason(name, raw)
    head = number_year_head(name, raw, str(approximate_year(number * factor)), unit)
    for other, f in HINT_UNITS:
        if other != unit and MIN_US <= number * f < MAX_US:
            return f"{head}: {unit_hint(other)}"
    return head + OUTSIDE_YEARS


def far_number_reason(name: str, raw: str) -> str:
    return f"{name} {raw} is no time: far outside the years {MIN_YEAR}..{MAX_YEAR} in every time unit"


def implausible_iso_reason(name: str, raw: str, year: int | str) -> str:
    return f"{name} '{raw}' is year {year}{OUTSIDE_YEARS}"
