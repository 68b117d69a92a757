"""Great Expectations suites for bronze, generated from a stream schema.

``suite_for_stream(schema)`` is plain data (the GE 1.x suite JSON), derived
from the stream schema at run time, so a stream's suite can never disagree
with its schema; ``write_suite`` exports it for a user who wants to review or
extend it (``python -m trendlake.jobs.quality STREAM... --out DIR``).
``validate_bronze(df, suite, rows)`` runs it on a batch (a Spark DataFrame) with an
ephemeral context and raises ``SuiteFailed`` naming every failed expectation. A
batch of at most ``pandas_rows()`` rows (``TRENDLAKE_SUITE_PANDAS_ROWS``, default
100,000) is validated on GE's pandas engine from its suite columns collected
through Arrow (one Spark job), a larger one on GE's Spark engine (about seven
Spark jobs for the bronze suite): the same expectations with the same results,
integers kept exact (nullable pandas integers, never floats).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import JobError


class SuiteFailed(JobError):
    """The good rows of an ingest broke the stream's expectation suite; nothing was committed."""


PANDAS_ROWS = 100_000  # default of ``TRENDLAKE_SUITE_PANDAS_ROWS``


def pandas_rows() -> int:
    """Batches of at most this many rows are validated on GE's pandas engine
    (``TRENDLAKE_SUITE_PANDAS_ROWS``; 0 or less validates every batch on Spark)."""
    value = os.environ.get("TRENDLAKE_SUITE_PANDAS_ROWS", "").strip()
    try:
        return int(value) if value else PANDAS_ROWS
    except ValueError:
        raise JobError(f"TRENDLAKE_SUITE_PANDAS_ROWS must be a whole number of rows, not {value!r}") from None


def suite_for_stream(stream_schema: dict[str, Any]) -> dict[str, Any]:
    """The expectation suite (GE 1.x JSON) every bronze batch of the stream must pass."""

    def exp(kind: str, **kwargs: Any) -> dict[str, Any]:
        return {"type": kind, "kwargs": kwargs, "meta": {}}

    expectations = [exp("expect_column_values_to_not_be_null", column=c) for c in ("type", "ts", "seq", "event_date")]
    expectations.append(
        exp("expect_column_values_to_be_in_set", column="type", value_set=list(stream_schema["event_types"]))
    )
    expectations.append(exp("expect_column_values_to_be_unique", column="seq"))
    for name, spec in stream_schema.get("attributes", {}).items():
        if spec.get("required") and spec.get("types", "*") == "*":
            expectations.append(exp("expect_column_values_to_not_be_null", column=name))
        if "min" in spec or "max" in spec:
            kwargs: dict[str, Any] = {"column": name}
            if "min" in spec:
                kwargs["min_value"] = spec["min"]
            if "max" in spec:
                kwargs["max_value"] = spec["max"]
            expectations.append(exp("expect_column_values_to_be_between", **kwargs))
        if "values" in spec:
            expectations.append(exp("expect_column_values_to_be_in_set", column=name, value_set=list(spec["values"])))
    return {
        "name": f"bronze_{stream_schema['stream']}",
        "expectations": expectations,
        "meta": {"generated_from": f"schemas/streams/{stream_schema['stream']}.json"},
    }


def write_suite(stream_schema: dict[str, Any], folder: str | Path) -> Path:
    """Write the stream's suite as ``<folder>/<stream>.json``; its path."""
    path = Path(folder) / f"{stream_schema['stream']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(suite_for_stream(stream_schema), indent=2) + "\n")
    return path


def import_great_expectations() -> Any:
    """The ``great_expectations`` module, imported so that it cannot end the process.

    GE tries to import ``pyspark.sql.connect``, which takes a process whose ``__main__``
    has neither ``__spec__`` nor ``__file__`` (``python -c``, a script on stdin, an
    embedded interpreter, a pytest-xdist worker) for pyspark's own doctest run:
    without Spark Connect's optional packages it then calls ``sys.exit(0)``, and
    an ingest would stop half-way with a success status. While GE and its pyspark
    compatibility module (the one place it tries that import) are first imported,
    such a ``__main__`` is given a ``__file__`` (taken away again after).
    """
    main = sys.modules.get("__main__")
    lent = main is not None and getattr(main, "__spec__", None) is None and not hasattr(main, "__file__")
    if lent:
        main.__file__ = "<main>"  # type: ignore[union-attr]
    try:
        import great_expectations
        import great_expectations.compatibility.pyspark  # noqa: F401 - where GE tries pyspark.sql.connect

        return great_expectations
    finally:
        if lent:
            del main.__file__  # type: ignore[union-attr]


