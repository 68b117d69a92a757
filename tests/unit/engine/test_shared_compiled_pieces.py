"""The Python side of the compiled shared Kleene pass (``engine.shared.kleene.compiled``): how
classes of members are numbered and how the pass's 128-bit counts are read back."""

from __future__ import annotations

import math

import numpy as np
from trendlake.engine.numbers import decode_counts
from trendlake.engine.shared.kleene.compiled import MaskClasses, chains

ONES = (1 << 64) - 1


def test_mask_classes_number_distinct_masks_in_order() -> None:
    a = np.array([True, False, True])
    classes = MaskClasses()
    assert classes.index(a) == 0
    assert classes.index(a) == 0  # the same object
    assert classes.index(np.array([True, False, True])) == 0  # an equal mask
    assert classes.index(np.array([False, False, True])) == 1
    assert classes.index(np.array([True, False, True])) == 0
    assert [m.tolist() for m in classes.masks] == [[True, False, True], [False, False, True]]


def test_chains_of_nested_classes() -> None:
    # {2} ⊂ {0, 2} ⊂ {0, 1, 2}, and {3} apart: two chains, each from its smallest class
    masks = [np.array(m, dtype=bool) for m in ([1, 1, 1, 0], [0, 0, 1, 0], [1, 0, 1, 0], [0, 0, 0, 1])]
    assert sorted(chains(masks)) == [[1, 2, 0], [3]]


def _buffer(pairs: list[tuple[int, int]]) -> bytes:
    return np.asarray(pairs, dtype=np.uint64).tobytes()


def test_decode_counts_low_words_only() -> None:
    got = decode_counts(_buffer([(3, 0), (5, 0), (7, 0), (11, 0)]), 2, 2)
    assert got.tolist() == [[3, 5], [7, 11]]


def test_decode_counts_with_high_words_and_saturation() -> None:
    got = decode_counts(_buffer([(1, 1), (ONES, ONES), (2, 0), (0, 3)]), 2, 2)
    assert got[0, 0] == 2**64 + 1
    assert math.isnan(got[0, 1])
    assert got[1, 0] == 2
    assert got[1, 1] == 3 << 64
