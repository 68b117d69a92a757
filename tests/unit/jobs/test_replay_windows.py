"""Which windows an interval replays: exactly those whose end lies in (start, end]."""

from hypothesis import given
from hypothesis import strategies as st
from trendlake.jobs.replay import windows_ending_in


@given(
    within=st.integers(1, 50),
    slide_frac=st.integers(1, 50),
    start=st.integers(-200, 200),
    length=st.integers(1, 200),
)
def test_windows_ending_in_matches_brute_force(within: int, slide_frac: int, start: int, length: int) -> None:
    slide = max(1, min(within, slide_frac))
    end = start + length
    want = [k for k in range(-100, 100) if start < k * slide + within <= end]
    got = [k for k in windows_ending_in(within, slide, start, end) if -100 <= k < 100]
    assert got == want


def test_consecutive_intervals_partition_the_windows() -> None:
    day = 86_400
    first = set(windows_ending_in(1800, 300, 0, day))
    second = set(windows_ending_in(1800, 300, day, 2 * day))
    assert not first & second
    assert set(windows_ending_in(1800, 300, 0, 2 * day)) == first | second
