"""The typed statistics (``optimizer.statistics``) and their JSON Schema.

Documents come from the producers themselves (``jobs.statistics.compute_stats`` rows through
``statistics_dict``, as ``trendlake stats`` records them, and ``statistics.file_statistics``, as
``plan --events`` computes them) over random small event tables: every such document passes
the schema and reads back to itself; the schema names exactly the fields they write; a wrong
value anywhere is refused with its field named."""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trendlake.jobs.statistics import compute_stats, file_statistics, statistics_dict
from trendlake.optimizer.cost import UNIFORM, rates_for, selectivity
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.statistics import Statistics, load_statistics_schema

from trendlake import optimizer

SCHEMA = {"stream": "s", "event_types": ["A", "B", "K"],
          "attributes": {"x": {"type": "long", "types": "*"}, "g": {"type": "string", "types": "*"}}}
WORKLOAD = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, K+) WHERE K.x < 3 GROUP-BY g WITHIN 10 minutes SLIDE 5 minutes;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(A, K+, B) WHERE K.x < 3 AND A.x > 1 GROUP-BY g WITHIN 10 minutes SLIDE 5 minutes;
QUERY q3 RETURN COUNT(*) PATTERN SEQ(K+, B) WHERE K.x < 5 WITHIN 10 minutes SLIDE 5 minutes;
"""


@st.composite
def event_tables(draw: st.DrawFn) -> pa.Table:
    """A few dozen events of A, B, K over up to an hour, some lacking ``x`` or the group ``g``."""
    n = draw(st.integers(1, 40))
    types = draw(st.lists(st.sampled_from("ABK"), min_size=n, max_size=n))
    ts = sorted(draw(st.lists(st.integers(0, 3_600_000_000), min_size=n, max_size=n)))
    x = draw(st.lists(st.one_of(st.none(), st.integers(0, 6)), min_size=n, max_size=n))
    g = draw(st.lists(st.one_of(st.none(), st.sampled_from(["n", "s"])), min_size=n, max_size=n))
    return pa.table({"type": types, "ts": pa.array(ts, pa.int64()), "x": pa.array(x, pa.int64()),
                     "g": pa.array(g, pa.string())})


def stats_run(table: pa.Table, workload: Any, group_by: list[str] | None) -> dict[str, Any]:
    """The document ``trendlake stats`` records for one run (its run columns and rows)."""
    ts = table.column("ts").to_pylist()
    run = {"run_id": "r1", "stream": "s", "computed_at": datetime(2026, 1, 2, tzinfo=UTC),
           "range_start": min(ts), "range_end": max(ts) + 1, "pane_us": 300_000_000,
           "workload_hash": optimizer.workload_hash(WORKLOAD) if workload is not None else None,
           "group_by": json.dumps(group_by) if group_by else None}
    rows = compute_stats(table, SCHEMA, workload, group_by=group_by)
    return statistics_dict([{**run, **r} for r in rows])


@pytest.fixture(scope="module")
def workload() -> optimizer.Workload:
    return optimizer.compile_workload(WORKLOAD, stream_schema=SCHEMA)


def round_trips(doc: dict[str, Any]) -> None:
    stats = Statistics.from_dict(doc)
    back = stats.to_dict()
    assert back == doc
    assert json.dumps(back) == json.dumps(doc)  # the same keys in the same order


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=event_tables(), with_workload=st.booleans(), grouped=st.booleans())
def test_documents_of_the_stats_job_and_of_files_read_back_to_themselves(
    table: pa.Table, with_workload: bool, grouped: bool, workload: optimizer.Workload
) -> None:
    round_trips(stats_run(table, workload if with_workload else None, ["g"] if grouped else None))
    round_trips(file_statistics(table, workload, None))


def test_partition_counts_of_every_partitioning_of_the_workload(workload: optimizer.Workload) -> None:
    """Statistics grouped by nothing still count the partitions of each query's partitioning
    (q1, q2: ``GROUP-BY g``): the distinct values of ``g`` among each type's events."""
    events = [("A", "n"), ("K", "n"), ("K", "s"), ("K", "t"), ("B", None), ("A", "s"), ("K", None)]
    table = pa.table({"type": [e[0] for e in events], "ts": pa.array([i * 1_000_000 for i in range(len(events))]),
                      "x": pa.array([0] * len(events), pa.int64()), "g": [e[1] for e in events]})
    for doc in (stats_run(table, workload, None), file_statistics(table, workload, None)):
        assert doc["partitions"] == [{"partition_by": ["g"], "count": 3, "by_type": {"A": 2, "K": 3}}]
        s = Statistics.from_dict(doc)
        assert (s.partitions(["g"], "K"), s.partitions(["g"], "A"), s.partitions(["g"], "B")) == (3.0, 2.0, 3.0)


