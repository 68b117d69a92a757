"""The source adapters without Spark: what ``adapt`` writes, what it skips and reports, the ``adapt`` command.

(``tests/integration/spark/test_adapters_ingest.py`` ingests the adapted files
on Spark; these checks read the written file back with pyarrow.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trendlake.datagen.adapters import ADAPTERS, AdaptError, adapt
from trendlake.jobs.cli import main

DEBS = (
    "0,1377986401,68.451,0,0,0,0\n"
    "1,1377986401,19.927,1,0,0,0\n"
    "\n"
    "2,1377986402,lots,1,1,0,0\n"
    "3,1377986403,22.1,1,2,1,3,extra\n"
    "4,1377986404,7,2,2,1,3\n"
    "5,1377986405,22.1,1,2,1,3\n"
)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_debs_rows_become_work_and_load_events_and_bad_rows_are_reported_by_line(tmp_path: Path) -> None:
    src = tmp_path / "sorted.csv"
    src.write_text(DEBS)
    report = adapt("debs", src, tmp_path / "out.jsonl", chunk_rows=1)  # an alias of debs2014
    assert (report.kind, report.stream) == ("debs2014", "smart_home")
    assert report.rows_read == 6 == report.rows_converted + report.rows_skipped
    assert (report.rows_converted, report.rows_written) == (3, 3)
    assert report.examples == {
        "value is not a number": [4],
        "wrong number of fields (want 7)": [5],
        "property not 0 (work) or 1 (load)": [6],
    }
    rows = _rows(tmp_path / "out.jsonl")
    assert [(r["type"], r["ts"], r.get("work"), r.get("load"), r["reading"]) for r in rows] == [
        ("Work", "2013-08-31T22:00:01.000000Z", 68.451, None, 0),
        ("Load", "2013-08-31T22:00:01.000000Z", None, 19.927, 1),
        ("Load", "2013-08-31T22:00:05.000000Z", None, 22.1, 5),
    ]
    assert rows[2]["house"] == 3 and rows[2]["household"] == 1 and rows[2]["plug"] == 2


def test_ohlcv_bars_are_trades_in_utc_named_after_the_file(tmp_path: Path) -> None:
    src = tmp_path / "msft.us.txt"
    src.write_text("2024-01-02,09:30,370.1,371.0,369.9,370.5,1200\n")
    report = adapt("ohlcv", src, tmp_path / "out.jsonl", timezone="America/New_York")
    assert report.notes == ["no header line: columns taken as Date[,Time],Open,High,Low,Close,Volume"]
    (row,) = _rows(tmp_path / "out.jsonl")
    assert (row["type"], row["ts"], row["company"], row["sector"]) == ("Trade", "2024-01-02T14:30:00.000000Z", "MSFT", "unknown")
    assert (row["price"], row["open"], row["high"], row["low"], row["volume"]) == (370.5, 370.1, 371.0, 369.9, 1200)


def test_bad_requests_are_one_line_errors(tmp_path: Path) -> None:
    csv = tmp_path / "trips.csv"
    csv.write_text("a,b\n")
    with pytest.raises(AdaptError, match="unknown adapter 'nope'"):
        adapt("nope", csv, tmp_path / "o.csv")
    with pytest.raises(AdaptError, match="read from Parquet files"):
        adapt("tlc", csv, tmp_path / "o.csv")
    with pytest.raises(AdaptError, match="tlc mode must be 'rides' or 'zones'"):
        adapt("tlc", csv, tmp_path / "o.csv", mode="trips")
    with pytest.raises(AdaptError, match="adapter debs2014 has no option"):
        adapt("debs2014", csv, tmp_path / "o.csv", ticker="X")
    with pytest.raises(FileNotFoundError, match="no source file"):
        adapt("debs2014", tmp_path / "missing.csv", tmp_path / "o.csv")
    assert not (tmp_path / "o.csv").exists()


def test_the_adapt_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "sorted.csv"
    src.write_text(DEBS)
    out = tmp_path / "landing" / "debs.csv"
    assert main(["adapt", "debs2014", str(src), "-o", str(out)]) == 0
    summary = capsys.readouterr().out
    assert summary.startswith("debs2014 -> smart_home: 6 source rows read, 3 converted, 3 skipped; 3 events written")
    assert "skipped 1: value is not a number (line 4)" in summary
    assert out.read_text().splitlines()[0].startswith("type,ts,")
    assert main(["adapt", "debs2014", str(src), "-o", str(out), "--mode", "zones"]) == 2
    assert "debs2014 takes no --mode" in capsys.readouterr().err
    assert main(["adapt", "ohlcv", str(tmp_path / "none.csv"), "-o", str(out)]) == 2
    assert "no source file" in capsys.readouterr().err
    assert set(ADAPTERS) == {"tlc", "debs2014", "ohlcv", "dublin_bus"}
