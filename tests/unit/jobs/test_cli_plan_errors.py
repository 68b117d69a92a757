"""``trendlake plan`` on bad input: one-line error naming the file, line or query, exit 2, no traceback."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trendlake.jobs.cli import EXIT_BAD_INPUT, main
from trendlake.optimizer.parser import MAX_NESTING

GOOD = "QUERY q RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 seconds;\n"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def refused(argv: list[str], *needles: str) -> str:
    code, out, err = run(argv)
    assert code == EXIT_BAD_INPUT, (code, err)
    assert out == ""
    assert err.startswith("trendlake: error: ")
    assert "Traceback" not in err and "internal error" not in err
    assert err.count("\n") == 1, err  # one line
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def test_non_utf8_workload(tmp_path: Path) -> None:
    wl = tmp_path / "bad.etq"
    wl.write_bytes(b"QUERY q RETURN COUNT(*)\nPATTERN A\xff WITHIN 10 seconds;\n")
    refused(["plan", str(wl)], str(wl), "UTF-8", "line 2")


def test_directory_as_workload(tmp_path: Path) -> None:
    refused(["plan", str(tmp_path)], str(tmp_path), "directory")


def test_missing_workload_keeps_its_quotes(tmp_path: Path) -> None:
    err = refused(["plan", str(tmp_path / "nope.etq")], "nope.etq")
    assert err.count("'") % 2 == 0 and err.count('"') % 2 == 0  # no quote stripped


def test_out_into_missing_folder(tmp_path: Path) -> None:
    wl = tmp_path / "ok.etq"
    wl.write_text(GOOD)
    target = tmp_path / "missing" / "plan.json"
    refused(["plan", str(wl), "--out", str(target)], "--out", str(target.parent))
    assert not target.parent.exists()


def test_unknown_planner(tmp_path: Path) -> None:
    wl = tmp_path / "ok.etq"
    wl.write_text(GOOD)
    code, out, err = run(["plan", str(wl), "--planner", "bogus"])
    assert (code, out, err.count("\n")) == (EXIT_BAD_INPUT, "", 1), err
    assert err.startswith("trendlake plan: error: argument --planner: invalid choice: 'bogus'") and "none" in err


@pytest.mark.parametrize("content", ["not json\n", "{\"stream\": ", "[1, 2]\n", ""])
def test_stream_schema_not_json(tmp_path: Path, content: str) -> None:
    wl = tmp_path / "ok.etq"
    wl.write_text(GOOD)
    schema = tmp_path / "s.json"
    schema.write_text(content)
    refused(["plan", str(wl), "--stream", str(schema)], str(schema))


@pytest.mark.parametrize(
    "body",
    [
        "PATTERN " + "SEQ(" * 3000 + "A" + ")" * 3000,
        "PATTERN A a WHERE a.x > " + "(" * 3000 + "1" + ")" * 3000,
        "PATTERN A a WHERE a.x > " + "- " * 3000 + "1",
        "PATTERN A a WHERE a.x > " + " + ".join(["1"] * 3000),
    ],
)
def test_deep_nesting_is_a_workload_error(tmp_path: Path, body: str) -> None:
    wl = tmp_path / "deep.etq"
    wl.write_text(f"QUERY deep RETURN COUNT(*)\n{body} WITHIN 10 seconds;\n")
    code, out, err = run(["plan", str(wl)])
    assert (code, out) == (EXIT_BAD_INPUT, "")
    # an invalid workload: one heading line, then one line per error (docs/cli.md)
    head, *errors = err.splitlines()
    assert head == "trendlake: error: invalid workload, nothing done:"
    assert len(errors) == 1 and errors[0].startswith(f"{wl}:2:"), errors
    assert "query deep" in errors[0] and f"more than {MAX_NESTING} levels" in errors[0]


def test_nesting_up_to_the_limit_plans(tmp_path: Path) -> None:
    depth = MAX_NESTING - 5
    wl = tmp_path / "deep.etq"
    wl.write_text(
        "QUERY ok RETURN COUNT(*) PATTERN A a WHERE a.x > "
        + "(" * depth + "1" + ")" * depth + " WITHIN 10 seconds;\n"
    )
    code, out, err = run(["plan", str(wl)])
    assert code == 0, err
    assert json.loads(out)["queries"][0]["name"] == "ok"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.one_of(
        st.text(max_size=300),
        st.lists(
            st.sampled_from([
                "QUERY", "q", "Q", "RETURN", "COUNT(*)", "COUNT(A)", "SUM(A.x)", "AVG(A.x)", "PATTERN",
                "SEQ(", ")", "(", ",", "A", "B", "NOT", "+", "WHERE", "A.x", ">", "-", "1", "'s'", "[x]",
                "SEMANTICS", "contiguous", "GROUP-BY", "x", "WITHIN", "10", "seconds", "SLIDE", "0", ";",
                "AND", "IN", "NEXT(A)", "*", "/", "%", "1e999", "--", "\n",
            ]),
            max_size=60,
        ).map(" ".join),
    )
)
def test_random_workload_text_never_a_traceback(tmp_path: Path, text: str) -> None:
    wl = tmp_path / "fuzz.etq"
    wl.write_bytes(text.encode("utf-8", errors="replace"))
    code, out, err = run(["plan", str(wl)])
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 0:
        assert json.loads(out)["format_version"] == 3
    else:
        assert code == EXIT_BAD_INPUT and err.startswith("trendlake: error: ")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_random_bytes_never_a_traceback(tmp_path: Path, data: bytes) -> None:
    wl = tmp_path / "fuzz.etq"
    wl.write_bytes(data)
    code, _, err = run(["plan", str(wl)])
    assert "Traceback" not in err and "internal error" not in err, err
    assert code == EXIT_BAD_INPUT and err.startswith("trendlake: error: ")