def test_the_uniform_assumption() -> None:
    uniform = Statistics.uniform()
    assert uniform.is_uniform and uniform.to_dict() == UNIFORM == {"assumption": "uniform"}
    assert Statistics.from_dict({"assumption": "uniform"}) == uniform
    assert uniform.events_per_window("T", 600_000_000) == 1.0 and uniform.mean_burst("T", "q") == 1.0
    rates = rates_for(uniform, 600_000_000, {"A", "K"}, "q1")
    assert rates.events == {"A": 1.0, "K": 1.0} and rates.steps == {"A": 1.0, "K": 1.0}


def _schema_paths(schema: dict[str, Any]) -> set[str]:
    """Every field path the schema names (``*`` for a map's keys, ``[]`` for a list's items)."""
    defs = schema["$defs"]

    def walk(node: dict[str, Any], prefix: str) -> set[str]:
        if "$ref" in node:
            return walk(defs[node["$ref"].split("/")[-1]], prefix)
        out: set[str] = set()
        for name, sub in node.get("properties", {}).items():
            out.add(prefix + name)
            out |= walk(sub, prefix + name + "/")
        if isinstance(node.get("additionalProperties"), dict):
            out |= walk(node["additionalProperties"], prefix + "*/")
        if isinstance(node.get("items"), dict):
            out |= walk(node["items"], prefix + "[]/")
        return out

    return walk(defs["measured"], "") | walk(defs["assumption"], "")


def _doc_paths(doc: Any, prefix: str = "", maps: frozenset[str] = frozenset()) -> set[str]:
    """The field paths of a document, in ``_schema_paths``' form (``maps``: the paths whose keys
    are names, not fields)."""
    out: set[str] = set()
    if isinstance(doc, dict):
        for k, v in doc.items():
            key = "*" if prefix.rstrip("/") in maps else k
            if key != "*":
                out.add(prefix + key)
            out |= _doc_paths(v, prefix + key + "/", maps)
    elif isinstance(doc, list):
        for v in doc:
            out |= _doc_paths(v, prefix + "[]/", maps)
    return out


MAPS = frozenset({"types", "bursts", "bursts/*/types", "selectivity", "selectivity/*", "groups/by_type",
                  "groups/per_group", "groups/per_group/*", "partitions/[]/by_type"})


def test_the_schema_names_exactly_the_fields_the_producers_write(workload: optimizer.Workload) -> None:
    """Events where every statistic has a value: each schema field is exercised by a document of
    the stats job or the uniform assumption, and the documents hold no field the schema lacks."""
    events = [("A", 0, 2, "n"), ("K", 1, 1, "n"), ("K", 2, 4, "n"), ("B", 3, 1, "n"), ("A", 4, 0, "s"),
              ("K", 5, 2, "s"), ("B", 6, None, None), ("K", 7, None, "s")]
    table = pa.table({"type": [e[0] for e in events], "ts": pa.array([e[1] * 60_000_000 for e in events]),
                      "x": pa.array([e[2] for e in events], pa.int64()), "g": [e[3] for e in events]})
    docs = [stats_run(table, workload, ["g"]), stats_run(table, None, None), file_statistics(table, workload, None),
            Statistics.uniform().to_dict()]
    for doc in docs:
        round_trips(doc)
    written = set().union(*(_doc_paths(d, "", MAPS) for d in docs))
    assert written == _schema_paths(load_statistics_schema())


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(doc, dict) and doc:
        return [p for k, v in doc.items() for p in _leaves(v, (*path, k))]
    if isinstance(doc, list) and doc:
        return [p for i, v in enumerate(doc) for p in _leaves(v, (*path, i))]
    return [path]


def test_a_wrong_value_anywhere_is_refused_naming_its_field(workload: optimizer.Workload) -> None:
    table = pa.table({"type": ["A", "K", "K", "B", "K"], "ts": pa.array([0, 1, 2, 3, 4]),
                      "x": pa.array([1, 2, 9, 0, 1], pa.int64()), "g": ["n", "n", "s", "n", "s"]})
    doc = stats_run(table, workload, ["g"])
    leaves = _leaves(doc)
    assert len(leaves) > 60
    for path in leaves:
        bad = copy.deepcopy(doc)
        node = bad
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = {"not": "a value"}  # no field of the document takes an object here
        field = "/".join(str(p) for p in path)
        with pytest.raises(OptimizerError) as err:
            Statistics.from_dict(bad)
        message = str(err.value)
        assert message.startswith(f"statistics: {field}: "), (field, message)
        assert "\n" not in message


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ([], "(top level): [] is not of type 'object'"),
        ({"types": {}, "colour": 1}, "(top level): Additional properties are not allowed ('colour'"),
        ({"events": 3}, "(top level): 'types' is a required property"),
        ({"types": {"K": {"events": 3}}}, "types/K: 'rate_mean' is a required property"),
        ({"types": {"K": {"rate_mean": 1}}, "pane_us": 0}, "pane_us: 0 is less than the minimum of 1"),
        ({"types": {}, "bursts": {"q": {"types": {"K": {"mean": 2, "max": -1}}}}}, "bursts/q/types/K/max: -1"),
        ({"types": {}, "bursts": {"q": {"partition_by": []}}}, "bursts/q: 'types' is a required property"),
        ({"types": {}, "selectivity": {"q": {"v": {"all": 1.5}}}}, "selectivity/q/v/all: 1.5 is greater than"),
        ({"types": {}, "groups": {"by_type": {}}}, "groups: 'count' is a required property"),
        ({"types": {}, "group_by": "g"}, "group_by: 'g' is not of type 'array', 'null'"),
        ({"types": {}, "workload_hash": "abc"}, "workload_hash: 'abc' does not match"),
        ({"types": {}, "computed_at": "yesterday"}, "computed_at: 'yesterday' does not match"),
        ({"assumption": "zipf"}, "assumption: 'uniform' was expected"),
        ({"assumption": "uniform", "types": {}}, "(top level): Additional properties are not allowed ('types'"),
    ],
)
def test_bad_documents_are_refused(doc: Any, where: str) -> None:
    with pytest.raises(OptimizerError) as err:
        Statistics.from_dict(doc)
    assert str(err.value).startswith(f"statistics: {where}"), str(err.value)


