"""The lake: the one module that reads and writes trendlake's Delta tables.

A ``Lake(root)`` names tables by kind and name (``bronze/rides``, also written
``bronze.rides``) and stores them at ``<root>/<kind>/<name>``. Writes from
Spark are one Delta transaction each:

* with delta-spark jars on the classpath, ``df.write.format("delta")``;
* otherwise (the default here) Spark writes Parquet part files in parallel to
  ``<root>/_staging/<id>/``, the driver moves them under the table root and
  commits them in ONE delta-rs transaction (``create_table_with_add_actions``
  for a new table, ``create_write_transaction`` for append / overwrite /
  overwrite of chosen partitions). Small Arrow tables are written by the driver
  (``write_deltalake``). Both go through ONE verb, ``Lake.write(table, data,
  mode)``, with a typed mode as delta-rs's ``write_deltalake(mode=...)``:
  ``APPEND``, ``OVERWRITE``, ``ReplacePartitions(filters)`` (Spark),
  ``ReplaceWhere(predicate)`` (Arrow). A write killed before the commit leaves
  the table unchanged: moved files are not referenced by the log, and
  ``cleanup_staging`` deletes stale staging folders and those orphans.

Reads into Spark use only the current (or a chosen) snapshot's files,
``DeltaTable.file_uris()``; a table folder is never read directly. See
``docs/lake.md`` for the table layouts.

Names: every stream and query name that becomes a table folder passes ONE
rule (``check_name``), every table path is checked to resolve inside the lake
root, and ``resolve_stream`` turns a ``--stream`` value (a name or a schema
path) into the same ``(name, schema)`` for every command.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from trendlake.jobs.errors import BadInputError, JobError

log = logging.getLogger("trendlake.lake")

KINDS = ("bronze", "quarantine", "ingest_log", "stats", "results", "replay_log", "trends")
STAGING = "_staging"
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
MANIFEST = "_moved.json"

STREAMS = "streams"  # <lake>/streams/<name>.json: the schema each stream was last ingested with
NAME_RULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

Filters = Sequence[tuple[str, str, Any]]


@dataclass(frozen=True)
class Append:
    """Add the rows (the table is created when missing)."""


@dataclass(frozen=True)
class Overwrite:
    """Replace every row of the table."""


@dataclass(frozen=True)
class ReplacePartitions:
    """Replace exactly the partitions ``filters`` select (``[("window_date", "in", [...])]``);
    every row written must fall inside them. Spark DataFrames."""

    filters: Filters


@dataclass(frozen=True)
class ReplaceWhere:
    """Replace the rows matching ``predicate`` (DataFusion SQL over the table's columns, see
    ``Lake.write``); every row written must match it. Arrow tables."""

    predicate: str


WriteMode = Append | Overwrite | ReplacePartitions | ReplaceWhere
APPEND, OVERWRITE = Append(), Overwrite()


class LakeError(JobError):
    """A write was refused (schema mismatch, rows outside the partitions being replaced)."""


class LakeInputError(LakeError, BadInputError):
    """A file of the lake or an argument naming one is not what it must be (e.g. a stream schema
    that is not a JSON object)."""


class LakeNameError(LakeInputError):
    """A stream or query name cannot name a table folder, or a path escapes the lake root."""


def check_name(name: Any, what: str = "table name") -> str:
    """``name`` if it may name a lake table folder, else ``LakeNameError``.

    The rule: an identifier of letters, digits and ``_`` not starting with a
    digit, at most 128 characters (every query name of the language up to that
    length; no ``/``, ``.``, or anything a file system treats specially).
    """
    if not isinstance(name, str) or not NAME_RULE.fullmatch(name):
        shown = repr(name) if not isinstance(name, str) or len(name) <= 60 else repr(name[:60] + "...")
        raise LakeNameError(
            f"{what} {shown} cannot name a lake table: use letters, digits and _ "
            "(not starting with a digit), at most 128 characters"
        )
    return name


def is_schema_path(spec: str | Path) -> bool:
    """Whether a ``--stream`` value is a schema file path (has a folder or a suffix) rather than a name."""
    text = str(spec)
    return isinstance(spec, Path) or "/" in text or os.sep in text or "." in text


def resolve_stream(
    spec: str | Path, lake_root: str | Path | None = None, *, need_schema: bool = True
) -> tuple[str, dict[str, Any] | None]:
    """``(stream name, stream schema)`` of a ``--stream`` value, the same way for every command.

    ``spec`` is a schema file path (it has a ``/`` or a suffix: ``flights.json``,
    ``/data/flights.json``; the name is the file's ``"stream"`` field) or a
    stream name (``flights``): the schema the stream was last ingested with
    into ``lake_root`` (``<lake>/streams/<name>.json``), else the bundled
    schema of that name. With ``need_schema=False`` a name needs no schema
    (the schema is then None when neither exists). The name always passes
    ``check_name``.
    """
    from trendlake import schemas

    if is_schema_path(spec):
        path = Path(spec)
        if not path.is_file():
            raise FileNotFoundError(f"no stream schema file {path}")
        schema = _read_schema(path)
        return check_name(schema.get("stream"), f"stream schema {path}: stream name"), schema
    name = check_name(str(spec), "stream name")
    if lake_root is not None:
        recorded = Path(lake_root) / STREAMS / f"{name}.json"
        if recorded.is_file():
            return name, _read_schema(recorded)
    if schemas.has_stream(name):
        return name, schemas.load_stream_schema(name)
    if not need_schema:
        return name, None
    where = f" and none recorded in the lake {lake_root}" if lake_root is not None else ""
    raise FileNotFoundError(
        f"no stream schema {name!r}: not bundled (bundled: {', '.join(schemas.bundled_streams())}){where}; "
        "pass the schema file path (--stream path/to/schema.json)"
    )


def _read_schema(path: Path) -> dict[str, Any]:
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise LakeInputError(f"stream schema {path} is not a JSON file: {err}") from None
    if not isinstance(schema, dict):
        raise LakeInputError(f"stream schema {path} is not a JSON object")
    return schema


def record_stream(lake_root: str | Path, schema: dict[str, Any]) -> Path:
    """Keep the schema a stream is ingested with under ``<lake>/streams/`` (so its name resolves later)."""
    lake = Lake(lake_root)
    name = check_name(schema.get("stream"), "stream name")
    path = lake.inside(lake.root / STREAMS / f"{name}.json")
    text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def _before_commit(table_path: Path, actions: list[Any]) -> None:
    """Called between staging and commit; tests replace it to simulate a crash."""


class Lake:
    """Delta tables under one root folder: ``<root>/<kind>/<name>`` and ``<root>/plans/<workload>/``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()

    # ------------------------------------------------------------------ names and paths

    def path(self, table: str) -> Path:
        """Folder of a table given as ``kind/name`` or ``kind.name``; the name passes ``check_name``
        and the folder resolves inside the lake root."""
        kind, _, name = table.replace(".", "/", 1).partition("/")
        if not name or kind not in KINDS:
            raise LakeNameError(f"not a lake table name: {table!r} (use KIND/NAME, KIND one of {KINDS})")
        check_name(name, f"{kind} table name")
        return self.inside(self.root / kind / name)

    def inside(self, path: Path) -> Path:
        """``path`` if it resolves (links followed) inside the lake root, else ``LakeNameError``."""
        if not path.resolve().is_relative_to(self.root):
            raise LakeNameError(f"{path} resolves to {path.resolve()}, outside the lake root {self.root}")
        return path

    def bronze(self, stream: str) -> str:
        return f"bronze/{stream}"

    def quarantine(self, stream: str) -> str:
        return f"quarantine/{stream}"

    def ingest_log(self, stream: str) -> str:
        return f"ingest_log/{stream}"

    def stats(self, stream: str) -> str:
        return f"stats/{stream}"

    def results(self, query: str) -> str:
        return f"results/{query}"

    def plans(self, workload: str) -> Path:
        """Folder of a workload's plans (``plans/<workload>``), inside the lake root."""
        if not workload or workload in (".", "..") or "/" in workload or os.sep in workload:
            raise LakeNameError(f"workload name {workload!r} cannot name a plans folder")
        return self.inside(self.root / "plans" / workload)

    def reports(self, workload: str) -> Path:
        """Folder of a workload's replay reports (``reports/<workload>``), inside the lake root."""
        if not workload or workload in (".", "..") or "/" in workload or os.sep in workload:
            raise LakeNameError(f"workload name {workload!r} cannot name a reports folder")
        return self.inside(self.root / "reports" / workload)

    def exists(self, table: str) -> bool:
        from deltalake import DeltaTable

        path = self.path(table)
        return path.is_dir() and DeltaTable.is_deltatable(str(path))

    def tables(self) -> list[str]:
        """Every Delta table of the lake as ``kind/name``, sorted."""
        found = []
        for kind in KINDS:
            folder = self.root / kind
            if folder.is_dir():
                found += [f"{kind}/{p.name}" for p in sorted(folder.iterdir())
                          if NAME_RULE.fullmatch(p.name) and self.exists(f"{kind}/{p.name}")]
        return found

    def version(self, table: str) -> int | None:
        """Current version of a table, None when it does not exist."""
        from deltalake import DeltaTable

        return DeltaTable(str(self.path(table))).version() if self.exists(table) else None

    def arrow_schema(self, table: str) -> Any:
        """The table's Arrow schema, None when it does not exist."""
        from deltalake import DeltaTable

        if not self.exists(table):
            return None
        return _arrow_schema_of(DeltaTable(str(self.path(table))))

    def partition_columns(self, table: str) -> list[str]:
        from deltalake import DeltaTable

        return list(DeltaTable(str(self.path(table))).metadata().partition_columns)

    def add_actions(self, table: str, version: int | None = None) -> Any:
        """The snapshot's files as the log describes them (delta-rs ``get_add_actions(flatten=True)``
        as a ``pyarrow.Table``: ``path``, ``num_records``, ``partition.<c>``, ``min.<c>``,
        ``max.<c>``, ``null_count.<c>``); None when the table does not exist. No data is read."""
        import pyarrow as pa
        from deltalake import DeltaTable

        if not self.exists(table):
            return None
        return pa.table(DeltaTable(str(self.path(table)), version=version).get_add_actions(flatten=True))

    def row_count(self, table: str, version: int | None = None) -> int | None:
        """Rows of the snapshot from the log's ``numRecords`` (no data read); None if absent or unknown."""
        import pyarrow.compute as pc

        actions = self.add_actions(table, version)
        if actions is None:
            return None
        if actions.num_rows == 0:
            return 0
        counts = actions.column("num_records")
        if counts.null_count:
            return None
        return int(pc.sum(counts).as_py())

    def max_partition_value(self, table: str, column: str) -> Any:
        """The largest value of a partition column over the current snapshot (from the log only); None if empty."""
        import pyarrow.compute as pc

        actions = self.add_actions(table)
        name = f"partition.{column}"
        if actions is None or actions.num_rows == 0 or name not in actions.column_names:
            return None
        return pc.max(actions.column(name)).as_py()

    def max_from_log(self, table: str, column: str) -> tuple[bool, Any]:
        """The largest value of a data column over the current snapshot, from the log's file
        statistics only: ``(True, value)`` (``value`` None for a missing or empty table, or
        no non-NULL value), or ``(False, None)`` when some file's statistics do not bound it."""
        import pyarrow.compute as pc

        actions = self.add_actions(table)
        if actions is None or actions.num_rows == 0:
            return True, None
        name, nulls_name = f"max.{column}", f"null_count.{column}"
        if name not in actions.column_names or nulls_name not in actions.column_names:
            return False, None
        rows, top, nulls = (actions.column(c) for c in ("num_records", name, nulls_name))
        # a file without a max must be all NULL (its null count is its row count), else it is unknown
        unbounded = pc.and_kleene(pc.is_null(top), pc.invert(pc.fill_null(pc.equal(nulls, rows), False)))
        if rows.null_count or pc.any(unbounded).as_py():
            return False, None
        return True, pc.max(top).as_py()

    # ------------------------------------------------------------------ create

    def _create_empty(self, table: str, schema: Any, partition_by: Sequence[str] = ()) -> int:
        """Create an empty table with an explicit Arrow schema (no-op if it exists); its version."""
        from deltalake import write_deltalake

        if not self.exists(table):
            path = self.path(table)
            path.mkdir(parents=True, exist_ok=True)
            write_deltalake(str(path), schema.empty_table(), mode="append", partition_by=list(partition_by) or None)
            log.info("created %s (%s)", table, ", ".join(schema.names))
        return self.version(table)  # type: ignore[return-value]

    # ------------------------------------------------------------------ read

    def read_arrow(
        self,
        table: str,
        *,
        version: int | None = None,
        columns: list[str] | None = None,
        filters: Any = None,
    ) -> Any:
        """A (small) table as a ``pyarrow.Table`` through delta-rs; None when it does not exist."""
        from deltalake import DeltaTable

        if not self.exists(table):
            return None
        dt = DeltaTable(str(self.path(table)), version=version)
        return dt.to_pyarrow_table(columns=columns, filters=filters)

    def read_spark(self, spark: Any, table: str, *, version: int | None = None) -> Any:
        """A Spark DataFrame over the snapshot's files (current or ``version``); None if absent."""
        from deltalake import DeltaTable
        from pyspark.sql.pandas.types import from_arrow_schema

        if not self.exists(table):
            return None
        path = self.path(table)
        if _delta_mode(spark) == "delta-spark":
            reader = spark.read.format("delta")
            if version is not None:
                reader = reader.option("versionAsOf", version)
            return reader.load(str(path))
        dt = DeltaTable(str(path), version=version)
        arrow_schema = _arrow_schema_of(dt)
        schema = from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)
        uris = dt.file_uris()
        if not uris:
            return spark.createDataFrame([], schema)
        df = spark.read.schema(schema).option("basePath", path.as_uri()).parquet(*uris)
        return df.select(*[f"`{n}`" for n in arrow_schema.names])

    # ------------------------------------------------------------------ write

    def write(
        self,
        table: str,
        data: Any,
        mode: WriteMode = APPEND,
        *,
        partition_by: Sequence[str] | None = None,
        add_columns: bool = False,
        settle_after: bool = True,
    ) -> int | None:
        """Write ``data`` to ``table`` in ONE Delta transaction; the new version (None when a Spark
        append of no rows changed nothing).

        ``data`` is a Spark DataFrame (written in parallel, see the module docstring) or an Arrow
        table (written by the driver). ``mode``: ``APPEND``, ``OVERWRITE`` (the whole table),
        ``ReplacePartitions(filters)`` (Spark) or ``ReplaceWhere(predicate)`` (Arrow). A missing
        table is created, partitioned by ``partition_by``; an existing one keeps its partitioning,
        which ``partition_by`` must not contradict, and its schema (``add_columns=True``: an Arrow
        append or overwrite may add columns, older rows get NULL). ``settle_after=False`` skips
        the garbage collection after an Arrow write; a caller writing many tables calls
        ``settle()`` once after the last one.
        """
        import pyarrow as pa

        if not isinstance(mode, (Append, Overwrite, ReplacePartitions, ReplaceWhere)):
            raise TypeError(f"write mode must be APPEND, OVERWRITE, ReplacePartitions or ReplaceWhere, not {mode!r}")
        if isinstance(data, (pa.Table, pa.RecordBatch)):
            if isinstance(mode, ReplacePartitions):
                raise TypeError("ReplacePartitions writes a Spark DataFrame; for Arrow rows use ReplaceWhere")
            if isinstance(mode, ReplaceWhere):
                return self._replace_where(table, data, mode.predicate, partition_by, settle_after)
            return self._write_arrow(table, data, mode, partition_by, add_columns, settle_after)
        if isinstance(mode, ReplaceWhere):
            raise TypeError("ReplaceWhere writes an Arrow table; for a Spark DataFrame use ReplacePartitions")
        return self._write_spark(table, data, mode, partition_by)

    def _write_spark(self, table: str, df: Any, mode: WriteMode, partition_by: Sequence[str] | None) -> int | None:
        """A Spark DataFrame: an empty ``df`` commits nothing on append (creating the table empty
        if it is missing) and removes the chosen rows on overwrite."""
        filters = mode.filters if isinstance(mode, ReplacePartitions) else None
        if isinstance(mode, ReplacePartitions) and not filters:
            raise ValueError("ReplacePartitions needs partition filters (use OVERWRITE for the whole table)")
        how = "append" if isinstance(mode, Append) else "overwrite"
        exists = self.exists(table)
        partition_by = self._partitioning(table, partition_by)
        if _delta_mode(df.sparkSession) == "delta-spark":
            return self._write_delta_spark(table, df, how, partition_by, filters)
        return self._write_staged(table, df, how, partition_by, filters, exists)

    def _write_delta_spark(
        self, table: str, df: Any, mode: str, partition_by: list[str], partition_filters: Filters | None
    ) -> int | None:
        writer = df.write.format("delta").mode(mode)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        if partition_filters:
            writer = writer.option("replaceWhere", filters_to_sql(partition_filters))
        writer.save(str(self.path(table)))
        return self.version(table)

    def _write_staged(
        self,
        table: str,
        df: Any,
        mode: str,
        partition_by: list[str],
        partition_filters: Filters | None,
        exists: bool,
    ) -> int | None:
        from deltalake import DeltaTable, Schema
        from deltalake.transaction import create_table_with_add_actions
        from pyspark.sql.pandas.types import to_arrow_schema

        target = self.path(table)
        schema = _nullable(to_arrow_schema(df.schema, timezone="UTC"))
        if exists:
            current = _arrow_schema_of(DeltaTable(str(target)))
            _check_same_schema(table, current, schema)
            schema = current  # commit under the table's own schema (field order, nullability)
        staging = self.root / STAGING / f"{int(time.time())}-{uuid.uuid4().hex}"
        writer = df.write.mode("error").option("compression", "snappy")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.parquet(str(staging))
        try:
            actions = self._move_staged(staging, target, partition_by, partition_filters)
            if not actions and mode == "append":
                if exists:
                    return None
                return self._create_empty(table, schema, partition_by)
            _before_commit(target, actions)
            if not exists:
                target.mkdir(parents=True, exist_ok=True)
                create_table_with_add_actions(
                    str(target), Schema.from_arrow(schema), actions, mode="error",
                    partition_by=partition_by or None,
                )
            else:
                DeltaTable(str(target)).create_write_transaction(
                    actions, mode, schema, partition_by=partition_by or None,
                    partition_filters=list(partition_filters) if partition_filters else None,
                )
        except BaseException:
            log.warning("write to %s not committed; staged files stay unreferenced", table)
            raise
        shutil.rmtree(staging, ignore_errors=True)
        version = self.version(table)
        log.info("%s %s: %d files, version %s (delta-rs)", mode, table, len(actions), version)
        return version

    def _move_staged(
        self, staging: Path, target: Path, partition_by: list[str], partition_filters: Filters | None
    ) -> list[Any]:
        """Move Spark's part files under the table root; the AddActions that commit them."""
        import pyarrow.parquet as pq
        from deltalake.transaction import AddAction

        files = sorted(p for p in staging.rglob("*.parquet") if not p.name.startswith((".", "_")))
        token = staging.name.split("-", 1)[1][:12]
        planned = []
        for n, src in enumerate(files):
            meta = pq.read_metadata(src)
            rows = meta.num_rows
            if rows == 0:  # Spark writes one empty file (outside any partition folder) for no rows
                continue
            rel_dir = src.parent.relative_to(staging)
            values = _partition_values(rel_dir, partition_by)
            if partition_filters and not _matches(values, partition_filters):
                raise LakeError(
                    f"rows with {values} lie outside the partitions being replaced {list(partition_filters)}"
                )
            rel = rel_dir / f"part-{n:05d}-{token}.parquet"
            planned.append((src, rel, values, file_stats(meta)))
        manifest = staging / MANIFEST
        manifest.write_text(json.dumps([str(target / rel) for _, rel, _, _ in planned]))
        actions = []
        for src, rel, values, stats in planned:
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dest)
            stat = dest.stat()
            actions.append(
                AddAction(
                    path=rel.as_posix(),
                    size=stat.st_size,
                    partition_values=values,
                    modification_time=int(stat.st_mtime * 1000),
                    data_change=True,
                    stats=json.dumps(stats),
                )
            )
        return actions

    # ------------------------------------------------------------------ small writes from Arrow

    def _write_arrow(
        self, table: str, data: Any, mode: WriteMode, partition_by: Sequence[str] | None, add_columns: bool,
        settle_after: bool,
    ) -> int:
        """A small Arrow table through the driver (``write_deltalake``), appended or overwriting."""
        from deltalake import write_deltalake

        how = "append" if isinstance(mode, Append) else "overwrite"
        path = self.path(table)
        partition_by = self._partitioning(table, partition_by)
        _before_commit(path, [])
        path.mkdir(parents=True, exist_ok=True)
        try:
            write_deltalake(str(path), data, mode=how, partition_by=partition_by or None,
                            schema_mode="merge" if add_columns and self.exists(table) else None)
        finally:
            if settle_after:
                settle()
        version = self.version(table)
        log.info("%s %s: %d rows, version %s (delta-rs, from Arrow)", how, table, data.num_rows, version)
        return version  # type: ignore[return-value]

    def _replace_where(
        self, table: str, data: Any, predicate: str, partition_by: Sequence[str] | None, settle_after: bool,
    ) -> int:
        """``ReplaceWhere``: the rows matching ``predicate`` replaced by ``data`` (Arrow) in ONE transaction.

        Implemented with ``write_deltalake(mode="overwrite", predicate=...)``:
        delta-rs deletes the matching rows (rewriting files that hold other
        rows too) and adds ``data`` in a single commit, and it creates the table
        (partitioned by ``partition_by``) when it is absent. Every row of
        ``data`` must match ``predicate``, otherwise ``LakeError`` and nothing is
        committed. An empty ``data`` just deletes the matching rows (still one
        new version, so a rerun always adds exactly one version).

        The predicate is DataFusion SQL over the table's columns: ``AND``,
        ``OR``, ``NOT``, ``= != < <= > >=``, ``IN (...)``, ``BETWEEN``, ``IS NULL``.
        Compare a ``timestamp[us, UTC]`` column with a **string literal**; it is
        cast to the column's type, so all of these work and mean UTC unless an
        offset is given::

            window_end > '2026-01-02T00:00:00Z' AND window_end <= '2026-01-03T00:00:00Z'
            window_end > '2026-01-02 00:00:00.000000'      -- no offset: UTC
            window_end <= '2026-01-03T02:00:00+02:00'      -- explicit offset
            window_date IN ('2026-01-02', '2026-01-03')    -- date column

        ``TIMESTAMP '...'`` and ``CAST(... AS TIMESTAMP)`` literals do **not**
        work (they are nanosecond, zone-less timestamps and the comparison is
        refused). Checked with deltalake 1.6.6.
        """
        from deltalake import write_deltalake
        from deltalake.exceptions import DeltaError

        path = self.path(table)
        partition_by = self._partitioning(table, partition_by)
        if self.exists(table):
            current = self.arrow_schema(table)
            _check_same_schema(table, current, data.schema)
            data = data.select(current.names).cast(_nullable(current))
        _before_commit(path, [])
        path.mkdir(parents=True, exist_ok=True)
        try:
            write_deltalake(
                str(path), data, mode="overwrite", predicate=predicate, partition_by=partition_by or None
            )
        except DeltaError as err:
            if "failed validation" in str(err):
                raise LakeError(
                    f"{table}: rows to write do not all match the predicate {predicate!r}; nothing committed"
                ) from err
            raise
        finally:
            if settle_after:
                settle()
        version = self.version(table)
        log.info("replaced rows of %s where %s: %d rows, version %s (delta-rs)", table, predicate, data.num_rows, version)
        return version  # type: ignore[return-value]

    def _partitioning(self, table: str, partition_by: Sequence[str] | None) -> list[str]:
        """The partition columns to write with: the table's own, which ``partition_by`` must not contradict."""
        if self.exists(table):
            current = self.partition_columns(table)
            if partition_by is not None and list(partition_by) != current:
                raise LakeError(f"{table} is partitioned by {current}, not {list(partition_by)}")
            return current
        return list(partition_by or [])

    # ------------------------------------------------------------------ housekeeping

    def cleanup_staging(self, max_age_seconds: float = 3600.0) -> list[Path]:
        """Delete staging folders older than ``max_age_seconds`` and the unreferenced files they moved.

        A staging folder that still exists belongs to a write that is running
        or that died before its commit (a committed write removes its folder).
        """
        removed: list[Path] = []
        folder = self.root / STAGING
        if not folder.is_dir():
            return removed
        now = time.time()
        for staging in sorted(folder.iterdir()):
            if now - staging.stat().st_mtime < max_age_seconds:
                continue
            manifest = staging / MANIFEST
            moved = [Path(p) for p in json.loads(manifest.read_text())] if manifest.exists() else []
            live: dict[Path, set[str]] = {}
            for path in moved:
                if not path.exists():
                    continue
                root = next((p for p in path.parents if (p / "_delta_log").is_dir()), None)
                if root is not None and root not in live:
                    live[root] = _referenced_names(root)
                if root is None or path.name not in live[root]:
                    path.unlink()
                    removed.append(path)
            shutil.rmtree(staging, ignore_errors=True)
            removed.append(staging)
        if removed:
            log.info("cleaned up %d stale staging entries", len(removed))
        return removed


