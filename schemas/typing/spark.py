"""The Spark half of the typing rules: raw text columns typed, and a stream schema's row
rules applied, as Spark SQL expressions (ingest's validation).

Everything is built as SQL text (``sqlexpr``) and reaches Spark as one expression per
output column, not as hundreds of py4j calls (docs/lake.md, "What a job costs before
its first row"). The values several rules read (a value's trimmed text, its number, the
groups of its ISO-8601 match) are named once per row by ``Lets``. Reasons are
``rules``' words, the raw text spliced in where the Arrow half shows it (``message``).

Nothing here imports Spark at module level: ``Sql.column()`` and ``Lets.apply`` touch
Spark only when a job calls them. A schema the rules cannot type (an unknown type or
time unit) raises ``rules.TypingError``; a name Spark SQL text cannot hold raises
``sqlexpr.NotWritable``; ingest reports both as a bad stream schema.
"""

from __future__ import annotations

import re
from typing import Any

from trendlake.schemas.typing import rules
from trendlake.schemas.typing.sqlexpr import Sql, call, col, lit, quote_name, when


def message(template: str, *parts: Sql) -> Sql:
    """A reason of ``rules`` as SQL: ``template`` is the reason made with ``rules.HOLE``
    for each of ``parts`` in turn, whose text goes there."""
    pieces = template.split(rules.HOLE)
    if len(pieces) != len(parts) + 1:
        raise rules.TypingError(f"a name or value holds a NUL character: {template!r}")
    args: list[Any] = [lit(pieces[0])] if pieces[0] else []
    for part, piece in zip(parts, pieces[1:], strict=True):
        args.append(part)
        if piece:
            args.append(lit(piece))
    return call("concat", *args)


class Lets:
    """Intermediate values of the typing rules, each computed once per row.

    A rule reads the trimmed text of a value, its number, the groups of its ISO-8601
    match several times each. Written inline, Spark would evaluate every copy: the
    rides stream's rules held 1,163 regular-expression calls in 108 KB of SQL text
    (44 in 18 KB layered). ``let(expr)`` names
    ``expr`` as a column (``_let<n>``, a prefix no input column starts with) in the
    first layer after the lets it reads; ``apply(df)`` adds the layers, one projection
    each. Spark's optimizer does not merge a projection into the next where that
    would copy an expensive expression used more than once, so each is evaluated once.
    """

    def __init__(self, columns: list[str]) -> None:
        prefix = "_let"
        while any(c.startswith(prefix) for c in columns):
            prefix = "_" + prefix
        self.prefix = prefix
        self.layers: list[list[tuple[str, Sql]]] = []
        self._layer: dict[str, int] = {}

    def let(self, expr: Sql) -> Sql:
        """A reference to ``expr`` computed once per row (in ``apply``)."""
        found = re.findall(rf"`({self.prefix}[0-9]+)`", expr.text)
        reads = [self._layer[n] for n in found if n in self._layer]  # (a literal's text may look like one)
        layer = 1 + max(reads, default=-1)
        name = f"{self.prefix}{len(self._layer)}"
        while len(self.layers) <= layer:
            self.layers.append([])
        self.layers[layer].append((name, expr))
        self._layer[name] = layer
        return col(name)

    def apply(self, df: Any) -> Any:
        """``df`` with every let as a column (select the ones wanted after)."""
        for layer in self.layers:
            df = df.select("*", *[expr.column().alias(name) for name, expr in layer])
        return df


def trimmed(expr: Sql) -> Sql:
    """Text without ASCII blanks at either end (``\\s`` in Java is the same set as Arrow's)."""
    return call("regexp_replace", expr, r"^\s+|\s+$", "")


