"""The statistics the optimizer reads, as a typed, immutable view of their JSON document.

The document is what ``trendlake stats`` records (``jobs.stats.statistics_dict``),
what ``plan --events`` computes from a file and ``--stats-out`` writes, and what
a plan records under ``"statistics"``; ``schemas/statistics.schema.json`` is its
contract and docs/lake.md ("The statistics document") its reference.

``Statistics.from_dict(doc)`` checks the document against the schema (an
``OptimizerError`` naming the offending field otherwise) and ``to_dict()``
gives back exactly that document. Every field but ``types`` is optional (a
hand-written document states what it knows); the accessors are what the cost
models read, with the documented defaults where the statistics do not say.
``Statistics.uniform()`` is the stated assumption of ``--assume-uniform``:
every type one event per window, in bursts of one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from trendlake.optimizer.errors import OptimizerError

__all__ = [
    "DEFAULT_SELECTIVITY",
    "UNIFORM",
    "Burst",
    "Groups",
    "Partitioning",
    "PredicateSelectivity",
    "QueryBursts",
    "Statistics",
    "TypeRate",
    "VariableSelectivity",
    "load_statistics_schema",
]

UNIFORM = "uniform"
DEFAULT_SELECTIVITY = 0.5  # a variable with predicates whose selectivity the statistics do not give
ALL_QUERIES = "*"  # the bursts key of statistics computed without a workload

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(d: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(d))


def _pick(obj: Any, keys: tuple[str, ...], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The document of a view: its present keys in their order, nested views as documents."""
    out: dict[str, Any] = {}
    for k in keys:
        value = extra[k] if extra and k in extra else getattr(obj, k)
        out[k] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True)
