"""The DAGs' settings and run conf: errors name the variable or conf key (never a CLI flag)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from trendlake.jobs.pipeline import Settings, replace_changed_from, replay_interval
from trendlake.schemas import load_stream_schema


class Run:
    def __init__(self, conf: object) -> None:
        self.conf = conf


def context(conf: object) -> dict:
    return {"dag_run": Run(conf), "data_interval_start": datetime(2026, 1, 1, tzinfo=UTC),
            "data_interval_end": datetime(2026, 1, 2, tzinfo=UTC)}


@pytest.mark.parametrize(("conf", "message"), [
    ({"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, 'replay conf "to" (2026-01-01T00:00:00Z) must be after "from"'),
    ({"from": "2026-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, 'replay conf "to" (2026-01-01T00:00:00Z) must be after "from"'),
    ({"from": "yesterday", "to": "2026-01-01T00:00:00Z"}, 'replay conf "from": not a timestamp'),
    ({"from": "2026-01-01T00:00:00Z", "to": "soon"}, 'replay conf "to": not a timestamp'),
    ({"from": "2026-01-01T00:00:00Z"}, 'replay conf needs both "from" and "to"'),
    (["from"], "the run conf must be a JSON object"),
])
def test_replay_conf_errors_name_the_conf_keys(conf, message) -> None:
    with pytest.raises(ValueError) as err:
        replay_interval(context(conf))
    assert str(err.value).startswith(message)
    assert "--" not in str(err.value)


def test_replay_conf_interval_and_the_data_interval() -> None:
    assert replay_interval(context({"from": "2026-01-03T00:00:00Z", "to": "2026-01-04T00:00:00Z"})) == (
        datetime(2026, 1, 3, tzinfo=UTC), datetime(2026, 1, 4, tzinfo=UTC))
    assert replay_interval(context(None)) == (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))


def test_replace_changed_comes_from_the_environment_or_the_run_conf(monkeypatch) -> None:
    monkeypatch.setenv("TRENDLAKE_REPLACE_CHANGED", "1")
    assert Settings.from_env().replace_changed
    monkeypatch.setenv("TRENDLAKE_REPLACE_CHANGED", "no")
    settings = Settings.from_env()
    assert not settings.replace_changed
    assert replace_changed_from({"replace_changed": True}, settings) is True
    assert replace_changed_from({}, settings) is False
    with pytest.raises(ValueError, match='ingest conf "replace_changed" must be true or false'):
        replace_changed_from({"replace_changed": "yes"}, settings)
    monkeypatch.setenv("TRENDLAKE_REPLACE_CHANGED", "maybe")
    with pytest.raises(ValueError, match="TRENDLAKE_REPLACE_CHANGED='maybe'"):
        Settings.from_env()


def test_bad_settings_name_their_variable(monkeypatch) -> None:
    monkeypatch.setenv("TRENDLAKE_STATS_DAYS", "seven")
    with pytest.raises(ValueError, match="TRENDLAKE_STATS_DAYS='seven': expected a whole number of days"):
        Settings.from_env()


def test_the_nightly_planner_is_a_setting(monkeypatch) -> None:
    assert Settings.from_env().planner == "auto"
    monkeypatch.setenv("TRENDLAKE_PLANNER", "hamlet")
    assert Settings.from_env().planner == "hamlet"
    monkeypatch.setenv("TRENDLAKE_PLANNER", "bogus")
    with pytest.raises(ValueError, match="TRENDLAKE_PLANNER='bogus': expected one of auto, gloria, gloria-greedy, "):
        Settings.from_env()


def test_the_stream_setting_resolves_like_the_commands(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "my_schema.json"
    path.write_text(json.dumps(dict(load_stream_schema("rides"), stream="flights")))
    monkeypatch.setenv("TRENDLAKE_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("TRENDLAKE_STREAM", str(path))
    assert Settings.from_env().stream_name == "flights"  # the schema's name, not the file's stem
    monkeypatch.setenv("TRENDLAKE_STREAM", "flights")
    assert Settings.from_env().stream_name == "flights"