# ---------------------------------------------------------------------- helpers


def settle() -> None:
    """Collect garbage after a delta-rs write so its Arrow readers are freed while the runtime is alive.

    delta-rs occasionally aborts the interpreter at exit ("terminate called
    without an active exception", delta-io/delta-rs#2184) when objects of a
    write survive into the final teardown.
    """
    import gc

    gc.collect()


def _referenced_names(root: Path) -> set[str]:
    """File names of every data file any version of the table references (current snapshot + every commit).

    A file a later overwrite removed still belongs to older versions (time
    travel), so cleanup must not delete it; part file names are unique.
    """
    from deltalake import DeltaTable

    names = {_local_path(u).name for u in DeltaTable(str(root)).file_uris()}
    for commit in sorted((root / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            if '"add"' not in line:
                continue
            add = json.loads(line).get("add")
            if add:
                names.add(unquote(add["path"]).rsplit("/", 1)[-1])
    return names


def _local_path(uri: str) -> Path:
    """A data file of ``DeltaTable.file_uris()`` as a resolved local path (plain paths or ``file://`` URIs)."""
    from urllib.parse import urlparse

    if uri.startswith("file:"):
        return Path(unquote(urlparse(uri).path)).resolve()
    return Path(uri).resolve()


def file_stats(meta: Any) -> dict[str, Any]:
    """The Delta statistics of a Parquet file from its footer (``pyarrow.parquet.FileMetaData``).

    ``numRecords``, and for every top-level integer column (the types whose Delta
    statistic is the exact value, no rounding or truncation) whose row groups all carry
    statistics: ``nullCount``, and ``minValues`` / ``maxValues`` unless it is all NULL.
    Delta readers skip files by these bounds (data skipping), and ``Lake.max_from_log``
    reads a column's maximum from them without reading the data.
    """
    stats: dict[str, Any] = {"numRecords": meta.num_rows}
    lows: dict[str, int] = {}
    highs: dict[str, int] = {}
    nulls: dict[str, int] = {}
    schema = meta.schema
    for i in range(meta.num_columns):
        column = schema.column(i)
        name = column.path
        if "." in name or column.physical_type not in ("INT32", "INT64") or column.logical_type.type not in ("NONE", "INT"):
            continue
        if column.logical_type.type == "INT" and not json.loads(column.logical_type.to_json()).get("isSigned", True):
            continue
        low = high = None
        count = 0
        for g in range(meta.num_row_groups):
            st = meta.row_group(g).column(i).statistics
            if st is None or not st.has_null_count:
                break
            count += st.null_count
            if st.has_min_max:
                low = st.min if low is None else min(low, st.min)
                high = st.max if high is None else max(high, st.max)
            elif st.null_count != meta.row_group(g).num_rows:
                break  # values without bounds
        else:
            nulls[name] = count
            if low is not None:
                lows[name], highs[name] = low, high
    if nulls:
        stats.update({"minValues": lows, "maxValues": highs, "nullCount": nulls})
    return stats


def _delta_mode(spark: Any) -> str:
    from trendlake.jobs.spark import delta_mode

    return delta_mode(spark)


def _arrow_schema_of(dt: Any) -> Any:
    import pyarrow as pa

    return pa.schema(dt.schema().to_arrow())


def _nullable(schema: Any) -> Any:
    """``schema`` with every field nullable: Spark's non-null flags are incidental, not contracts."""
    import pyarrow as pa

    return pa.schema([f.with_nullable(True) for f in schema], metadata=schema.metadata)


def _type_key(t: Any) -> str:
    """A type's identity ignoring the names of list items (Spark says ``element``, Arrow ``item``)."""
    import pyarrow as pa

    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{_type_key(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{_type_key(f.type)}" for f in t) + ">"
    return str(t)


def _check_same_schema(table: str, current: Any, incoming: Any) -> None:
    have = [(f.name, _type_key(f.type)) for f in current]
    want = [(f.name, _type_key(f.type)) for f in incoming]
    if sorted(have) != sorted(want):
        raise LakeError(f"schema of the rows written to {table} differs from the table's: {want} vs {have}")


def _partition_values(rel_dir: Path, partition_by: list[str]) -> dict[str, str | None]:
    """Partition values of a Spark output folder ``k1=v1/k2=v2`` (Spark escapes with %XX)."""
    values: dict[str, str | None] = {}
    for part in rel_dir.parts:
        key, _, raw = part.partition("=")
        values[key] = None if raw == HIVE_NULL else unquote(raw)
    missing = [c for c in partition_by if c not in values]
    if missing:
        raise LakeError(f"staged file without partition folders for {missing}")
    return {c: values[c] for c in partition_by}


def _matches(values: dict[str, str | None], filters: Filters) -> bool:
    for column, op, want in filters:
        have = values.get(column)
        if op == "=":
            ok = have == _text(want)
        elif op == "!=":
            ok = have != _text(want)
        elif op == "in":
            ok = have in {_text(w) for w in want}
        elif op == "not in":
            ok = have not in {_text(w) for w in want}
        else:
            raise ValueError(f"partition filter operator {op!r} not supported (=, !=, in, not in)")
        if not ok:
            return False
    return True


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def filters_to_sql(filters: Filters) -> str:
    """A SQL condition equal to delta-rs partition filters (for ``replaceWhere``)."""

    def lit(v: Any) -> str:
        return "NULL" if v is None else "'" + str(v).replace("'", "''") + "'"

    parts = []
    for column, op, want in filters:
        if op in ("in", "not in"):
            parts.append(f"`{column}` {op.upper()} ({', '.join(lit(w) for w in want)})")
        else:
            parts.append(f"`{column}` {op} {lit(want)}")
    return " AND ".join(parts)
