"""``engine.table.evaluate_table_partials``, the executor's former name, keeps its signature.

Written for a mutant of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"): after the plan and the table, every
parameter is keyword-only, as callers written against the former executor
pass them.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from trendlake.engine.table import evaluate_table_partials

from trendlake import engine, optimizer

TEXT = "QUERY q RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 seconds;"


def test_same_partials_as_the_executor_and_keyword_only_options() -> None:
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(TEXT)))
    table = pa.table({"type": ["A", "A", "B"], "ts": pa.array([1, 2, 3], pa.int64())})
    got = evaluate_table_partials(plan, table, queries=["q"], strategy="greta")
    assert {key: r.trends for key, r in got["q"].items()} == {((), 0): 2}  # (a1, b3), (a2, b3)
    with pytest.raises(TypeError):
        evaluate_table_partials(plan, table, ["q"])  # type: ignore[misc]
    with pytest.raises(TypeError):
        evaluate_table_partials(plan, table, None, "greta")  # type: ignore[misc]
