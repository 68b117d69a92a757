"""The ingest experiment's smoke runs: what ships and the older way from git (the typing rules
written inline; a CSV file read whole) ingest the same file into the same rows (the record
says so), and the records are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.experiments import ingest as experiment
from benchmarks.suite import run_experiment

pytestmark = pytest.mark.spark


@pytest.mark.parametrize(("compare", "record", "modes"), [
    ("rules", "ingest", ("layered", "inline")),
    ("csv-read", "ingest_csv_read", ("split", "whole")),
])
def test_ingest_experiment_smoke_run(spark, tmp_path: Path, compare: str, record: str,
                                     modes: tuple[str, str]) -> None:
    run_experiment("ingest", size="smoke", out=tmp_path, log=lambda line: None, plot=False,
                   options={"compare": compare})
    report = json.loads((tmp_path / f"{record}.json").read_text())
    assert report["agreement"]["all_agree"], report["agreement"]["disagreements"]
    assert report["agreement"]["checked"] == 1
    assert report["older_rev"] == experiment.OLD_REV
    assert report["rows_read"] == 300 + len(experiment.BAD_ROWS)
    assert report["rows_bad"] == len(experiment.BAD_ROWS)  # quarantined alike both ways
    assert {m: len(t) for m, t in report["seconds"].items()} == dict.fromkeys(modes, 1)
    slow, fast = modes[1], modes[0]
    assert report[f"{slow}_over_{fast}"] == report["median_seconds"][slow] / report["median_seconds"][fast]
    if compare == "csv-read":
        assert report["file_read_in_splits"], "else the experiment compares the whole read with itself"


def test_the_older_way_comes_from_git_with_its_switch_off() -> None:
    from trendlake.jobs import ingest

    assert not hasattr(ingest, "LAYERED") and not hasattr(ingest, "SPLIT_CSV"), "no switch ships"
    older = experiment.older_ingest(experiment.OLD_REV, "rules").module
    assert older.LAYERED is False and older.SPLIT_CSV is True
    assert older is not ingest and older.__name__ != ingest.__name__
    with pytest.raises(ValueError, match="git show no-such-rev:jobs/ingest.py"):
        experiment.older_ingest("no-such-rev", "rules")
