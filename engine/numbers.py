"""The numbers an aggregate state holds: saturation, exact mode (``Far``), exact float sums.

Two modes (``engine.aggregates.Algebra.exact``). A query without AVG keeps
counts as Python ints saturated to ``NAN`` beyond ``CAP`` (:func:`sat`, sticky
under + and *); partial sums saturate beyond ``SUM_BOUND`` (:func:`sum_sat`);
``0 * overflow`` stays 0 (:func:`scale`). A query with AVG keeps counts and sums
exact (:func:`norm`, :func:`scale_exact`): ints while their magnitude is at most
``BIG``, floats up to ``FLOAT_BIG``, and beyond that :class:`Far` numbers of
``FAR_BITS`` significant bits and unbounded exponent, so that AVG, the sum over
the count, is right to float precision however many trends there are. Float
sums are kept exact as :class:`FSum` values, independent of the order of
additions. Whether a COUNT or SUM fits its result column is decided at output
(``engine.results.finalize``). A result is exact or marked as overflowed, never
wrong (docs/engine.md, "Aggregates and exactness").
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

__all__ = [
    "BIG",
    "CAP",
    "FAR_BITS",
    "FLOAT_BIG",
    "NAN",
    "SUM_BOUND",
    "FSum",
    "Far",
    "contribution",
    "decode_counts",
    "exact_sum",
    "float_terms",
    "max_present",
    "min_present",
    "norm",
    "out_value",
    "sat",
    "scale",
    "scale_exact",
    "sum_sat",
]

CAP = 10**38 - 1  # the largest value of a decimal(38,0) result column
NAN = float("nan")
# A partial sum whose magnitude passed this bound becomes NaN (overflow). Counts saturate at
# CAP, which bounds sums over non-saturated counts far below this; the bound only stops the
# unbounded growth of sums propagated from events whose downstream trend counts saturated.
SUM_BOUND = CAP * CAP

# Exact mode (queries with AVG): ints are kept exact up to BIG (about 10**602, 604 digits: far
# below Python's 4300-digit limit of int <-> str conversion, which JSON states go through),
# floats up to FLOAT_BIG (a burst step multiplies by at most 2**120, the float range ends at
# 2**1024); beyond, a value becomes a Far number.
BIG = 1 << 2000
FLOAT_BIG = 2.0**800
FAR_BITS = 256  # significant bits of a Far number (relative rounding error 2**-256 per step)
_INF = float("inf")

_SHIFT = 1074  # every finite float is an integer multiple of 2**-1074
_N_BIG = 1 << 4000  # an FSum's scaled part beyond this (exact mode) becomes a Far number


class FSum:
    """The exact sum of float values (with multiplicities), rounded only at output.

    A linear combination ``n * 2**-1074 + pinf * inf + ninf * (-inf)``: ``n`` the exact
    finite part (every finite float is an integer multiple of 2**-1074), ``pinf`` and
    ``ninf`` how many times +inf and -inf were added. Every component is an int (or, past
    ``BIG`` in exact mode, a :class:`Far` number), so adding, subtracting and multiplying
    by counts is exact and independent of the order, which the kernels' algebraic steps
    (``(z + sz) * P - sz``, exact division of shared coefficients) rely on. Its value
    (:meth:`value`) is the exact sum correctly rounded to a float: NaN when both
    infinities occur, else the infinity that occurs, else ``n / 2**1074`` rounded once
    (±inf past the float range, as IEEE rounding does; -0.0 never: a zero is 0.0).

    A bare float NaN in a state is the saturation marker (an overflowed count): any
    operation with it gives NaN, except that a zero FSum times it stays zero (``0 *
    overflow``, as :func:`scale`). An FSum is always true (it marks a float SUM, 0.0
    included, which reads as a float, not as the int 0).
    """

    __slots__ = ("n", "ninf", "pinf")

    def __init__(self, n: Any = 0, pinf: Any = 0, ninf: Any = 0) -> None:
        self.n = n
        self.pinf = pinf
        self.ninf = ninf

    @staticmethod
    def of(value: Any) -> Any:
        """A float (or int) as an FSum; NaN (missing or saturated) stays NaN."""
        if value.__class__ is FSum:
            return value
        if isinstance(value, float):
            if value != value:
                return value
            if value == _INF:
                return FSum(0, 1, 0)
            if value == -_INF:
                return FSum(0, 0, 1)
            num, den = value.as_integer_ratio()
            return FSum(num << (_SHIFT + 1 - den.bit_length()))
        if isinstance(value, (int, np.integer)):
            return FSum(int(value) << _SHIFT)
        return FSum(Far.of(value) * (1 << _SHIFT))

    def __add__(self, other: Any) -> Any:
        c = other.__class__
        if c is FSum:
            return FSum(self.n + other.n, self.pinf + other.pinf, self.ninf + other.ninf)
        if c is int:
            return FSum(self.n + (other << _SHIFT), self.pinf, self.ninf) if other else self
        if c is float and other != other:
            return other
        return self + FSum.of(other)

    __radd__ = __add__

    def __neg__(self) -> FSum:
        return FSum(-self.n, -self.pinf, -self.ninf)

    def __sub__(self, other: Any) -> Any:
        if other.__class__ is float and other != other:
            return other
        return self + (-FSum.of(other))

    def __rsub__(self, other: Any) -> Any:
        return (-self) + other

    def __mul__(self, other: Any) -> Any:
        c = other.__class__
        if c is int or c is Far:
            return FSum(self.n * other, self.pinf * other, self.ninf * other)
        if c is float and other != other:  # times an overflowed count: 0 stays 0
            return self if self.is_zero() else other
        if isinstance(other, (int, np.integer)):
            return self * int(other)
        raise TypeError(f"an exact float sum times {other!r}")

    __rmul__ = __mul__

    def __floordiv__(self, other: int) -> FSum:
        """Exact division of every component (the caller knows the division is exact)."""
        return FSum(self.n // other, self.pinf // other, self.ninf // other)

    def is_zero(self) -> bool:
        return not (self.n or self.pinf or self.ninf)

    def __bool__(self) -> bool:
        return True

    def magnitude(self) -> Any:
        """A bound on the components' magnitudes in units of the largest float (2**1024),
        for the saturation bound of sums (``sum_sat``): a count of values times the float
        range, so that no finite float sum of fewer than ``CAP`` values saturates."""
        n = self.n
        return max(abs(n) >> (_SHIFT + 1024) if n.__class__ is int else abs(float(n)) * 2.0**-2098,
                   abs(self.pinf), abs(self.ninf))

    def exact(self) -> bool:
        """Whether the finite part is exact (not a rounded Far number)."""
        return self.n.__class__ is int

    def norm(self) -> FSum:
        """Components kept bounded (exact mode): an int part past ``_N_BIG`` becomes Far."""
        n, p, q = self.n, self.pinf, self.ninf
        if n.__class__ is int and not -_N_BIG <= n <= _N_BIG:
            n = Far(n, 0)
        return FSum(n, norm(p), norm(q))

    def value(self) -> float:
        """The exact sum rounded once to a float (see the class)."""
        p, q = self.pinf > 0, self.ninf > 0
        if p and q:
            return NAN
        if p:
            return _INF
        if q:
            return -_INF
        n = self.n
        try:
            if n.__class__ is int:
                return n / (1 << _SHIFT) + 0.0
            return Far.of(n).ratio(1 << _SHIFT) + 0.0
        except OverflowError:
            return _INF if n > 0 else -_INF

    def mean(self, count: Any) -> float:
        """``self / count`` rounded once to a float (count > 0)."""
        p, q = self.pinf > 0, self.ninf > 0
        if p or q:
            return self.value()
        n = self.n
        try:
            if n.__class__ is int and count.__class__ is int:
                return n / (count << _SHIFT) + 0.0
            return Far.of(n).ratio(Far.of(count) * (1 << _SHIFT)) + 0.0
        except OverflowError:
            return _INF if n > 0 else -_INF

    def __eq__(self, other: object) -> bool:
        if other.__class__ is FSum:
            return (self.n, self.pinf, self.ninf) == (other.n, other.pinf, other.ninf)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FSum({self.n}, {self.pinf}, {self.ninf})"


def float_terms(col: Any) -> list[Any]:
    """A float64 column's values as :class:`FSum` terms (a NaN, missing, as 0), converted
    together: each finite value is ``m * 2**(e - 53)`` with an integer ``m`` (``np.frexp``)."""
    col = np.asarray(col, dtype=np.float64)
    finite = np.isfinite(col)
    mant, exp = np.frexp(np.where(finite, col, 0.0))
    m = (mant * 2.0**53).astype(np.int64).tolist()
    shift = (exp.astype(np.int64) + (_SHIFT - 53)).tolist()
    out: list[Any] = [FSum(x << k) if k >= 0 else FSum(x >> -k) for x, k in zip(m, shift, strict=True)]
    if not finite.all():
        for i in np.flatnonzero(~finite).tolist():
            out[i] = contribution(float(col[i])) if col[i] == col[i] else 0
    return out


def contribution(value: Any) -> Any:
    """An attribute value as a term of a SUM: ints as they are, floats as an exact
    :class:`FSum` (so float sums do not depend on the order of additions)."""
    return FSum.of(value) if isinstance(value, float) else value


def exact_sum(values: Any) -> Any:
    """The exact sum of attribute values: an int for ints, an :class:`FSum` once a float
    is among them (0 for no values)."""
    total: Any = 0
    floats: list[float] = []
    for v in values:
        if isinstance(v, float):
            floats.append(v)
        else:
            total += v
    for v in floats:
        total = total + FSum.of(v)
    return total


def out_value(value: Any) -> Any:
    """A MIN / MAX value as reported: -0.0 as 0.0 (the two compare equal; one output form)."""
    if value.__class__ is float and value == 0.0:
        return 0.0
    return value


def sat(count: int | float) -> int | float:
    """A count, or NAN once it passed CAP (keeps big-int arithmetic bounded)."""
    return count if count <= CAP else NAN


def sum_sat(value: Any) -> Any:
    """A partial sum, or NAN once its magnitude passed ``SUM_BOUND`` (for an exact float
    sum, a component's magnitude in units of the values)."""
    if value.__class__ is FSum:
        return value if value.magnitude() <= SUM_BOUND else NAN
    if value > SUM_BOUND or value < -SUM_BOUND:
        return NAN
    return value


def scale(value: int | float, count: int | float) -> int | float:
    """``value * count`` for a sum contribution; 0 stays 0 even for an overflowed count."""
    if isinstance(value, float):
        return FSum.of(value) * count if value == value else value
    if value.__class__ is FSum:
        return value * count
    if value == 0 or count == 0:
        return 0
    return value * count


class Far:
    """``m * 2**e``: a number beyond the exact range of a state, rounded to ``FAR_BITS``
    significant bits of ``m`` (an int), with an unbounded exponent ``e``.

    Arithmetic with ints, finite floats and Far numbers gives Far numbers (a NaN or
    infinite float operand gives that float); every operation rounds once, to
    ``FAR_BITS`` bits, so the ratio of two Far numbers (:meth:`ratio`) is right to float
    precision after billions of steps. Only queries with AVG (exact mode) create them.
    """

    __slots__ = ("e", "m")

    def __init__(self, m: int, e: int) -> None:
        if m:
            n = abs(m).bit_length() - FAR_BITS
            if n > 0:  # round half up in magnitude to FAR_BITS bits
                half = 1 << (n - 1)
                m = (m + half) >> n if m > 0 else -((half - m) >> n)
                e += n
        else:
            e = 0
        self.m = m
        self.e = e

    @staticmethod
    def of(value: Any) -> Any:
        """``value`` as a Far number (exactly for ints and floats, before rounding); a NaN or
        infinite float is returned as it is."""
        if isinstance(value, Far):
            return value
        if isinstance(value, float):
            if value != value or value in (_INF, -_INF):
                return value
            num, den = value.as_integer_ratio()
            return Far(num, 1 - den.bit_length())
        return Far(int(value), 0)

    # -- arithmetic ------------------------------------------------------------

    def __add__(self, other: Any) -> Any:
        if other.__class__ is FSum:
            return other + self
        o = other if other.__class__ is Far else Far.of(other)
        if o.__class__ is not Far:
            return o
        a, b = (self, o) if self.e >= o.e else (o, self)
        bm = b.m
        if not bm:
            return a
        if not a.m:
            return b
        d = a.e - b.e
        # b below a's last kept bit by a margin: it cannot change the rounded sum's value
        # by more than the rounding itself
        if d > bm.bit_length() + 2 * FAR_BITS:
            return a
        return Far((a.m << d) + bm, b.e)

    __radd__ = __add__

    def __neg__(self) -> Far:
        return Far(-self.m, self.e)

    def __pos__(self) -> Far:
        return self

    def __abs__(self) -> Far:
        return Far(abs(self.m), self.e)

    def __sub__(self, other: Any) -> Any:
        if other.__class__ is FSum:
            return (-other) + self
        o = Far.of(other)
        return self + (-o if isinstance(o, Far) else -o)

    def __rsub__(self, other: Any) -> Any:
        return (-self) + other

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, int):
            return Far(self.m * other, self.e)
        if other.__class__ is FSum:
            return other * self
        o = Far.of(other)
        if not isinstance(o, Far):
            return o * float(self.m)  # NaN or +-inf (times the sign of self)
        return Far(self.m * o.m, self.e + o.e)

    __rmul__ = __mul__

    def ratio(self, other: Any) -> float:
        """``self / other`` rounded to a float; OverflowError past the float range,
        ZeroDivisionError for a zero ``other``."""
        o = Far.of(other)
        if not isinstance(o, Far):
            return float(self) / o
        if not self.m:
            return 0.0
        return math.ldexp(self.m / o.m, self.e - o.e)

    def __float__(self) -> float:
        return math.ldexp(float(self.m), self.e)

    # -- comparisons -------------------------------------------------------------

    def _sign_of_difference(self, other: Any) -> int:
        o = Far.of(other)
        if not isinstance(o, Far):
            return 1 if o < 0 else -1  # an infinite float
        # different signs, or top bits two or more apart: decided without subtracting
        sa, sb = (self.m > 0) - (self.m < 0), (o.m > 0) - (o.m < 0)
        if sa != sb:
            return 1 if sa > sb else -1
        if sa:
            ta, tb = self.e + abs(self.m).bit_length(), o.e + abs(o.m).bit_length()
            if ta > tb + 1:
                return sa
            if tb > ta + 1:
                return -sa
        d = (self + -o).m
        return (d > 0) - (d < 0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (int, float, Far)) or _nan(other):
            return False
        return self._sign_of_difference(other) == 0

    def __hash__(self) -> int:
        # Python's numeric hash of m * 2**e, so that a Far number equal to an int or a
        # float hashes as it does
        modulus = sys.hash_info.modulus
        h = abs(self.m) % modulus * pow(2, self.e, modulus) % modulus
        h = -h if self.m < 0 else h
        return -2 if h == -1 else h

    def __lt__(self, other: Any) -> bool:
        return not _nan(other) and self._sign_of_difference(other) < 0

    def __le__(self, other: Any) -> bool:
        return not _nan(other) and self._sign_of_difference(other) <= 0

    def __gt__(self, other: Any) -> bool:
        return not _nan(other) and self._sign_of_difference(other) > 0

    def __ge__(self, other: Any) -> bool:
        return not _nan(other) and self._sign_of_difference(other) >= 0

    def __bool__(self) -> bool:
        return self.m != 0

    def __repr__(self) -> str:
        return f"Far({self.m}, {self.e})"


