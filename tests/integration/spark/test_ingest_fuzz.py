"""Random landing files (bytes, CSV, JSON lines) through ingest on real Spark and Delta.

Whatever the files hold: ingest never raises, every row it read is in bronze
or in quarantine (per file, as the log says), a JSON lines file's rows are its
non-blank lines, and a rerun over the same folder changes no table. Each
example is a whole ingest on Spark (about 15 s on 2 cores, nearly all of it Spark and
Great Expectations jobs; drawing the files takes milliseconds), so the example counts
are small (``TRENDLAKE_FUZZ_EXAMPLES``, default 3; set it higher for a longer local run);
one SparkSession serves them all.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from trendlake.jobs import lake as lakelib
from trendlake.jobs.ingest import ingest
from trendlake.schemas import load_stream_schema

pytestmark = pytest.mark.spark

RIDES = load_stream_schema("rides")
COLUMNS = ["type", "ts", *RIDES["attributes"]]
FUZZ = settings(max_examples=int(os.environ.get("TRENDLAKE_FUZZ_EXAMPLES", "3")), deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# Times stay within 1970..2100: far-out numeric times (epoch milliseconds read as seconds)
# are the typing rules' concern, checked elsewhere.
times = st.one_of(
    st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)).map(
        lambda d: d.isoformat().replace("+00:00", "Z")),
    st.integers(min_value=0, max_value=4_000_000_000).map(str),
    st.sampled_from(["", "yesterday", "2026-13-45T99:00:00Z", "NaN", "1e400", " "]),
)
text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
values = st.one_of(
    text, st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "true", "false", "north", "card", "late", "1", "0", "-1", "3.5", "1e3"]),
)
types = st.one_of(st.sampled_from(RIDES["event_types"]), text)


@st.composite
def csv_files(draw: st.DrawFn) -> bytes:
    header = draw(st.permutations(COLUMNS).flatmap(lambda cols: st.lists(st.sampled_from(cols + ["extra"]),
                                                                         min_size=1, max_size=8, unique=True)))
    if draw(st.booleans()):
        header = ["type", "ts", *header]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    writer.writerow(header)
    for _ in range(draw(st.integers(min_value=0, max_value=12))):
        row = [draw(types) if c == "type" else draw(times) if c == "ts" else draw(values) for c in header]
        width = draw(st.integers(min_value=max(0, len(row) - 2), max_value=len(row) + 2))  # too few / many fields
        writer.writerow((row + [draw(values) for _ in range(width)])[:width])
        if draw(st.integers(0, 5)) == 0:
            out.write("\n")  # a blank line
    return out.getvalue().encode()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def json_files(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(min_value=0, max_value=12))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(text).replace("\n", " ").replace("\r", " "))  # not JSON (or a bare value)
        elif kind == 1:
            lines.append(json.dumps(draw(json_values)))
        else:
            keys = draw(st.lists(st.sampled_from(COLUMNS + ["extra"]), unique=True, max_size=8))
            obj = {k: draw(types) if k == "type" else draw(times) if k == "ts" else draw(json_values | values)
                   for k in keys}
            lines.append(json.dumps(obj))
        if draw(st.integers(0, 5)) == 0:
            lines.append("")
    return "".join(line + "\n" for line in lines).encode()


def blank_free_lines(data: bytes) -> int:
    """Lines as Spark's text reader ends them (\\n, \\r\\n, \\r) that are not blank after trimming spaces;
    a UTF-8 byte order mark at the start of the file is not content (ingest and eval skip it)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return sum(1 for line in re.split(rb"\r\n|\r|\n", data) if line.strip(b" "))


def accounted(lake: lakelib.Lake, report) -> None:
    """Every row read is in bronze or quarantine, per file exactly as the ingest log says."""
    def rows(table: str, columns: list[str] | None = None) -> list[dict]:
        data = lake.read_arrow(table, columns=columns)
        return data.to_pylist() if data is not None else []

    log = {r["file"]: r for r in rows("ingest_log/rides") if r["status"] != "refused"}
    bronze = Counter(r["source_file"] for r in rows("bronze/rides", ["source_file"]))
    quarantine = Counter(r["source_file"] for r in rows("quarantine/rides", ["source_file"]))
    assert report.rows_read == report.rows_good + report.rows_bad
    assert sum(bronze.values()) == report.rows_good and sum(quarantine.values()) == report.rows_bad
    for name in report.files_ingested:
        row = log[name]
        assert row["rows_read"] == row["rows_good"] + row["rows_bad"]
        assert (bronze[name], quarantine[name]) == (row["rows_good"], row["rows_bad"]), name
    seqs = [r["seq"] for r in rows("bronze/rides", ["seq"])]
    assert len(seqs) == len(set(seqs)), "seq is unique"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def run_twice(workdir: Path, spark, files: dict[str, bytes]) -> tuple[Any, dict[str, int]]:
    """Ingest ``files`` into a new lake twice; the first report and the rows read per file (from the log)."""
    root = workdir / uuid.uuid4().hex[:8]
    landing = root / "landing"
    landing.mkdir(parents=True)
    for name, data in files.items():
        (landing / name).write_bytes(data)
    lake = lakelib.Lake(root / "lake")
    try:
        report = ingest(lake.root, RIDES, landing, spark=spark)
        assert set(report.files_ingested) | set(report.files_refused) | set(report.files_skipped) == set(files)
        accounted(lake, report)
        log = lake.read_arrow("ingest_log/rides")
        per_file = {r["file"]: r["rows_read"] for r in (log.to_pylist() if log is not None else [])
                    if r["status"] != "refused"}
        tables = ("bronze/rides", "quarantine/rides", "ingest_log/rides")
        versions = {t: lake.version(t) for t in tables}
        again = ingest(lake.root, RIDES, landing, spark=spark)
        assert again.files_ingested == [] and again.rows_read == 0
        assert again.files_refused == report.files_refused
        assert {t: lake.version(t) for t in tables} == versions, "a rerun changes nothing"
        return report, per_file
    finally:
        shutil.rmtree(root, ignore_errors=True)


@FUZZ
@given(csv_data=csv_files(), json_data=json_files())
def test_random_csv_and_json_lines(workdir, spark, csv_data, json_data) -> None:
    report, per_file = run_twice(workdir, spark, {"a.csv": csv_data, "b.jsonl": json_data})
    assert "a.csv" in report.files_ingested, report.files_refused  # a CSV with a header is always read
    if "b.jsonl" in report.files_ingested:
        assert per_file["b.jsonl"] == blank_free_lines(json_data), "a JSON lines file's rows are its non-blank lines"


@FUZZ
@given(data=st.lists(st.binary(max_size=300), min_size=3, max_size=3))
@example(data=[b"", b"", b""])  # the refused empty CSV must not make the empty JSON lines file a "copy" of it
def test_random_bytes_in_every_format(workdir, spark, data) -> None:
    report, per_file = run_twice(workdir, spark, {"a.csv": data[0], "b.jsonl": data[1], "c.parquet": data[2]})
    assert "c.parquet" in report.files_refused
    if data[1] != data[0] or "a.csv" in report.files_refused:
        assert "b.jsonl" in report.files_ingested, report
    if "b.jsonl" in report.files_ingested:
        assert per_file["b.jsonl"] == blank_free_lines(data[1]), "a JSON lines file's rows are its non-blank lines"
