"""Seeded workload generators shaped after the papers' experiments (``trendlake workload``).

Each generator writes a workload (``*.etq`` text) for one stream schema: event
types and attributes come from the schema, the *shape* of the queries from the
paper's experimental section. Same kind, query count, seed, stream and
parameters → the same text, byte for byte.

| kind | paper | shape |
|---|---|---|
| ``hamlet-shared`` | Hamlet §6, first workload | different patterns around one shared Kleene ``K+``; same window, group-by, aggregates; same (or, with ``same_predicates=false``, different) predicates |
| ``hamlet-diverse`` | Hamlet §6, second workload | patterns of 1–3 types holding ``K+``, windows 5–20 min, different aggregates, group-bys and predicates |
| ``sharon-traffic`` | Sharon §VIII (q1–q7) | fixed-length sequences (routes) built from a pool of shared sub-sequences, ``[id]``, ``COUNT(*)``, 10 min sliding every minute |
| ``sharon-ecommerce`` | Sharon §VIII (q8–q11) | sequences that all start with one shared pair, 20 min sliding every minute |
| ``gloria-seq`` | GLORIA §8 SEQ workload | SEQ patterns with shareable SEQ sub-patterns, windows powers of 5 min sliding every 5 min |
| ``gloria-kleene`` | GLORIA §8 Kleene workload | one shareable flat or nested Kleene sub-pattern (length 2–10, nesting depth 1–5) inside different SEQ sub-patterns |
| ``gloria-mixed`` | GLORIA §8 mixed workload | SEQ and Kleene queries at a Kleene:SEQ ratio (1:6 … 1:2) |
| ``weaveshare`` | Weave Share §7 | one pattern, windows whose slides follow a Zipf law over a discrete range and whose ranges are slide × overlap factor (uniform in [1, ω_max]); every length is a multiple of one unit, so the windows share panes |

Attributes are chosen generically (``StreamFacts``): *keys* are strings and
open-ended longs every event type carries — the first becomes the equivalence
predicate (``[driver]``), a string one after it the GROUP-BY; *measures* are
the other numeric attributes, used in predicates and aggregates of the types
that carry them. Literal thresholds fall inside
the schema's ``min``/``max`` (or ``ranges`` given by the caller, e.g. measured
on data). A type used more than once in a pattern gets an alias per occurrence
(``Travel_1``, ``Travel_2``).

The queries are built as the language's own AST (``trendlake.optimizer.ast``)
and written by its generator (``trendlake.optimizer.generator``), so every
generated workload is text the parser reads back to the same queries.
Layout: ``facts`` (``StreamFacts``), ``common`` (pattern, predicate,
aggregate and window building blocks, parameters, ``Kind``), one module per
paper (``hamlet``, ``sharon``, ``gloria``, ``weaveshare``), the registry
``KINDS`` (``registry``), ``generate_workload`` (``core``) and the
``trendlake workload`` command (``jobs/cli/workload.py``).
"""

from trendlake.datagen.workloads.common import (
    Kind,
    QuerySpec,
    kleene_depth,
    ratio_fraction,
    zipf_weights,
)
from trendlake.datagen.workloads.core import generate_specs, generate_workload, resolve_params
from trendlake.datagen.workloads.facts import StreamFacts
from trendlake.datagen.workloads.gloria import nested_kleene
from trendlake.datagen.workloads.registry import KINDS

__all__ = [
    "KINDS",
    "Kind",
    "QuerySpec",
    "StreamFacts",
    "generate_specs",
    "generate_workload",
    "kleene_depth",
    "nested_kleene",
    "ratio_fraction",
    "resolve_params",
    "zipf_weights",
]