def _nan(x: Any) -> bool:
    return isinstance(x, float) and x != x


def norm(value: Any) -> Any:
    """An exact-mode state value as kept: an int up to ``BIG``, a float up to ``FLOAT_BIG``
    in magnitude, else a :class:`Far` number (a Far number stays one)."""
    t = type(value)
    if t is int:
        return value if -BIG <= value <= BIG else Far(value, 0)
    if t is FSum:
        return value.norm()
    if t is float:
        if -FLOAT_BIG <= value <= FLOAT_BIG or value != value:
            return value
        return Far.of(value)
    return value


def scale_exact(value: Any, count: Any) -> Any:
    """``value * count`` for a sum contribution in exact mode (:func:`norm`'d); a float value
    times a count past the float range is computed as a Far number."""
    if isinstance(value, float) and value == value:
        value = FSum.of(value)
    if value.__class__ is FSum:
        return (value * count).norm()
    if value == 0 or count == 0:
        return 0
    try:
        r = value * count
    except OverflowError:  # a float times an int beyond the float range
        return Far.of(value) * count
    if type(r) is float and not -FLOAT_BIG <= r <= FLOAT_BIG:
        far = Far.of(value)
        return far * count if isinstance(far, Far) else r
    return norm(r)


def min_present(a: Any, b: Any) -> Any:
    """The smaller of two optional values (None: no value)."""
    if b is None:
        return a
    if a is None or b < a:
        return b
    return a


def max_present(a: Any, b: Any) -> Any:
    """The larger of two optional values (None: no value)."""
    if b is None:
        return a
    if a is None or b > a:
        return b
    return a


_ALL_ONES = (1 << 64) - 1


def decode_counts(buffer: bytes, rows: int, width: int) -> np.ndarray:
    """The compiled kernels' 128-bit counts (``rows`` x ``width`` pairs of uint64, low word
    first; engine/count128.h) as a matrix: uint64 while every high word is 0, else Python
    ints, NaN where both words are all ones (a saturated count)."""
    pairs = np.frombuffer(buffer, dtype=np.uint64).reshape(rows * width, 2)
    low, high = pairs[:, 0], pairs[:, 1]
    if not high.any():
        return low.reshape(rows, width)
    saturated = (low == _ALL_ONES) & (high == _ALL_ONES)
    big = low.astype(object) + (high.astype(object) << 64)
    big[saturated] = NAN
    return big.reshape(rows, width)