def run_suite(df: Any, suite: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Validate a Spark or a pandas DataFrame against ``suite`` in an ephemeral GE context
    (GE's Spark or pandas execution engine, by the frame's kind).

    Returns a summary and the failed expectations as ``type(column): N unexpected``.

    Two passes, the second only when something failed: the whole suite first with
    GE's ``BOOLEAN_ONLY`` result format (pass or fail only; on Spark about 7 jobs for
    the bronze suite instead of about 57, because GE then skips the per-expectation
    queries for sample unexpected values), then just the failed expectations again
    with GE's default result format for their unexpected counts.
    """
    gx = import_great_expectations()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    if _is_pandas(df):
        source = context.data_sources.add_or_update_pandas(name="trendlake")
    else:
        source = context.data_sources.add_or_update_spark(name="trendlake")
    asset = source.add_dataframe_asset(name=suite["name"])
    batch = asset.add_batch_definition_whole_dataframe("batch")

    def validate(name: str, expectations: list[dict[str, Any]], **run: Any) -> list[Any]:
        gx_suite = context.suites.add(
            gx.ExpectationSuite(name=name, expectations=expectations, meta=suite.get("meta"))
        )
        definition = context.validation_definitions.add(
            gx.ValidationDefinition(name=f"{name}_check", data=batch, suite=gx_suite)
        )
        return list(definition.run(batch_parameters={"dataframe": df}, **run).results)

    def key(cfg: Any) -> str:
        return json.dumps([cfg.type, cfg.kwargs], sort_keys=True, default=str)

    # GE reports results grouped by column, not in the suite's order: match them by configuration
    results = validate(suite["name"], suite["expectations"], result_format="BOOLEAN_ONLY")
    failed_first = [r.expectation_config for r in results if not r.success]
    if failed_first:
        again = validate(f"{suite['name']}_failed", [
            {"type": cfg.type, "kwargs": dict(cfg.kwargs), "meta": cfg.meta or {}} for cfg in failed_first
        ])
        detailed = {key(r.expectation_config): r for r in again}
        results = [detailed.get(key(r.expectation_config), r) if not r.success else r for r in results]
    failed = []
    for r in results:
        if not r.success:
            cfg = r.expectation_config
            target = cfg.kwargs.get("column") or cfg.kwargs.get("column_list")
            unexpected = (r.result or {}).get("unexpected_count")
            detail = f": {unexpected} unexpected" if unexpected is not None else ""
            failed.append(f"{cfg.type}({target}){detail}")
    summary = {"suite": suite["name"], "expectations": len(results), "success": not failed}
    return summary, failed


def _is_pandas(df: Any) -> bool:
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(df, pandas.DataFrame)


def suite_columns(suite: dict[str, Any]) -> list[str]:
    """The columns ``suite``'s expectations read, in the suite's order."""
    names: list[str] = []
    for e in suite["expectations"]:
        kwargs = e["kwargs"]
        names.extend([kwargs["column"]] if "column" in kwargs else kwargs.get("column_list", []))
    return list(dict.fromkeys(names))


def arrow_to_pandas(table: Any) -> Any:
    """An Arrow table as the pandas DataFrame GE's pandas engine validates: integers and
    booleans as pandas' nullable types (a NULL stays missing and a 64-bit integer stays
    exact: plain pandas would make a column with NULLs float, where 2**62 + 1 equals 2**62),
    strings as objects, times as their own unit."""
    import pandas as pd
    import pyarrow as pa

    nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
                pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return table.to_pandas(types_mapper=nullable.get)


def validate_bronze(df: Any, suite: dict[str, Any], rows: int | None = None) -> dict[str, Any]:
    """Run ``suite`` on a Spark DataFrame of ``rows`` rows (when known); a summary, or
    ``SuiteFailed`` when it does not pass. With at most ``pandas_rows()`` rows, the suite's
    columns are collected through Arrow and validated on GE's pandas engine."""
    if rows is not None and rows <= pandas_rows():
        df = arrow_to_pandas(df.select(*[f"`{c}`" for c in suite_columns(suite)]).toArrow())
    summary, failed = run_suite(df, suite)
    if failed:
        raise SuiteFailed(f"expectation suite {suite['name']} failed: " + "; ".join(failed))
    return summary


def main(argv: list[str] | None = None) -> int:
    import argparse

    from trendlake.schemas import load_stream_schema

    parser = argparse.ArgumentParser(prog="python -m trendlake.jobs.quality", description="Export bronze expectation suites.")
    parser.add_argument("streams", nargs="+", help="stream names or schema paths")
    parser.add_argument("--out", required=True, type=Path, help="folder to write <stream>.json into")
    args = parser.parse_args(argv)
    for name in args.streams:
        print(write_suite(load_stream_schema(name), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