def test_accessors_read_what_the_cost_models_need() -> None:
    doc = {
        "pane_us": 60_000_000, "group_by": ["g"],
        "types": {"K": {"events": 240, "rate_mean": 4.0, "rate_max": 9}, "A": {"rate_mean": 0.5}},
        "groups": {"count": 7, "by_type": {"K": 5}},
        "bursts": {"*": {"partition_by": [], "types": {"K": {"mean": 3.0}, "A": {"mean": 0.0}}},
                   "q1": {"partition_by": ["g"], "types": {"K": {"mean": 2.0}, "A": {"mean": None}}}},
        "selectivity": {"q1": {"K": {"all": 0.25}, "A": {"all": None}}},
    }
    s = Statistics.from_dict(doc)
    # 4 K per one-minute pane: 40 in a ten-minute window; a type not listed has none
    assert s.events_per_window("K", 600_000_000) == 40.0 and s.events_per_window("Z", 600_000_000) == 0.0
    assert s.mean_burst("K", "q1") == 2.0 and s.mean_burst("K", "q9") == 3.0 and s.mean_burst("K") == 3.0
    assert s.mean_burst("A", "q1") == 1.0 and s.mean_burst("A") == 1.0  # unknown or empty runs: bursts of one
    assert s.steps_per_window("K", 600_000_000, "q1") == 20.0
    assert s.selectivity_of("q1", "K") == 0.25 and s.selectivity_of("q1", "A") == 0.5
    assert s.selectivity_of("q2", "K") == 0.5 and s.selectivity_of("q2", "K", has_predicates=False) == 1.0
    assert selectivity(s, "q1", "K", True) == 0.25 and selectivity(None, "q1", "K", True) == 0.5
    assert s.partitions(["g"], "K") == 5.0 and s.partitions(["g"], "A") == 7.0 and s.partitions(["g"]) == 7.0
    assert s.partitions(["h"], "K") == 1.0 and s.partitions([], "K") == 1.0
    # the workload's other partitionings: their own entries, whatever the statistics' group_by
    s = Statistics.from_dict({**doc, "partitions": [{"partition_by": ["g", "h"], "count": 30, "by_type": {"K": 12}},
                                                     {"partition_by": ["g"], "count": 6}]})
    assert s.partitions(["g", "h"], "K") == 12.0 and s.partitions(["g", "h"], "A") == 30.0
    assert s.partitions(["h", "g"]) == 1.0 and s.partitions(["g"], "K") == 6.0
    rates = rates_for(s, 600_000_000, {"K", "A"}, "q1")
    assert rates.events == {"K": 40.0, "A": 5.0} and rates.steps == {"K": 20.0, "A": 5.0}
    # no pane: the window is the pane
    assert Statistics.from_dict({"types": {"K": {"rate_mean": 4}}}).events_per_window("K", 10) == 4.0
    with pytest.raises(OptimizerError, match="needs stream statistics"):
        rates_for(None, 1, {"K"})


def test_the_view_is_immutable() -> None:
    s = Statistics.from_dict({"types": {"K": {"rate_mean": 1.0}}, "bursts": {"*": {"types": {"K": {"mean": 1}}}}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.pane_us = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.types["K"] = s.types["K"]  # type: ignore[index]
    with pytest.raises(TypeError):
        s.bursts["*"].types["Z"] = s.bursts["*"].types["K"]  # type: ignore[index]
    # to_dict gives a fresh document: changing it changes nothing in the view
    out = s.to_dict()
    out["types"]["K"]["rate_mean"] = 9.0
    assert s.types["K"].rate_mean == 1.0 and s.to_dict()["types"]["K"]["rate_mean"] == 1.0
