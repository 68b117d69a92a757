"""The granularity of a query (COGRA Table 14.1): the one rule behind the plan's
``granularity`` field, used by the optimizer that writes it and by the engine that
evaluates it.

How finely a query's intermediate aggregates must be kept:

- ``skip-till-next-match`` or ``contiguous``: ``pattern`` (one aggregate per pattern
  state), except ``event`` when the query has adjacent predicates or negation --
  which event may follow a trend's last event then depends on that event itself
  (its attribute values, the negation matches after it), not only on its variable;
- ``skip-till-any-match`` without adjacent predicates: ``type`` (one aggregate per
  variable and window; negation included, by "since" aggregates);
- ``skip-till-any-match`` with adjacent predicates: ``mixed`` (type-grained where a
  transition has none, kept vertices where it has one).

``event`` (GRETA's graph) evaluates every query.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["COARSE", "Granularity", "granularity"]


class Granularity(StrEnum):
    """The values of the plan's ``granularity`` field (``plan.schema.json``)."""

    TYPE = "type"
    MIXED = "mixed"
    PATTERN = "pattern"
    EVENT = "event"


# coarser than event-grained: COGRA's
COARSE = frozenset({Granularity.TYPE, Granularity.MIXED, Granularity.PATTERN})


def granularity(*, any_match: bool, adjacent: bool, negation: bool) -> Granularity:
    """The granularity of a query under skip-till-any-match (``any_match``) or next-match
    / contiguous, with or without adjacent predicates and negation (module docstring)."""
    if not any_match:
        return Granularity.EVENT if adjacent or negation else Granularity.PATTERN
    return Granularity.MIXED if adjacent else Granularity.TYPE
