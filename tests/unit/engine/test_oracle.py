"""The oracle (tests/oracle) on the worked examples of DESIGN §5 and the dissertation.

The oracle is checked first on numbers published elsewhere, so that agreeing
with it means something: Figure 2.3 (43 / 8 / 2 trends under the three
semantics), Figure 2.4 (11 trends, COUNT(A)=20, MIN 4, MAX 6, SUM 100, AVG 5),
Figure 11.1 (43 trends, 13 with ``NOT SEQ(C, D)``), the next-match examples of
DESIGN §5 (a1 b2 b3 c4: 1; a1 a2 b3 c4: 2) and window-bounded negation.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle import evaluate
from tests.oracle.pattern import PARTIAL, Pattern
from trendlake import optimizer

FIG_2_3 = "a1 b2 a3 a4 c5 b6 a7 b8"
FIG_11_1 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"
US = 1_000_000


def stream(text: str, **attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """``"a1 b2"`` -> rows (type upper-cased, ts in seconds); attributes by event name."""
    rows = []
    for i, name in enumerate(text.split()):
        row: dict[str, Any] = {"type": name[0].upper(), "ts": int(name[1:]), "seq": i}
        row.update(attrs.get(name, {}))
        rows.append(row)
    return rows


def query(pattern: str, semantics: str = "skip-till-any-match", returns: str = "COUNT(*)",
          where: str = "", within: str = "1000 seconds") -> str:
    where = f"WHERE {where} " if where else ""
    return f"QUERY q RETURN {returns} PATTERN {pattern} SEMANTICS {semantics} {where}WITHIN {within};"


def counts(text: str, rows: list[dict[str, Any]]) -> dict[int, Any]:
    return {r["window_start"] // US: r["COUNT(*)"] for r in evaluate(text, rows)}


@pytest.mark.parametrize(
    ("semantics", "want"),
    [("skip-till-any-match", 43), ("skip-till-next-match", 8), ("contiguous", 2)],
)
def test_fig_2_3(semantics: str, want: int) -> None:
    assert counts(query("SEQ(A+, B)+", semantics), stream(FIG_2_3)) == {0: want}


def test_fig_2_4_aggregates() -> None:
    rows = stream("a1 b2 a3 a4 b7", a1={"attr": 5}, a3={"attr": 6}, a4={"attr": 4})
    text = query("SEQ(A+, B)+", returns="COUNT(*), COUNT(A), MIN(A.attr), MAX(A.attr), SUM(A.attr), AVG(A.attr)")
    assert evaluate(text, rows) == [{
        "query": "q", "window_start": 0, "window_end": 1000 * US, "COUNT(*)": 11, "COUNT(A)": 20,
        "MIN(A.attr)": 4, "MAX(A.attr)": 6, "SUM(A.attr)": 100, "AVG(A.attr)": 5.0,
    }]


def test_fig_11_1() -> None:
    assert counts(query("SEQ(A+, B)+"), stream(FIG_11_1)) == {0: 43}
    # (c5, d6) lies between a1, a3, a4 and b7: b2 (1) + b9 (12) = 13
    assert counts(query("SEQ(A+, NOT SEQ(C, D), B)+"), stream(FIG_11_1)) == {0: 13}


def test_next_match_examples_of_design() -> None:
    nxt = "skip-till-next-match"
    assert counts(query("SEQ(A, B, C)", nxt), stream("a1 b2 b3 c4")) == {0: 1}
    assert counts(query("SEQ(A, B+, C)", nxt), stream("a1 a2 b3 c4")) == {0: 2}


def test_leading_and_trailing_negation_depend_on_the_window() -> None:
    text = query("SEQ(NOT N N1, A, B, NOT N N2)", within="4 seconds SLIDE 1 second")
    # [2,6): a2 b3, a2 b5, a4 b5; [1,5): n1 blocks; [3,7): a4 b5; [4,8): n7 blocks
    assert counts(text, stream("n1 a2 b3 a4 b5 n7")) == {2: 3, 3: 1}


def test_negation_at_the_boundaries_of_the_gap() -> None:
    """A NOT match at the predecessor's or the successor's time stamp is not between them."""
    text = query("SEQ(A, NOT N, B)")
    assert counts(text, stream("a1 n1 b2")) == {0: 1}
    assert counts(text, stream("a1 n2 b2")) == {0: 1}
    assert counts(text, stream("a1 n2 b3")) == {}
    # a NOT of a SEQ needs its events in increasing time
    seq = query("SEQ(A, NOT SEQ(N, M), B)")
    assert counts(seq, stream("a1 n3 m3 b5")) == {0: 1}
    assert counts(seq, stream("a1 m2 n3 b5")) == {0: 1}
    assert counts(seq, stream("a1 n2 m3 b5")) == {}


def test_contiguous_middle_event_is_alone_at_its_time_stamp() -> None:
    # a1 | a2 | a2' | a3 | a1a2 | a1a2' | a2a3 | a2'a3 (a1 a2 a3 has a2' between)
    assert counts(query("A+", "contiguous"), stream("a1 a2 a2 a3")) == {0: 8}


def test_aliases_count_each_assignment() -> None:
    assert counts(query("SEQ(A X, A Y)"), stream("a1 a2 a3")) == {0: 3}
    assert counts(query("SEQ(A X+, A Y+)"), stream("a1 a2 a3")) == {0: 5}


def test_windows_partitions_and_groups() -> None:
    """Partitions by [g] within group h add up; a row lacking g is in no partition."""
    rows = [
        {"type": "A", "ts": 1, "g": 1, "h": "p"}, {"type": "B", "ts": 2, "g": 1, "h": "p"},
        {"type": "B", "ts": 4, "g": 1, "h": "p"},
        {"type": "A", "ts": 1, "g": 2, "h": "p"}, {"type": "B", "ts": 3, "g": 2, "h": "p"},
        {"type": "A", "ts": 3, "g": 2, "h": "p"}, {"type": "B", "ts": 5, "g": 2, "h": "p"},
        {"type": "A", "ts": 3, "h": "p"}, {"type": "A", "ts": 1, "g": 1, "h": "q"},
    ]
    text = query("SEQ(A, B)", returns="h, COUNT(*)", where="[g]", within="4 seconds SLIDE 2 seconds")
    text = text.replace("WITHIN", "GROUP-BY h WITHIN")
    got = {(r["h"], r["window_start"] // US): r["COUNT(*)"] for r in evaluate(text, rows)}
    # [0,4): g1 a1 b2, g2 a1 b3; [2,6): g2 a3 b5 (b2 b4 of g1 have no A before them in it)
    assert got == {("p", 0): 2, ("p", 2): 1}


def test_pattern_matcher_on_words() -> None:
    p = Pattern.of(optimizer.parse_workload(query("SEQ(A, NOT N, SEQ(B, NOT M, C)+, D)")).queries[0].pattern)
    assert p.complete(("A", "B", "C", "D")) == [frozenset({(1, ("N",)), (2, ("M",))})]
    assert {g for g in p.complete(("A", "B", "C", "B", "C", "D"))} == {
        frozenset({(1, ("N",)), (2, ("M",)), (4, ("M",))})
    }
    assert p.complete(("A", "B", "D")) == []
    assert p.viable(("A", "B")) and not p.viable(("B",))
    assert any(j == PARTIAL for j, _ in p.parses(("A",)))
