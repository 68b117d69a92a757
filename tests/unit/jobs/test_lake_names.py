"""One name rule for every table folder, every path inside the lake, one stream identity."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from trendlake.jobs.lake import (
    Lake,
    LakeNameError,
    check_name,
    is_schema_path,
    record_stream,
    resolve_stream,
)
from trendlake.schemas import load_stream_schema

GRAMMAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # optimizer/grammar.lark NAME


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,127}", fullmatch=True))
def test_every_query_name_of_the_language_up_to_128_characters_names_a_table(name: str) -> None:
    assert GRAMMAR_NAME.fullmatch(name)
    assert check_name(name) == name


@pytest.mark.parametrize("name", [
    "../../escaped_stream", "..", ".", "", "a/b", "a.b", "/etc", "x" * 129, "1abc", "a b", "a-b", "é", "a\x00",
    None, 7,
])
def test_names_that_are_not_identifiers_are_refused_with_a_clear_message(name) -> None:
    with pytest.raises(LakeNameError) as err:
        check_name(name, "query name")
    text = str(err.value)
    assert text.startswith("query name ") and "letters, digits and _" in text and "\n" not in text


def test_table_paths_stay_under_the_lake_root(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    assert lake.path("results/trips") == lake.root / "results" / "trips"
    for bad in ("results/../../x", "bronze/../../../etc", "results/a/b", "bronze.", "nokind/x"):
        with pytest.raises(LakeNameError):
            lake.path(bad)
    # a table folder that is a link out of the lake resolves outside it: refused
    outside = tmp_path / "outside"
    outside.mkdir()
    (lake.root / "results").mkdir(parents=True)
    (lake.root / "results" / "linked").symlink_to(outside)
    with pytest.raises(LakeNameError, match="outside the lake root"):
        lake.path("results/linked")
    for bad in ("..", ".", "a/b", ""):
        with pytest.raises(LakeNameError):
            lake.plans(bad)


def test_a_name_and_a_schema_path_resolve_to_the_same_stream(tmp_path: Path) -> None:
    schema = dict(load_stream_schema("rides"), stream="flights")
    path = tmp_path / "schemas" / "my_flights.json"  # the file name is not the stream name
    path.parent.mkdir()
    path.write_text(json.dumps(schema))
    lake = tmp_path / "lake"
    assert resolve_stream(str(path), lake) == ("flights", schema)
    # before anything was ingested, the bare name has no schema (not bundled) ...
    with pytest.raises(FileNotFoundError, match="no stream schema 'flights'"):
        resolve_stream("flights", lake)
    assert resolve_stream("flights", lake, need_schema=False) == ("flights", None)
    # ... after ingest recorded it, the name resolves to the same schema
    record_stream(lake, schema)
    assert resolve_stream("flights", lake) == ("flights", schema)
    assert resolve_stream(path, lake) == resolve_stream("flights", lake)
    # bundled names resolve without a lake
    assert resolve_stream("rides") == ("rides", load_stream_schema("rides"))


def test_stream_values_that_escape_or_are_not_schemas_are_refused(tmp_path: Path) -> None:
    escaped = tmp_path / "evil.json"
    escaped.write_text(json.dumps(dict(load_stream_schema("rides"), stream="../../escaped_stream")))
    with pytest.raises(LakeNameError, match="stream name '../../escaped_stream'"):
        resolve_stream(str(escaped))
    not_json = tmp_path / "notes.json"
    not_json.write_bytes(b"\xff\xfe not json")
    with pytest.raises(Exception, match="not a JSON file"):
        resolve_stream(str(not_json))
    with pytest.raises(FileNotFoundError, match="no stream schema file"):
        resolve_stream(str(tmp_path / "missing.json"))
    with pytest.raises(LakeNameError):
        resolve_stream("bad-name")
    assert is_schema_path("a/b") and is_schema_path("x.json") and not is_schema_path("flights")
