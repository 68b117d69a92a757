"""Targeted cases against the independent oracle (tests/oracle), for every strategy.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). Each case is one query and one stream
chosen to reach a path the random differential test reaches rarely: sliding
windows far from the stream's start (window indexes past 2) with kept events
and negations, mixed-grained queries (adjacent predicates under
skip-till-any-match), long partitions that take COGRA's kernel, several
partitions of one group. Expected values are the oracle's (DESIGN §5, no
engine code); the test also checks that each case has trends.
"""

from __future__ import annotations

import pytest

from tests.oracle import evaluate
from tests.unit.engine.engine_adapter import run_engine
from tests.unit.engine.test_oracle_differential import same_rows
from trendlake import engine, optimizer


def rows_of(text: str, **attrs) -> list[dict]:
    """'a1 b2 c2' -> rows (type upper-cased, ts in seconds); attrs: event name -> dict."""
    out = []
    for i, word in enumerate(text.split()):
        row = {"type": word[0].upper(), "ts": int(word[1:].split("_")[0]), "seq": i}
        row.update(attrs.get(word, {}))
        out.append(row)
    return out


def check(text: str, rows: list[dict], min_rows: int = 1) -> None:
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    want = evaluate(text, rows)
    assert len(want) >= min_rows, want  # the case has trends in enough windows
    for strategy in ("auto", *sorted(engine.STRATEGIES)):
        try:
            got = run_engine(plan, rows, strategy)
        except engine.Unsupported:
            assert strategy == "cogra"
            continue
        assert same_rows(got, want), f"{strategy}\ngot  {got}\nwant {want}"


# a long stream: A events with rising x, B and C events, over 14 seconds
LONG = "a0 b1 a2 c3 a4 b5 a6 c6 a7 b8 a9 d9 a10 b11 c12 a12 b13 a14 b14"
X = {w: {"x": i % 5, "y": i} for i, w in enumerate(LONG.split())}


@pytest.mark.parametrize("semantics", ["skip-till-any-match", "skip-till-next-match", "contiguous"])
@pytest.mark.parametrize("window", ["WITHIN 4 seconds SLIDE 1 seconds", "WITHIN 5 seconds SLIDE 2 seconds",
                                    "WITHIN 3 seconds"])
def test_sliding_windows_far_from_the_start(semantics: str, window: str) -> None:
    text = (f"QUERY q RETURN COUNT(*), COUNT(A), SUM(A.x), MIN(A.y), MAX(A.y), AVG(A.x) "
            f"PATTERN SEQ(A+, B) SEMANTICS {semantics} {window};")
    check(text, rows_of(LONG, **X), min_rows=3)


@pytest.mark.parametrize("window", ["WITHIN 4 seconds SLIDE 1 seconds", "WITHIN 6 seconds SLIDE 3 seconds"])
def test_mixed_grained_with_kept_events(window: str) -> None:
    # an adjacent predicate keeps A events (GRETA / COGRA vertex lists) across many windows
    text = (f"QUERY q RETURN COUNT(*), SUM(A.y), MAX(B.y) PATTERN SEQ(A+, B) "
            f"WHERE A.x <= NEXT(A).x {window};")
    check(text, rows_of(LONG, **X), min_rows=3)


@pytest.mark.parametrize("semantics", ["skip-till-any-match", "skip-till-next-match"])
@pytest.mark.parametrize("window", ["WITHIN 4 seconds SLIDE 1 seconds", "WITHIN 6 seconds SLIDE 2 seconds"])
def test_negations_in_sliding_windows(semantics: str, window: str) -> None:
    for pattern in ("SEQ(A+, NOT SEQ(C, D), B)", "SEQ(NOT C, A, B)", "SEQ(A, B, NOT C)", "SEQ(A+, NOT C, B)"):
        text = f"QUERY q RETURN COUNT(*), SUM(A.x) PATTERN {pattern} SEMANTICS {semantics} {window};"
        check(text, rows_of(LONG, **X), min_rows=2)


def test_a_long_partition_takes_the_kernel_with_the_oracle_s_numbers() -> None:
    words = " ".join(f"a{t} b{t}_" if t % 3 == 0 else f"a{t}" for t in range(40))
    text = ("QUERY q RETURN COUNT(*), COUNT(B), SUM(A.x), MIN(A.x), MAX(A.x) PATTERN SEQ(A, B+) "
            "WITHIN 4 seconds SLIDE 2 seconds;")
    rows = rows_of(words)
    for i, r in enumerate(rows):
        r["x"] = (7 * i) % 11 - 3
    check(text, rows, min_rows=10)


def test_partitions_of_one_group() -> None:
    text = ("QUERY q RETURN g, COUNT(*), SUM(A.x), MIN(A.x), MAX(A.x) PATTERN SEQ(A+, B) "
            "WHERE [h] GROUP-BY g WITHIN 5 seconds SLIDE 1 seconds;")
    rows = rows_of(LONG, **X)
    for i, r in enumerate(rows):
        r["g"] = "p" if i % 5 else "q"
        r["h"] = 0 if i < 10 else 1  # two partitions of group p
    check(text, rows, min_rows=4)