class TypeRate:
    """Events of one type (or of one type in one group): total, mean and most per pane."""

    rate_mean: float
    events: int | None = None
    rate_max: int | None = None
    _keys: tuple[str, ...] = field(default=("events", "rate_mean", "rate_max"), repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TypeRate:
        return cls(d["rate_mean"], d.get("events"), d.get("rate_max"), tuple(d))

    def to_dict(self) -> dict[str, Any]:
        return _pick(self, self._keys)


@dataclass(frozen=True)
class Burst:
    """Runs of one type with no other type of the query's pattern in between."""

    mean: float | None
    runs: int | None = None
    events: int | None = None
    max: int | None = None
    _keys: tuple[str, ...] = field(default=("runs", "events", "mean", "max"), repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Burst:
        return cls(d["mean"], d.get("runs"), d.get("events"), d.get("max"), tuple(d))

    def to_dict(self) -> dict[str, Any]:
        return _pick(self, self._keys)


@dataclass(frozen=True)
class QueryBursts:
    """The bursts of one query's types (``*``: of every type of the stream, no workload)."""

    types: Mapping[str, Burst]
    partition_by: tuple[str, ...] | None = None
    _keys: tuple[str, ...] = field(default=("partition_by", "types"), repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QueryBursts:
        by = d.get("partition_by")
        return cls(_frozen({t: Burst.from_dict(b) for t, b in d["types"].items()}),
                   tuple(by) if by is not None else None, tuple(d))

    def to_dict(self) -> dict[str, Any]:
        return _pick(self, self._keys, {"types": {t: b.to_dict() for t, b in self.types.items()}})


@dataclass(frozen=True)
class PredicateSelectivity:
    """One local predicate (its text) of a variable: ``matched / events`` of the variable's type."""

    predicate: str
    selectivity: float | None
    events: int | None = None
    matched: int | None = None
    _keys: tuple[str, ...] = field(default=("predicate", "selectivity", "events", "matched"),
                                   repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PredicateSelectivity:
        return cls(d["predicate"], d["selectivity"], d.get("events"), d.get("matched"), tuple(d))

    def to_dict(self) -> dict[str, Any]:
        return _pick(self, self._keys)


@dataclass(frozen=True)
class VariableSelectivity:
    """A query variable's selectivity: ``all`` = every local predicate and required attribute."""

    all: float | None
    type: str | None = None
    events: int | None = None
    predicates: tuple[PredicateSelectivity, ...] = ()
    _keys: tuple[str, ...] = field(default=("type", "events", "all", "predicates"), repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> VariableSelectivity:
        return cls(d["all"], d.get("type"), d.get("events"),
                   tuple(PredicateSelectivity.from_dict(p) for p in d.get("predicates", ())), tuple(d))

    def to_dict(self) -> dict[str, Any]:
        return _pick(self, self._keys, {"predicates": [p.to_dict() for p in self.predicates]})


@dataclass(frozen=True)
class Groups:
    """Distinct groups of the statistics' ``group_by``: overall, per type, and rates per group."""

    count: int
    by_type: Mapping[str, int] | None = None
    per_group: Mapping[str, Mapping[str, TypeRate]] | None = None
    _keys: tuple[str, ...] = field(default=("count", "by_type", "per_group"), repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Groups:
        by_type = d.get("by_type")
        per = d.get("per_group")
        return cls(
            d["count"],
            _frozen(by_type) if by_type is not None else None,
            _frozen({t: _frozen({k: TypeRate.from_dict(r) for k, r in g.items()}) for t, g in per.items()})
            if per is not None else None,
            tuple(d),
        )

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.by_type is not None:
            extra["by_type"] = dict(self.by_type)
        if self.per_group is not None:
            extra["per_group"] = {t: {k: r.to_dict() for k, r in g.items()} for t, g in self.per_group.items()}
        return _pick(self, self._keys, extra)


@dataclass(frozen=True)
class Partitioning:
    """Distinct partitions of one partitioning of the workload (a query's ``partition_by``):
    overall, and per type (partitions holding events of it)."""

    partition_by: tuple[str, ...]
    count: int
    by_type: Mapping[str, int] | None = None
    _keys: tuple[str, ...] = field(default=("partition_by", "count", "by_type"), repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Partitioning:
        by_type = d.get("by_type")
        return cls(tuple(d["partition_by"]), d["count"], _frozen(by_type) if by_type is not None else None,
                   tuple(d))

    def to_dict(self) -> dict[str, Any]:
        return _pick(self, self._keys, {"by_type": dict(self.by_type)} if self.by_type is not None else None)


_TOP = ("stream", "run_id", "computed_at", "range_start", "range_end", "pane_us", "workload_hash", "group_by",
        "events", "panes", "types", "groups", "partitions", "bursts", "selectivity")


@dataclass(frozen=True)
class Statistics:
    """Stream statistics (or the uniform assumption), as the cost models read them."""

    types: Mapping[str, TypeRate] = field(default_factory=lambda: _EMPTY)
    pane_us: int | None = None
    events: int | None = None
    panes: int | None = None
    group_by: tuple[str, ...] | None = None
    groups: Groups | None = None
    partitionings: tuple[Partitioning, ...] = ()
    bursts: Mapping[str, QueryBursts] = field(default_factory=lambda: _EMPTY)
    selectivity: Mapping[str, Mapping[str, VariableSelectivity]] = field(default_factory=lambda: _EMPTY)
    stream: str | None = None
    run_id: str | None = None
    computed_at: str | None = None
    range_start: str | None = None
    range_end: str | None = None
    workload_hash: str | None = None
    assumption: str | None = None
    _keys: tuple[str, ...] = field(default=_TOP, repr=False, compare=False)

    # ------------------------------------------------------------------ the document

    @classmethod
    def uniform(cls) -> Statistics:
        """The stated assumption of ``--assume-uniform`` (``{"assumption": "uniform"}``)."""
        return cls(assumption=UNIFORM, _keys=("assumption",))

    @classmethod
    def from_dict(cls, doc: Any) -> Statistics:
        """The view of a statistics document; ``OptimizerError`` (one line, naming the field)
        when it breaks ``schemas/statistics.schema.json``."""
        problem = schema_error(doc)
        if problem is not None:
            raise OptimizerError(f"statistics: {problem} (see docs/lake.md, 'The statistics document')")
        if "assumption" in doc:
            return cls(assumption=doc["assumption"], _keys=tuple(doc))
        groups = doc.get("groups")
        by = doc.get("group_by")
        return cls(
            types=_frozen({t: TypeRate.from_dict(r) for t, r in doc["types"].items()}),
            pane_us=doc.get("pane_us"),
            events=doc.get("events"),
            panes=doc.get("panes"),
            group_by=tuple(by) if by is not None else None,
            groups=Groups.from_dict(groups) if groups is not None else None,
            partitionings=tuple(Partitioning.from_dict(p) for p in doc.get("partitions", ())),
            bursts=_frozen({q: QueryBursts.from_dict(b) for q, b in doc.get("bursts", {}).items()}),
            selectivity=_frozen({q: _frozen({v: VariableSelectivity.from_dict(s) for v, s in per.items()})
                                 for q, per in doc.get("selectivity", {}).items()}),
            stream=doc.get("stream"),
            run_id=doc.get("run_id"),
            computed_at=doc.get("computed_at"),
            range_start=doc.get("range_start"),
            range_end=doc.get("range_end"),
            workload_hash=doc.get("workload_hash"),
            _keys=tuple(doc),
        )

    @classmethod
    def of(cls, statistics: Statistics | Mapping[str, Any] | None) -> Statistics | None:
        """``statistics`` as a view: a view as it is, a document checked (``from_dict``), None as None."""
        if statistics is None or isinstance(statistics, Statistics):
            return statistics
        return cls.from_dict(statistics)

    def to_dict(self) -> dict[str, Any]:
        """The document this view was read from (equal to it, keys in its order)."""
        extra: dict[str, Any] = {
            "types": {t: r.to_dict() for t, r in self.types.items()},
            "groups": self.groups.to_dict() if self.groups is not None else None,
            "partitions": [p.to_dict() for p in self.partitionings],
            "bursts": {q: b.to_dict() for q, b in self.bursts.items()},
            "selectivity": {q: {v: s.to_dict() for v, s in per.items()} for q, per in self.selectivity.items()},
        }
        return _pick(self, self._keys, extra)

    # ------------------------------------------------------------------ what the cost models read

    @property
    def is_uniform(self) -> bool:
        return self.assumption == UNIFORM

    def events_per_window(self, event_type: str, within_us: int) -> float:
        """Events of ``event_type`` in a window of ``within_us``: its mean rate per pane times the
        panes per window (0 for a type the statistics do not list; 1 under the uniform assumption)."""
        if self.is_uniform:
            return 1.0
        rate = self.types.get(event_type)
        mean = float(rate.rate_mean) if rate is not None else 0.0
        return mean * within_us / (self.pane_us or within_us)

    def mean_burst(self, event_type: str, query: str | None = None) -> float:
        """The mean run of ``event_type`` between other events of ``query``'s pattern (the
        stream-wide ``*`` entry when the query has none, or without a query), at least 1."""
        if self.is_uniform:
            return 1.0
        entry = (self.bursts.get(query) if query is not None else None) or self.bursts.get(ALL_QUERIES)
        burst = entry.types.get(event_type) if entry is not None else None
        mean = (burst.mean if burst is not None else None) or 1.0
        return max(float(mean), 1.0)

    def steps_per_window(self, event_type: str, within_us: int, query: str | None = None) -> float:
        """Type-grained steps of ``event_type`` per window: its events over its mean burst."""
        return self.events_per_window(event_type, within_us) / self.mean_burst(event_type, query)

    def selectivity_of(self, query: str, variable: str, has_predicates: bool = True) -> float:
        """The fraction of ``variable``'s type that matches it: 1 without predicates,
        ``DEFAULT_SELECTIVITY`` (0.5) when the statistics do not say."""
        if not has_predicates:
            return 1.0
        entry = (self.selectivity.get(query) or _EMPTY).get(variable)
        return DEFAULT_SELECTIVITY if entry is None or entry.all is None else float(entry.all)

    def partitions(self, partition_by: list[str] | tuple[str, ...], event_type: str | None = None) -> float:
        """The partitions a partitioning splits the stream into, holding events of ``event_type``
        (else of any type): from the statistics' ``partitions`` entry of exactly ``partition_by``,
        else from ``groups`` when they were grouped by exactly it, else 1 (no partitioning, or
        statistics that do not say)."""
        by = tuple(partition_by)
        if not by:
            return 1.0
        for p in self.partitionings:
            if p.partition_by == by:
                n = (p.by_type or _EMPTY).get(event_type) if event_type is not None else None
                return float(n or p.count or 1)
        if self.groups is None or self.group_by is None or tuple(self.group_by) != by:
            return 1.0
        by_type = self.groups.by_type or _EMPTY
        return float((by_type.get(event_type) if event_type is not None else None) or self.groups.count or 1)


# ---------------------------------------------------------------------- the schema


def load_statistics_schema() -> dict[str, Any]:
    """The JSON Schema of the statistics document."""
    import json

    from trendlake.schemas import resource

    return json.loads(resource("statistics.schema.json").read_text(encoding="utf-8"))


@functools.cache
def _validator() -> Any:
    import jsonschema

    schema = load_statistics_schema()
    return jsonschema.validators.validator_for(schema)(schema)


@functools.cache
def _fast_validator() -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(load_statistics_schema())


def schema_error(doc: Any) -> str | None:
    """The document's first schema violation as ``<field path>: <message>`` on one line, or None.

    A valid document is recognised by jsonschema-rs; the message of an invalid one is the
    ``jsonschema`` package's best match (as ``engine.plan`` checks plans)."""
    try:
        if _fast_validator().is_valid(doc):
            return None
    except (ValueError, TypeError, OverflowError):  # a value it cannot take: the full check decides
        pass
    import jsonschema  # only for a bad document: its import costs more than checking a good one

    error = jsonschema.exceptions.best_match(_validator().iter_errors(doc))
    if error is None:
        return None
    from trendlake.engine.plan import MAX_PROBLEM_CHARS, brief

    where = brief("/".join(str(p) for p in error.absolute_path) or "(top level)")
    return f"{where}: {brief(error.message, MAX_PROBLEM_CHARS)}"
