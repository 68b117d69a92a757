"""How raw event values become typed values: the one set of typing rules, in two halves.

Ingest (Spark, ``jobs/ingest/``) and ``trendlake eval`` (Arrow, ``engine/files.py``) both
read raw values as *text* and type them by these rules. Like ``engine/expr`` (one
semantics, two evaluators), the package holds the rules once and one implementation per
engine:

- ``rules``: the definition as data: the patterns (``INTEGER``, ``DECIMAL``,
  ``ISO_TIME``), the boolean words, the time units and year range, ``TypingError``, and
  every reason a value or a row is refused with, in both halves' words. Plain Python.
- ``arrow``: the Arrow half (``cast_column``, ``parse_time``, ``arrow_type_problem``),
  used by ``eval`` and by ingest's Parquet checks. Imports Arrow inside its functions.
- ``spark``: the Spark half (``cast_column``, ``parse_time``, ``validate``), built as
  Spark SQL text with ``sqlexpr`` and used by ingest only. It imports no Spark at module
  level (a ``Sql`` becomes a Column in ``Sql.column()``), so the fast tier can build and
  inspect its expressions.
- ``rawfiles``: the checks of a raw file both readers make before typing (a CSV file that
  does not tokenize, bytes that are not UTF-8).

Layering: ``schemas/`` imports nothing of ``jobs/`` or ``engine/``; the engine imports
``rules``, ``arrow`` and ``rawfiles``, never ``spark`` or ``sqlexpr``; ``jobs/ingest/``
imports all of them. Each name has one home: import it from its module (the package
re-exports nothing). ``tests/unit/schemas/test_types.py`` checks the Arrow half and
``tests/integration/spark/test_typing_agreement.py`` both halves on one table of tricky
values (``tests/typing_cases.py``).

Attributes (``long``, ``double``, ``string``, ``boolean``):

- A missing value (null, or empty text) is missing, for every kind.
- "Trimmed" removes ASCII blanks (space, tab, CR, LF, VT, FF) at both ends.
- ``long``: the trimmed text is an integer (``[+-]digits``) within 64 bits, or
  a decimal number (``DECIMAL``) whose value is integral (``3.0``, ``1e3``)
  and below 2**63 in magnitude. ``3.5``, ``abc``, ``nan`` do not fit.
- ``double``: the trimmed text matches ``DECIMAL`` (no ``nan``, ``inf``,
  ``1_000``, ``0x10`` or ``1d``) and the value is finite.
- ``boolean``: the trimmed text, in any case, is one of ``TRUE_WORDS`` or
  ``FALSE_WORDS``.
- ``string``: the text as it is.

Times (the stream's ``time_column``):

- Text matching ``DECIMAL`` is an epoch time in the stream's ``time_unit``
  (``seconds`` by default, ``milliseconds`` or ``microseconds``); integer text
  converts exactly, other numbers are rounded half away from zero to a
  microsecond.
- Other text must be ISO-8601 (``ISO_TIME``): ``YYYY-MM-DD``, optionally
  ``T`` or a space and ``HH:MM[:SS[.fraction]]`` (fraction digits beyond the
  sixth are cut), optionally ``Z`` or ``±HH:MM``; without an offset it is UTC.
- Arrow timestamps of any unit are taken as they are (naive ones as UTC);
  Arrow numbers are epoch times in the declared unit.
- Every time must lie in ``[1900-01-01, 2300-01-01)`` UTC. Outside, the
  reason says which year the value would be and, for a number, which unit
  would make it plausible (``ts 1767607380000 is year 57983 as seconds:
  looks like epoch milliseconds; declare "time_unit": "milliseconds"``).

Times are stored as microseconds since the Unix epoch, UTC.
"""