def cast_column(name: str, kind: str, lets: Lets) -> Sql:
    """A raw text attribute as ``kind`` by the rules; NULL where it does not fit.

    An ``Sql`` expression (``.column()`` makes it a Column) over ``lets.apply(df)``.
    """
    given = col(name)
    if rules.check_kind(name, kind) == "string":
        return given
    text = lets.let(trimmed(given))
    if kind == "long":
        integer = text.rlike(rules.INTEGER)
        as_double = lets.let(when(text.rlike(rules.DECIMAL), text.try_cast("double")))
        integral = (as_double == call("floor", as_double)) & (call("abs", as_double) < lit(rules.LONG_LIMIT))
        return when(integer, text.try_cast("bigint")).otherwise(
            when(integral, as_double.cast("bigint"))
        )
    if kind == "double":
        as_double = lets.let(when(text.rlike(rules.DECIMAL), text.try_cast("double")))
        return when(~call("isnan", as_double) & (call("abs", as_double) != lit(float("inf"))), as_double)
    lower = call("lower", text)
    return when(lower.isin(list(rules.TRUE_WORDS)), lit(True)).when(
        lower.isin(list(rules.FALSE_WORDS)), lit(False)
    )


def parse_time(raw: Sql, name: str, unit: str | None, lets: Lets) -> tuple[Sql, Sql]:
    """(timestamp, reason) of a raw text time column by the rules: the timestamp is NULL
    where the value is missing or does not fit, and the reason says why a present value
    is out of range (NULL for unparseable text and good values).

    ``raw`` and both results are ``Sql`` expressions (``.column()`` makes them Columns)
    over ``lets.apply(df)``.
    """
    unit = rules.check_time_unit(unit)
    t = lets.let(trimmed(raw))
    decimal = lets.let(t.rlike(rules.DECIMAL))
    from_number, number_problem = _epoch_time(t, decimal, name, unit, lets)
    micros, iso_problem = _iso_time(t, decimal, name, lets)
    us = call("coalesce", from_number, micros)
    return call("timestamp_micros", us), call("coalesce", number_problem, iso_problem)


def _epoch_time(t: Sql, decimal: Sql, name: str, unit: str, lets: Lets) -> tuple[Sql, Sql]:
    """(µs, reason) of trimmed decimal text ``t`` as an epoch number in ``unit``: integer
    text converts exactly, other numbers round half away from zero to a microsecond."""
    factor = rules.TIME_UNITS[unit]
    number = lets.let(when(decimal, t.try_cast("double")))
    finite = lets.let(number.isNotNull() & ~call("isnan", number) & (call("abs", number) != lit(float("inf"))))
    scaled = lets.let(number * lit(float(factor)))
    inside = lets.let(finite & (scaled >= lit(float(rules.MIN_US))) & (scaled < lit(float(rules.MAX_US))))
    exact = t.rlike(rules.INTEGER) & (call("abs", number) < lit(float(2**62)))
    from_number = when(inside, when(exact, t.try_cast("bigint") * lit(factor)).otherwise(
        call("round", scaled).cast("bigint")))
    years = scaled / lit(1_000_000.0) / lit(rules.SECONDS_PER_YEAR) + lit(1970.0)
    year = call("floor", years).cast("string")
    hint = lit(rules.OUTSIDE_YEARS)
    for other, f in reversed(rules.HINT_UNITS):
        if other == unit:
            continue
        plausible = (number * lit(float(f)) >= lit(float(rules.MIN_US))) & (
            number * lit(float(f)) < lit(float(rules.MAX_US)))
        hint = when(plausible, lit(f": {rules.unit_hint(other)}")).otherwise(hint)
    head = message(rules.number_year_head(name, rules.HOLE, rules.HOLE, unit) + rules.HOLE, t, year, hint)
    far = message(rules.far_number_reason(name, rules.HOLE), t)
    problem = when(finite & ~inside, when(call("abs", years) < lit(rules.FAR_YEARS), head).otherwise(far))
    return from_number, problem


