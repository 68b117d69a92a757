"""The Sharon benefit model (§III, dissertation ch. 22): A-Seq's costs per window from rates.

A query ``q`` with types ``E_1 ... E_n`` (rates ``r_1 ... r_n``, the query's own: rate
times selectivity) and a sub-pattern ``p = E_m ... E_{m+l}`` in it; ``Rate(X)`` is the
sum of the rates over the positions of ``X`` (a type that occurs ``k`` times counts ``k``
times: ch. 24.3's factor).

* **Non-shared** (Eq. 2-3): A-Seq keeps a count per START event and every matched event
  updates one count per live START: ``NonShared(q) = r_1 * Rate(P)``;
  ``NonShared(p, Q_p)`` sums it over ``Q_p``.
* **Shared** (Eq. 4-7): ``q`` computes its ``prefix = E_1 ... E_{m-1}`` and
  ``suffix = E_{m+l+1} ... E_n`` itself, ``Comp(p, q) = r_1 * Rate(prefix) +
  r_{m+l+1} * Rate(suffix)``, and combines the counts of the parts,
  ``Comb(p, q) = r_1 * r_m * r_{m+l+1}`` (the product of the numbers of counts
  combined). The pattern itself is computed once, ``r_m * Rate(p)``, with the largest
  rate of its queries at each position (equal where they have the same predicates).
  ``Shared(p, Q_p) = r_m * Rate(p) + sum(Comp(p, q) + Comb(p, q))``.
* **Benefit** (Eq. 8): ``BValue(p, Q_p) = NonShared(p, Q_p) - Shared(p, Q_p)``;
  beneficial when positive.

Decisions where the printed formulas do not say: a missing prefix (``m = 1``) or suffix
(``m + l = n``) contributes no ``Comp`` term and no factor to ``Comb`` (Eq. 5 printed
with ``E_1 = E_m`` would count ``r_m`` twice); a query that is ``p`` itself combines
nothing (``Comb = 0``).
"""

from __future__ import annotations

from trendlake.optimizer.sharon.model import Candidate, Query, Workload

__all__ = ["benefit", "comb", "comp", "computed_once", "gain", "non_shared", "non_shared_cost", "shared",
           "shared_rates"]


def non_shared(q: Query) -> float:
    """Eq. 2: the query computed alone by A-Seq."""
    return q.rates[0] * sum(q.rates) if q.rates else 0.0


def comp(q: Query, m: int, length: int) -> float:
    """Eq. 4: the prefix and the suffix of the sub-pattern at ``m``, computed by ``q``."""
    end = m + length
    total = 0.0
    if m > 0:
        total += q.rates[0] * sum(q.rates[:m])
    if end < q.length:
        total += q.rates[end] * sum(q.rates[end:])
    return total


def comb(q: Query, m: int, length: int) -> float:
    """Eq. 5: combining the counts of the prefix, the shared pattern and the suffix."""
    end = m + length
    if m == 0 and end == q.length:
        return 0.0
    product = q.rates[m]
    if m > 0:
        product *= q.rates[0]
    if end < q.length:
        product *= q.rates[end]
    return product


def gain(q: Query, m: int, length: int) -> float:
    """What ``q`` saves when the sub-pattern at ``m`` is computed for it (Eq. 2 - Eq. 6)."""
    return non_shared(q) - comp(q, m, length) - comb(q, m, length)


def shared_rates(wl: Workload, c: Candidate) -> tuple[float, ...]:
    """The rates of the shared computation, position by position: the largest of its queries'."""
    rows = [wl.by_name[q].rates[c.positions[q]:c.positions[q] + c.length] for q in c.queries]
    return tuple(max(col) for col in zip(*rows, strict=True))


def computed_once(wl: Workload, c: Candidate) -> float:
    """The first term of Eq. 7: the pattern computed once for all its queries."""
    r = shared_rates(wl, c)
    return r[0] * sum(r)


def shared(wl: Workload, c: Candidate) -> float:
    """Eq. 7: ``Shared(p, Q_p)``."""
    return computed_once(wl, c) + sum(
        comp(wl.by_name[q], c.positions[q], c.length) + comb(wl.by_name[q], c.positions[q], c.length)
        for q in c.queries)


def benefit(wl: Workload, c: Candidate) -> float:
    """Eq. 8: ``BValue(p, Q_p)``."""
    return sum(non_shared(wl.by_name[q]) for q in c.queries) - shared(wl, c)


def non_shared_cost(wl: Workload) -> float:
    """Every query of the model computed alone (Eq. 2 summed; queries outside the model
    are not counted)."""
    return sum(non_shared(q) for q in wl.queries if q.alone is None)
