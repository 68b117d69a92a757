"""The ingest job: raw event files in a landing folder -> bronze, quarantine and the ingest log.

Each new file (CSV with a header, JSON lines, Parquet; sorted by name) is
read by Spark (CSV as RFC 4180: a quoted field may span lines), every row
numbered by its 1-based line in the file (the line a CSV record starts on, row
index for Parquet), typed and validated against the stream schema in Spark by the typing
rules of ``trendlake.schemas.typing`` (the first failing rule is the row's
``reason``), and split: good rows -> ``bronze/<stream>``,
bad rows -> ``quarantine/<stream>``. Good + bad must equal the rows read, and
the good rows must pass the stream's Great Expectations suite, before anything
is committed. A file is identified by the SHA-256 of its bytes: a checksum in
``ingest_log/<stream>`` is never ingested again (a renamed copy neither).

A file whose *name* was ingested before with other content (appended to,
rewritten) is refused by default: nothing of it is written, it is listed in
the run's report (``files_refused``, with the reason) and once in the ingest
log (``status = 'refused'``). With ``replace_changed=True``
(``trendlake ingest --replace-changed``, ``TRENDLAKE_REPLACE_CHANGED=1`` or
the DAG run conf ``{"replace_changed": true}``) its earlier rows in bronze and
in quarantine are replaced by the new content, one transaction per table.

Only regular files are read: symbolic links (never followed), FIFOs,
directories, hidden / marker files and unknown suffixes are skipped and listed
with the reason (``skip_reasons``). A file Spark cannot read (not Parquet, an
empty or non-UTF-8 CSV header) is refused on its own; the run's other files go
through; so is a CSV file that does not tokenize cleanly (a stray quote) and a
Parquet file with a column of an Arrow type the typing rules do not read
(``precheck``), and a record holding bytes that are not UTF-8 is quarantined
with the line's column. Parquet nanosecond timestamps are converted to microseconds (the
report's ``warnings`` say when that truncated values); a line longer than
``LINE_LIMIT`` bytes is quarantined with a reason instead of parsed.

Commit order per run: bronze (one transaction; plus one replacing the rows of
changed files), quarantine (likewise), then the ingest log (one). Bronze and quarantine rows carry ``source_checksum``; a run
that finds a file's checksum missing from the log but present in bronze (or
quarantine) knows an earlier run died between its commits and does not append
those rows again, it only writes what is missing (``docs/lake.md``).

The package, one thing a module:

- ``errors``: ``IngestError``, ``IngestInputError`` (the run's), ``FileRefused`` (one file's);
- ``tables``: the Arrow schemas of bronze, quarantine and the ingest log, ``as_bronze``,
  and the check that a stream schema can name them;
- ``landing``: the landing scan and the checks that refuse a file whole (no Spark);
- ``read``: the files Spark reads and reading them as raw text rows;
- ``job``: the job (``ingest``), its report (``IngestReport``, ``summary``).

The typing and validation rules are not here: ``trendlake.schemas.typing`` (rules, the
Arrow half ``eval`` uses, the Spark half ingest uses). The package exports the job's
public names (what ``trendlake ingest``, the DAG and callers of the job use); everything
else is imported from its module.
"""

from trendlake.jobs.ingest.errors import IngestError, IngestInputError
from trendlake.jobs.ingest.job import ALREADY_INGESTED, IngestReport, ingest, summary

__all__ = ["ALREADY_INGESTED", "IngestError", "IngestInputError", "IngestReport", "ingest", "summary"]
