"""COGRA: coarse-grained trend aggregation (dissertation ch. 14-19, Table 14.1).

COGRA computes exactly what the two-step reference computes (DESIGN §5,
``engine.reference``) but keeps intermediate aggregates at the coarsest
granularity the query allows, chosen from the query's semantics and
predicates the way the optimizer's granularity selector does (Table 14.1):

* **type-grained** (skip-till-any-match, no adjacent predicates, §15.1,
  Theorem 15.1, Table 18.1): one aggregate per (variable, window) -- the sum of
  the intermediate aggregates of all events matched to that variable so far.
  An event matched to variable V creates trends ``start(V) + sum of the
  aggregates of V's predecessor variables`` and folds them into V's aggregate;
  events are discarded afterwards. COUNT(E), SUM, MIN, MAX follow Table 18.1;
  AVG = SUM / COUNT(E) at finalization. A type occurring under several aliases
  and nested Kleene are just more variables and template transitions.
  Without negation this runs on a compiled *kernel* (below); with negation it
  runs on the coarse interpreter (see "negation").
* **mixed-grained** (skip-till-any-match with adjacent predicates, §15.2,
  Theorem 15.3, Algorithm 8): a variable whose outgoing transition carries an
  adjacent predicate keeps its events (each with its per-window aggregate), so
  the predicate can be evaluated against a new event; every other variable
  keeps one type-grained aggregate per window. A transition without adjacent
  predicate reads the type-grained aggregate even when its source variable
  also keeps events for another transition.
* **pattern-grained** (skip-till-next-match and contiguous without adjacent
  predicates and negation, §16.2): which event may follow a trend's last event
  then depends only on the last event's variable, so all *open* trend ends of a
  variable share their fate: they are all extended by, and closed at, the first
  later time stamp holding an event of a successor variable (next-match), or
  they live exactly one time stamp (contiguous). One aggregate per (variable,
  window) is kept for the open ends. Algorithm 9 keeps a single "last event",
  which undercounts patterns like ``SEQ(A, B+, C)`` over ``a1 a2 b3 c4`` (it
  gives 1); DESIGN §5 fixes the definition (2 trends), which per-variable open
  aggregates reproduce. Next-match and contiguous queries *with* adjacent
  predicates or negation are event-grained (the optimizer marks them
  ``event``): ``run`` raises :class:`~engine.query.Unsupported` so ``auto``
  uses GRETA.

**Negation** (skip-till-any-match). A transition ``P1 -> P2`` carrying ``NOT N``
may only connect a P1 event at time s to a P2 event at t if no match of N lies
strictly between; with ``L(t)`` the latest start of a complete match of N
before t (GRETA's invalidation state, ``engine.greta._Negation``), the valid
P1 events are those with ``ts >= L(t)``. Type-grained, COGRA keeps for such a
transition, per prefix j of N's sequence, the aggregate of the P1 events at or
after the latest start of a match of that prefix ("since" aggregates): when a
new match of the prefix starts at t, the aggregate restarts from the events of
time t; when prefix j inherits prefix j-1's start, it inherits its aggregate.
So a negated transition costs m aggregates per window (m = length of N), never
a list of events. Leading and trailing NOTs depend on the window only
(``start_negations`` block the +1 of a START event in the windows starting at
or before ``L(t)``; ``end_negations`` drop an END event's trends from the
windows ending after the earliest end ``C(t)`` of a match after it, computed by
one backward pass), exactly as in GRETA.

**Windows.** Windows ``[k*slide, k*slide + within)`` are handled per window
start: every open window has its own type-grained state; a window's state
starts at zero at the first pane holding an event of a START variable (before
that every aggregate of the window stays zero, so panes without a START event
skip windows still at zero, and panes after every open window closed are not
visited) and its result is read off when it closes. The stream is cut into *panes* at every window start and end.
Everything per event (type and predicate matching, burst detection, attribute
statistics) happens once; only the arithmetic of a step repeats for each of
the ``ceil(within / slide)`` open windows, pane by pane as a block (the kernel
never looks up window membership per event) -- the same per-window additions
GRETA repeats, but per burst instead of per event.

**Kernel** (type-grained, no negation). The partition becomes columns: for
each event the variable it matches (local predicates evaluated vectorized with
numpy when the plan's expressions are available, see :func:`run_columns`),
its time stamp and the attributes the aggregates need. Consecutive events of
the same variable (a *burst*) are collapsed, vectorized, into one step whose
effect has a closed form. For a variable V with a self-loop, constant
predecessor sum s (START adds 1) and k events at distinct time stamps, with
``u = count(V) + s``::

    count(V)    <- u * 2^k - s
    count_E(V)  <- (count_E(V) + s_E) * 2^k - s_E  [+ k * 2^(k-1) * u   if V = E]
    sum(V)      <- (sum(V) + s_sum) * 2^k - s_sum  [+ 2^(k-1) * u * sum(a)  if V = E]
    min(V)      <- min(min(V), s_min, min(a) if V = E)      (if u != 0)

and without a self-loop the k events are independent (``count(V) += k*s``,
...), equal time stamps included. Events with equal time stamps are never
adjacent, so every event of a time stamp extends only the trends before it.
The kernel keeps such a time stamp in its generated code: it orders the time
stamp's events by variable, each variable before its predecessors
(``Layout.rank``), so that each variable's step still reads its predecessors'
state from before the time stamp, and k events of a self-loop variable become
one *simultaneous* step (code ``nv + i``: ``count(V) += k * (s + count(V))``,
no chaining). Only where the template has a cycle through several variables
(``SEQ(A, B)+``) or an event matches several aliases does a time stamp become
a generic *group step* evaluated from the state before the group. The per-step code is generated
once per query (straight-line Python specialised to its template), so a step
costs a handful of integer operations whatever its length. Bursts longer
than 120 events are cut so that 2^k stays below 2^120.

The interpreters. Type-grained queries with negation and mixed-grained queries
run on a per-time-stamp-group interpreter (``_Coarse``) over per-window
aggregates (GRETA's intermediate-aggregate algebra, ``engine.greta._Algebra``);
pattern-grained queries on ``_run_pattern``. Type-grained partitions of fewer
than ``SMALL_PARTITION`` events also use ``_Coarse``: there the kernel's fixed
numpy cost would dominate.

**Exactness.** Counts are Python ints; a count above ``CAP`` saturates to NaN
(``engine.results.sat``, sticky), sums beyond ``CAP**2`` likewise (as in
GRETA), and ``0 * overflow`` stays 0. A window whose state saturated
completely (every value NaN, no MIN/MAX) cannot change any more; the kernel
skips the rest of its events (``SKIP_SATURATED``).

Entry points: :func:`run` (one time-ordered partition of ``Event`` objects,
the engine's strategy interface) and :func:`run_columns` / :func:`run_table`
(columnar input: numpy arrays or a pyarrow Table), which avoid building one
Python object per event. ``engine.table`` runs the kernel over many partitions
in one call (``_run_kernel`` with a partition id per event).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from trendlake.engine.events import Event
from trendlake.engine.query import ANY, CompiledQuery, Unsupported
from trendlake.engine.results import WindowResult
from trendlake.engine.strategies.cogra.coarse import Coarse
from trendlake.engine.strategies.cogra.kernel import run_kernel
from trendlake.engine.strategies.cogra.layout import Layout
from trendlake.engine.strategies.cogra.pattern import run_pattern
from trendlake.engine.strategies.cogra.prepare import (
    Types,
    as_column,
    events_from_columns,
    prepare_columns,
    prepare_events,
)

__all__ = ["granularity_of", "run", "run_columns", "run_table"]

# below this many events, the kernel's fixed numpy cost (~0.1 ms) exceeds the per-group
# interpreter's whole run; such partitions use the interpreter (same type-grained state)
SMALL_PARTITION = 16


# ---------------------------------------------------------------------------
# entry points


def granularity_of(query: CompiledQuery) -> str:
    """How COGRA evaluates ``query``: ``type`` (kernel), ``type+negation``, ``mixed`` or
    ``pattern``; raises Unsupported for event-grained next-match / contiguous queries."""
    if query.semantics == ANY:
        if query.has_adjacent:
            return "mixed"
        if query.negations or not Layout.of(query).ok:
            return "type+negation" if query.negations else "mixed"
        return "type"
    if query.has_adjacent or query.negations:
        raise Unsupported(
            f"query {query.name}: {query.semantics} with "
            + ("adjacent predicates" if query.has_adjacent else "negation")
            + " is event-grained (the last event's attributes or the negation matches after it"
            " decide which event may follow), not pattern-grained; use greta"
        )
    return "pattern"


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    mode = granularity_of(query)
    if not events:
        return {}
    if mode == "type" and len(events) >= SMALL_PARTITION:
        layout = Layout.of(query)
        return run_kernel(query, layout, prepare_events(query, layout, events))
    if mode == "pattern":
        return run_pattern(query, events)
    return Coarse.of(query).run(events)


def run_columns(
    query: CompiledQuery,
    types: Any,
    ts: Any,
    attrs: dict[str, Any] | None = None,
    *,
    type_names: Sequence[str] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[int, WindowResult]:
    """Results per window index for one partition given as columns.

    ``types``: event type names (array-like of str), or integer codes into
    ``type_names``; ``ts``: µs timestamps (int64), in time order (sorted
    stably otherwise); ``attrs``: attribute name -> array-like (missing values
    None or NaN). ``spec`` is the plan's entry for this query
    (``plan["queries"][i]``): with it, local predicates are evaluated
    vectorized with numpy; without it (or for expressions numpy cannot
    evaluate with the engine's exact semantics) they are evaluated row by
    row. Queries that are not type-grained without negation are evaluated
    on the equivalent ``Event`` list.
    """
    mode = granularity_of(query)
    attrs = dict(attrs or {})
    ts_arr = np.asarray(ts, dtype=np.int64)
    n = len(ts_arr)
    type_col = Types(types, type_names, n)
    if n and np.any(ts_arr[1:] < ts_arr[:-1]):
        order = np.argsort(ts_arr, kind="stable")
        ts_arr = ts_arr[order]
        type_col = type_col.take(order)
        attrs = {a: as_column(v)[order] for a, v in attrs.items()}
    if n == 0:
        return {}
    if mode != "type":
        return run(query, events_from_columns(type_col, ts_arr, attrs))
    layout = Layout.of(query)
    return run_kernel(
        query, layout, prepare_columns(query, layout, type_col, ts_arr, attrs, spec)
    )


def run_table(
    query: CompiledQuery, table: Any, spec: dict[str, Any] | None = None
) -> dict[int, WindowResult]:
    """:func:`run_columns` over a pyarrow Table with ``type``, ``ts`` (µs integers or an
    Arrow timestamp) and attribute columns (one partition)."""
    from trendlake.engine.table import _Columns

    cols = _Columns(table)
    attrs = {name: cols.array(name) for name in cols.attr_names}
    return run_columns(
        query, cols.type_codes, cols.ts, attrs, type_names=cols.type_names, spec=spec
    )


