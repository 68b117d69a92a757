"""`trendlake eval` end to end: files in, JSON/table out, errors to stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trendlake.jobs.cli import main

from trendlake import engine

FIG_2_4 = """-- Figure 2.4 of Poppe's dissertation
QUERY fig24
RETURN COUNT(*), COUNT(A), MIN(A.attr), MAX(A.attr), SUM(A.attr), AVG(A.attr) AS avg_attr
PATTERN SEQ(A+, B)+
WITHIN 10 seconds;
"""


@pytest.fixture
def fig24(tmp_path: Path) -> tuple[Path, Path]:
    workload = tmp_path / "fig24.etq"
    workload.write_text(FIG_2_4)
    events = tmp_path / "events.csv"
    events.write_text("type,ts,attr\nA,1,5\nB,2,\nA,3,6\nA,4,4\nB,7,\n")
    return workload, events


@pytest.mark.parametrize("strategy", ["auto", *sorted(engine.STRATEGIES)])
def test_eval_json_reproduces_figure_2_4(fig24, capsys, strategy: str) -> None:
    workload, events = fig24
    assert main(["eval", str(workload), "--events", str(events), "--strategy", strategy]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "query": "fig24",
            "window_start": "1970-01-01T00:00:00Z",
            "window_end": "1970-01-01T00:00:10Z",
            "COUNT(*)": 11,
            "COUNT(A)": 20,
            "MIN(A.attr)": 4,
            "MAX(A.attr)": 6,
            "SUM(A.attr)": 100,
            "avg_attr": 5.0,
        }
    ]


def test_eval_reads_jsonl_and_parquet_like_csv(fig24, tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    workload, csv_file = fig24
    rows = [{"type": "A", "ts": 1, "attr": 5}, {"type": "B", "ts": 2}, {"type": "A", "ts": 3, "attr": 6},
            {"type": "A", "ts": 4, "attr": 4}, {"type": "B", "ts": 7}]
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows))
    parquet = tmp_path / "events.parquet"
    pq.write_table(
        pa.table({
            "type": [r["type"] for r in rows],
            "ts": pa.array([r["ts"] * 1_000_000 for r in rows], pa.timestamp("us", tz="UTC")),
            "attr": [r.get("attr") for r in rows],
        }),
        parquet,
    )
    outputs = []
    for path in (csv_file, jsonl, parquet):
        assert main(["eval", str(workload), "--events", str(path)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2]


def test_eval_table_format(fig24, capsys) -> None:
    workload, events = fig24
    assert main(["eval", str(workload), "--events", str(events), "--format", "table"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "== fig24 (1 rows)"
    assert dict(zip(lines[1].split(), lines[2].split(), strict=True)) == {
        "window_start": "1970-01-01T00:00:00Z",
        "window_end": "1970-01-01T00:00:10Z",
        "COUNT(*)": "11",
        "COUNT(A)": "20",
        "MIN(A.attr)": "4",
        "MAX(A.attr)": "6",
        "SUM(A.attr)": "100",
        "avg_attr": "5",
    }
    assert lines[3:] == [""]


def test_invalid_workload_evaluates_nothing(tmp_path: Path, fig24, capsys) -> None:
    _, events = fig24
    bad = tmp_path / "bad.etq"
    bad.write_text(FIG_2_4 + "\nQUERY fig24\nRETURN COUNT(*)\nPATTERN A+\nWITHIN 5 seconds;\n")
    assert main(["eval", str(bad), "--events", str(events)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "fig24" in captured.err and "invalid workload, nothing done" in captured.err


def test_bad_event_file_is_a_clear_error(tmp_path: Path, fig24, capsys) -> None:
    workload, _ = fig24
    events = tmp_path / "bad.csv"
    events.write_text("type,ts,attr\nA,1,5\nB,not-a-time,\n")
    assert main(["eval", str(workload), "--events", str(events)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv: line 3: column 'ts'" in err and "not-a-time" in err


def test_overflow_is_marked_not_wrapped(tmp_path: Path, capsys) -> None:
    workload = tmp_path / "many.etq"
    workload.write_text("QUERY many RETURN COUNT(*) PATTERN A+ WITHIN 1 hour;")
    events = tmp_path / "many.csv"
    events.write_text("type,ts\n" + "".join(f"A,{i}\n" for i in range(140)))
    assert main(["eval", str(workload), "--events", str(events), "--strategy", "greta"]) == 0
    assert json.loads(capsys.readouterr().out)["COUNT(*)"] == "OVERFLOW"
    events.write_text("type,ts\n" + "".join(f"A,{i}\n" for i in range(100)))
    assert main(["eval", str(workload), "--events", str(events), "--strategy", "greta"]) == 0
    assert json.loads(capsys.readouterr().out)["COUNT(*)"] == 2**100 - 1


def test_eval_plans_its_workload_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The statistics ``eval`` plans from read the workload's query entries (``jobs.statistics``),
    never a planner's run: the workload is planned once, by the planner asked for."""
    from trendlake import optimizer

    workload = tmp_path / "w.etq"
    workload.write_text("QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 seconds;\n"
                        "QUERY q2 RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 10 seconds;\n")
    events = tmp_path / "e.csv"
    events.write_text("type,ts\nA,1\nB,2\nC,3\nB,4\n")
    planners: list[str] = []
    real = optimizer.build_plan

    def counted(*args, **kwargs):
        planners.append(kwargs.get("planner", args[1] if len(args) > 1 else "none"))
        return real(*args, **kwargs)

    monkeypatch.setattr(optimizer, "build_plan", counted)
    assert main(["eval", str(workload), "--events", str(events), "--planner", "auto"]) == 0
    assert planners == ["auto"]