def _iso_time(t: Sql, decimal: Sql, name: str, lets: Lets) -> tuple[Sql, Sql]:
    """(µs, reason) of trimmed ISO-8601 text ``t``, rebuilt in one canonical form Spark's
    cast reads."""
    iso = lets.let(~decimal & t.rlike(rules.ISO_TIME))
    groups = {i: lets.let(when(iso, call("regexp_extract", t, rules.ISO_TIME, i))) for i in range(1, 9)}

    def group(i: int, default: str | None = None) -> Sql:
        return groups[i] if default is None else when(groups[i] == lit(""), lit(default)).otherwise(groups[i])

    fraction = call("substring", call("concat", group(7), lit("000000")), 1, 6)
    zone = when((group(8) == lit("")) | (call("upper", group(8)) == lit("Z")), lit("+00:00")).otherwise(group(8))
    canonical = call("concat", group(1), lit("-"), group(2), lit("-"), group(3), lit("T"), group(4, "00"), lit(":"),
                     group(5, "00"), lit(":"), group(6, "00"), lit("."), fraction, zone)
    parsed = lets.let(when(iso, canonical.try_cast("timestamp")))
    micros = lets.let(call("unix_micros", parsed))
    inside = lets.let((micros >= lit(rules.MIN_US)) & (micros < lit(rules.MAX_US)))
    year = call("year", parsed).cast("string")
    problem = when(parsed.isNotNull() & ~inside,
                   message(rules.implausible_iso_reason(name, rules.HOLE, rules.HOLE), t, year))
    return when(inside, micros), problem


def validate(raw: Any, stream_schema: dict[str, Any]) -> Any:
    """Raw text rows (``rules.raw_columns`` and ``_malformed``) -> typed columns ``_v_<attr>``,
    ``_ts`` and ``_reason`` (None for a good row, else the first failing row rule, in the
    order ``rules`` lists them)."""
    type_col, time_col = stream_schema["type_column"], stream_schema["time_column"]
    # empty text is a missing value for every type
    texts = set(rules.raw_columns(stream_schema))
    raw = raw.select(*[
        (when(col(c) != lit(""), col(c)) if c in texts else col(c)).column().alias(c) for c in raw.columns
    ])
    etype, raw_ts = col(type_col), col(time_col)
    lets = Lets(raw.columns)
    ts, ts_problem = parse_time(raw_ts, time_col, stream_schema.get("time_unit"), lets)
    ts = lets.let(ts)
    reasons: list[Any] = [
        col("_malformed"),
        when(etype.isNull() | (call("trim", etype) == lit("")), lit(rules.MISSING_EVENT_TYPE)),
        when(~etype.isin(list(stream_schema["event_types"])),
             message(rules.unknown_event_type_reason(rules.HOLE), etype)),
        when(raw_ts.isNull() | (call("trim", raw_ts) == lit("")), lit(rules.MISSING_TIMESTAMP)),
        when(ts.isNull(), call("coalesce", ts_problem, message(rules.unparseable_time_reason(rules.HOLE), raw_ts))),
    ]
    typed: dict[str, Any] = {}
    for name, spec in stream_schema["attributes"].items():
        carries = lit(True) if spec.get("types", "*") == "*" else etype.isin(list(spec["types"]))
        value = lets.let(cast_column(name, spec["type"], lets))  # the rules below read it several times
        typed[name] = when(carries, value)
        reasons += _attribute_reasons(name, spec, carries, value)
    return lets.apply(raw).select(
        *[quote_name(c) for c in raw.columns],
        call("coalesce", *reasons).column().alias("_reason"),
        ts.column().alias("_ts"),
        *[v.column().alias(f"_v_{n}") for n, v in typed.items()],
    )


def _attribute_reasons(name: str, spec: dict[str, Any], carries: Sql, value: Sql) -> list[Sql]:
    """The row rules of one attribute (``value``: its typed value), in order."""
    kind, given = spec["type"], col(name)
    out = []
    if spec.get("required"):
        out.append(when(carries & given.isNull(), lit(rules.missing_required_reason(name))))
    out.append(when(carries & given.isNotNull() & value.isNull(),
                    message(rules.not_a_kind_reason(name, kind, rules.HOLE), given)))
    shown = value.cast("string") if kind != "string" else message("'" + rules.HOLE + "'", value)
    if "min" in spec:
        out.append(when(carries & (value < lit(spec["min"])),
                        message(rules.below_min_reason(name, rules.HOLE, spec["min"]), shown)))
    if "max" in spec:
        out.append(when(carries & (value > lit(spec["max"])),
                        message(rules.above_max_reason(name, rules.HOLE, spec["max"]), shown)))
    if "values" in spec:
        allowed = list(spec["values"])
        out.append(when(carries & value.isNotNull() & ~value.isin(allowed),
                        message(rules.not_allowed_reason(name, rules.HOLE, allowed), shown)))
    return out
