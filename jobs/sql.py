"""Spark SQL over the lake: every Delta table as a temporary view.

``run_sql(spark, lake_root, sql)`` registers each table ``<kind>/<name>`` of
the lake as the temporary view ``<kind>_<name>`` (``results_stuck_trips``,
``bronze_rides``, ``quarantine_rides``, ``ingest_log_rides``,
``stats_rides``) over its *current snapshot* (``Lake.read_spark``: only the
files of the snapshot, never the table folder), plus ``trendlake_tables``
(``table_name``, ``view``, ``kind``, ``name``, ``version``, ``rows``,
``path``), then runs ``sql``.

Why not ``results.stuck_trips``: Spark 4 refuses qualified temporary view
names (``TEMP_VIEW_NAME_TOO_MANY_NAME_PARTS``), a persistent view may not
reference a temporary one, and a catalog table ``USING parquet LOCATION
<table folder>`` would read files that Delta overwrites removed. With
delta-spark jars on the classpath, ``delta.`<path>``` works as usual in
Python code that calls ``spark.sql`` itself.

**Read-only by construction.** ``run_sql`` (and so ``trendlake sql``) runs one
query over the registered views and nothing else. The query is judged on what
Spark makes of it, before anything runs, against the allow-list of
``jobs.sql_allowlist`` (anything not listed is refused):

1. *Parsed* (``check_parsed``): Spark's own parser returns the unresolved plan.
   Every plan node must be a query operator (``Project``, ``Filter``,
   ``Aggregate``, ``Join``, ``Sort``, limits, set operations, ``WITH``,
   windows, ``VALUES``, ...), every relation a one-part name of a registered
   view or of a ``WITH`` query of the statement, every expression of an
   allowed class, every function a one-part name whose registry class is on
   the list of side-effect-free built-ins, and ``IDENTIFIER(...)`` a string
   literal (then expanded and checked as what it names). Commands, DDL and DML
   (``INSERT``, ``INSERT OVERWRITE DIRECTORY``, ``CREATE``, ``DROP``, ``SET``,
   ``CACHE``, ``ADD JAR``, ``EXPLAIN``, SQL scripts), file-path relations
   (``text.`/etc/hostname```), table-valued functions (``read_files``,
   ``range``) and ``TRANSFORM ... USING`` never reach the analyser, and
   neither do functions that act while being resolved (``from_protobuf`` reads
   a descriptor file then).
2. *Analysed* (``check_analyzed``): the analyser resolves the parsed plan
   (``sessionState.executePlan(plan, SKIP).analyzed``: resolution only, no
   command runs). Every node must be an analysed query operator or a ``View``
   that is one of the registered views (not entered: its files are the lake's
   own), and every expression -- with those in subqueries, lambdas, window
   specifications and generators, and the replacements Spark put in place of
   built-ins (``nvl`` becomes ``coalesce``) -- of an allowed class. This pass
   sees what a name *resolved* to: ``IDENTIFIER('ref' || 'lect')(...)``,
   ``try_reflect``, ``java_method``, a UDF registered in the session.

The analysed plan that passed is what runs (``Dataset.ofRows``), not the text
again. Bounds: the text is at most ``MAX_QUERY_BYTES`` (100,000 bytes of
UTF-8) and each pass walks at most ``MAX_PLAN_NODES`` (20,000) plan nodes and
expressions, a ``WITH`` query counted at each place it is read. A refusal raises ``SqlRefused``; a statement Spark rejects (parse
or analysis error) raises ``SqlError``, a ``SqlRefused`` with Spark's error
class (``condition``) and the first line of its message.

**Errors.** ``trendlake sql`` (``jobs/cli/sql.py``) reads the query from its argument,
``--file F`` or ``-`` (stdin); a refusal is a ``SqlRefused`` and a Spark error -- rejected or
failing while it runs -- a ``SqlError`` (``<error class>: <first message line>``), both bad
input (exit 2, ``SqlInternalError`` for Spark's ``INTERNAL_ERROR`` conditions: exit 3), and
nothing else reaches stderr: its
JVM logs at ``$TRENDLAKE_SPARK_LOG_LEVEL``, default OFF here, PySpark's
query-context loggers (which print the Java stack of every failed query) are
off, and the JVM's start-up notices are dropped (``quiet_spark``).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import BadInputError, InternalError
from trendlake.jobs.sql_allowlist import (
    ANALYZED_NODES,
    EXPRESSIONS,
    FUNCTIONS,
    QUERY_NODES,
    UNRESOLVED,
)

log = logging.getLogger("trendlake.sql")

TABLES_VIEW = "trendlake_tables"
MAX_QUERY_BYTES = 100_000
MAX_PLAN_NODES = 20_000
MAX_MESSAGE_CHARS = 1_000  # of a Spark error's first line, as printed
ALLOWED_EXPRESSIONS = FUNCTIONS | EXPRESSIONS
CATALYST = "org.apache.spark.sql.catalyst."
PLAN_EXPRESSION = CATALYST + "expressions.PlanExpression"
_JVM_CACHE: dict[int, dict[str, Any]] = {}  # per JVM gateway (see _Walk)


class SqlRefused(BadInputError):
    """A statement that is not a read-only query over the lake's views."""


class SqlError(SqlRefused):
    """A statement Spark rejects: its error class (``condition``) and the first line of its message."""

    def __init__(self, condition: str, message: str) -> None:
        self.condition = condition
        self.message = message
        super().__init__(f"{condition}: {message}")


class SqlInternalError(SqlError, InternalError):
    """A statement Spark fails with one of its ``INTERNAL_ERROR`` conditions (a bug, not the query)."""


def spark_error(err: BaseException) -> SqlError | None:
    """``err`` as a ``SqlError`` when it is an error raised by Spark (through py4j); else None."""
    try:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors.exceptions.base import PySparkException
    except ImportError:  # pragma: no cover - pyspark is there whenever Spark raised
        return None
    if isinstance(err, SqlError):
        return err
    if isinstance(err, PySparkException):
        condition = err.getCondition() or type(err).__name__
        text = str(getattr(err, "_desc", None) or err.getMessage() or "")
    elif isinstance(err, Py4JJavaError):
        java = err.java_exception
        condition = str(java.getClass().getSimpleName())
        text = str(java.getMessage() or "")
    else:
        return None
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = first.removeprefix(f"[{condition}]").strip()
    if len(first) > MAX_MESSAGE_CHARS:  # Spark quotes the expression, which may be most of the query
        first = first[:MAX_MESSAGE_CHARS] + f"... ({len(first) - MAX_MESSAGE_CHARS} more characters)"
    if condition.startswith("INTERNAL_ERROR"):
        return SqlInternalError(condition, first or "(no message)")
    return SqlError(condition, first or "(no message)")


def _seq(jseq: Any) -> list[Any]:
    return [jseq.apply(i) for i in range(jseq.size())]


def class_key(jobj: Any) -> str:
    """The class of a JVM object, relative to ``org.apache.spark.sql.catalyst.`` when inside it."""
    return str(jobj.getClass().getName()).removeprefix(CATALYST)


def _simple(key: str) -> str:
    return key.rsplit(".", 1)[-1].rstrip("$")


def _pretty(expr: Any) -> str:
    try:
        return str(expr.prettyName())
    except Exception:  # noqa: BLE001 - a name for a message only
        return "expression"


def _at(expr: Any, path: tuple[int, ...]) -> Any:
    """The node of the expression tree ``expr`` at ``path`` (child indexes from the root)."""
    for i in path:
        expr = expr.children().apply(i)
    return expr


def expression_tree(expr: Any) -> list[tuple[str, tuple[int, ...]]]:
    """Every node of the expression tree ``expr`` (itself and its children, recursively): class and path.

    One JVM call: Spark's own JSON form of the tree (``TreeNode.toJSON``) lists every node
    depth first with its class and number of children, which gives the paths; only the
    classes and counts are read. When Spark cannot write it, the tree is walked node by node.
    """
    try:
        data = json.loads(str(expr.toJSON()))
    except Exception:  # noqa: BLE001 - a node Spark cannot write as JSON: walk it instead
        data = None
    nodes: list[tuple[str, tuple[int, ...]]] = []
    if isinstance(data, list) and data:
        open_: list[list[Any]] = []  # [children still to come, path, next child index]
        for entry in data:
            if not isinstance(entry, dict) or not isinstance(entry.get("num-children"), int) or (
                    not open_ and nodes):
                nodes = []
                break
            if open_:
                parent = open_[-1]
                path = (*parent[1], parent[2])
                parent[0] -= 1
                parent[2] += 1
            else:
                path = ()
            nodes.append((str(entry.get("class")).removeprefix(CATALYST), path))
            open_.append([entry["num-children"], path, 0])
            while open_ and open_[-1][0] <= 0:
                open_.pop()
        if nodes and not open_:
            return nodes
    nodes = []
    stack = [(expr, ())]
    while stack:
        node, path = stack.pop()
        nodes.append((class_key(node), path))
        stack.extend((child, (*path, i)) for i, child in enumerate(_seq(node.children())))
    return nodes


class _Walk:
    """One pass over a plan: the JVM handles, the registered views, and the node budget."""

    def __init__(self, spark: Any, views: set[str] | frozenset[str], stage: str) -> None:
        self.jvm = spark.sparkContext._jvm
        self.state = spark._jsparkSession.sessionState()
        self.registry = self.state.functionRegistry()
        # JVM handles and answers that do not change while the JVM runs (each JVM call is a round trip)
        self.cache = _JVM_CACHE.setdefault(id(spark.sparkContext._gateway), {})
        self.views = {v.lower() for v in views}
        self.stage = stage
        self.seen = 0

    def expressions(self, node: Any, exprs: Any = None) -> tuple[Any, list[tuple[str, tuple[int, ...]]]]:
        """All expressions of the plan node ``node`` (or the Scala list ``exprs``) as the children of
        one ``array(...)`` (so one ``expression_tree`` call lists them), and that list without the
        array itself."""
        if "array" not in self.cache:
            self.cache["array"] = self.jvm.org.apache.spark.sql.catalyst.expressions.CreateArray
        container = self.cache["array"](node.expressions() if exprs is None else exprs, False)
        tree = expression_tree(container)
        self.tick(len(tree) - 1)
        return container, tree[1:]

    def tick(self, n: int = 1) -> None:
        self.seen += n
        if self.seen > MAX_PLAN_NODES:
            raise SqlRefused(
                f"query too large to check: its {self.stage} plan has more than {MAX_PLAN_NODES} "
                "nodes and expressions"
            )

    def holds_plan(self, key: str) -> bool:
        """Whether expressions of class ``key`` hold a query plan (subqueries: ``PlanExpression``)."""
        holds = self.cache.setdefault("plan expression", {})
        if key not in holds:
            loader = self.state.getClass().getClassLoader()
            try:
                base = self.jvm.java.lang.Class.forName(PLAN_EXPRESSION, False, loader)
                cls = self.jvm.java.lang.Class.forName(CATALYST + key, False, loader)
            except Exception:  # noqa: BLE001 - fail closed
                raise SqlRefused(f"cannot check expressions of class {key}") from None
            holds[key] = bool(base.isAssignableFrom(cls))
        return holds[key]

    def check_function(self, parts: list[str]) -> None:
        name = ".".join(parts)
        if len(parts) != 1:
            raise SqlRefused(f"function {name}: qualified function names are not allowed in lake queries")
        key = parts[0].lower()
        if self.registry.lookupFunction(self.function_id(key, "session")).isDefined():
            raise SqlRefused(f"function {name} is a temporary function (a UDF): not allowed in lake queries")
        builtins = self.cache.setdefault("builtin", {})
        if key not in builtins:
            info = self.registry.lookupFunction(self.function_id(key, "builtin"))
            builtins[key] = str(info.get().getClassName()).removeprefix(CATALYST) if info.isDefined() else None
        if builtins[key] is None:
            raise SqlRefused(f"function {name} is not a built-in function of Spark (lake queries call built-ins only)")
        if builtins[key] not in FUNCTIONS:
            raise SqlRefused(_not_allowed(name))

    def function_id(self, name: str, namespace: str) -> Any:
        """``system.<namespace>.<name>``: Spark's function registry keys built-ins and temporary functions so."""
        ids = self.cache.setdefault("ids", {})
        if (name, namespace) not in ids:
            if "fid" not in self.cache:
                self.cache["fid"] = (self.jvm.org.apache.spark.sql.catalyst.FunctionIdentifier, self.jvm.scala.Option)
            fid, option = self.cache["fid"]
            ids[name, namespace] = fid.apply(name, option.apply(namespace), option.apply("system"))
        return ids[name, namespace]

    def expand_identifier(self, expr: Any) -> Any:
        """``IDENTIFIER('name')`` (as a column or function name): what it builds; only a string literal."""
        ident = expr.identifierExpr()
        if class_key(ident) != "expressions.Literal" or str(ident.dataType().typeName()) != "string":
            raise SqlRefused("IDENTIFIER(...) takes a string literal in lake queries, not an expression")
        if ident.value() is None:
            raise SqlRefused("IDENTIFIER(NULL) names nothing")
        parts = self.state.sqlParser().parseMultipartIdentifier(str(ident.value().toString()))
        return expr.exprBuilder().apply(parts, expr.otherExprs())


def _not_allowed(what: str) -> str:
    return (f"{what} is not allowed in lake queries: only side-effect-free built-in functions are "
            "(no reflection, Java methods, UDFs or file access; see jobs/sql_allowlist.py)")


def _refuse_node(kind: str) -> SqlRefused:
    return SqlRefused(
        f"only read-only queries over the lake's views are allowed, not {kind} "
        "(no INSERT, CREATE, DROP, SET, CACHE, ADD JAR, EXPLAIN, TRANSFORM or scripts)"
    )


def check_parsed(spark: Any, root: Any, views: set[str] | frozenset[str]) -> None:
    """Raise ``SqlRefused`` unless the parsed plan ``root`` is one query over ``views`` (module doc, pass 1).

    The node budget counts a ``WITH`` query at each reference to it, as analysis expands it:
    ``WITH a1 AS (... a0 JOIN a0), a2 AS (... a1 JOIN a1), ...`` doubles per line.
    """
    walk = _Walk(spark, views, "parsed")
    ctes: set[str] = set()
    size: dict[str | None, int] = {}  # nodes of the statement (None) and of each WITH query
    refs: dict[str | None, list[str]] = {}  # relation names each of them reads
    plans: list[tuple[Any, str | None]] = [(root, None)]
    while plans:
        node, owner = plans.pop()
        walk.tick()
        size[owner] = size.get(owner, 0) + 1
        key = class_key(node)
        kind = _simple(key)
        if kind == "UnresolvedTableValuedFunction":
            raise SqlRefused("table-valued functions (read_files, range, ...) are not allowed: query the lake's views")
        if key not in QUERY_NODES:
            raise _refuse_node(kind)
        if kind == "UnresolvedWith":
            for pair in _seq(node.cteRelations()):
                name = str(pair._1()).lower()
                ctes.add(name)
                plans.append((pair._2(), name))
        if kind == "UnresolvedRelation":
            parts = [str(p) for p in _seq(node.multipartIdentifier())]
            name = ".".join(parts)
            if len(parts) != 1:
                raise SqlRefused(
                    f"{name} is not a lake view: file paths (text.`/path`, parquet.`/path`) and "
                    "qualified names are not allowed; list the views with SELECT * FROM trendlake_tables"
                )
            if parts[0].lower() not in walk.views and parts[0].lower() not in ctes:
                raise SqlRefused(f"{name} is not a lake view (SELECT * FROM trendlake_tables lists them)")
            if node.isStreaming():
                raise SqlRefused(f"streaming reads of {name} are not allowed")
            refs.setdefault(owner, []).append(parts[0].lower())
        pending = [walk.expressions(node)]
        if kind == "WithWindowDefinition":  # WINDOW w AS (...): held in a map, not in ``expressions``
            pending.append(walk.expressions(node, node.windowDefinitions().values().toList()))
        while pending:
            expr, tree = pending.pop()
            size[owner] += len(tree)
            skipped: list[tuple[int, ...]] = []
            for ekey, path in tree:
                if any(path[:len(s)] == s for s in skipped):
                    continue
                if ekey == "analysis.ExpressionWithUnresolvedIdentifier":
                    built = walk.expand_identifier(_at(expr, path))
                    tree_of_built = expression_tree(built)
                    walk.tick(len(tree_of_built))
                    pending.append((built, tree_of_built))
                    skipped.append(path)
                    continue
                if ekey not in ALLOWED_EXPRESSIONS and ekey not in UNRESOLVED:
                    raise SqlRefused(_not_allowed(f"{_simple(ekey)} ({_pretty(_at(expr, path))})"))
                if ekey == "analysis.UnresolvedFunction":
                    walk.check_function([str(p) for p in _seq(_at(expr, path).nameParts())])
                elif ekey == "analysis.UnresolvedGenerator":
                    fid = _at(expr, path).name()
                    walk.check_function(([str(fid.database().get())] if fid.database().isDefined() else [])
                                        + [str(fid.funcName())])
                if walk.holds_plan(ekey):
                    plans.append((_at(expr, path).plan(), owner))
        plans.extend((child, owner) for child in _seq(node.children()))
    expanded: dict[str | None, int] = {}

    def total(owner: str | None, depth: int = 0) -> int:
        if owner not in expanded:
            expanded[owner] = MAX_PLAN_NODES + 1  # a cycle (or a deep chain) counts as too large
            if depth < 1000:
                expanded[owner] = min(MAX_PLAN_NODES + 1, size.get(owner, 0) + sum(
                    total(ref, depth + 1) for ref in refs.get(owner, []) if ref in size and ref != owner))
        return expanded[owner]

    if total(None) > MAX_PLAN_NODES:
        raise SqlRefused(
            f"query too large to check: with each WITH query counted where it is read, it has more than "
            f"{MAX_PLAN_NODES} nodes and expressions"
        )


def check_analyzed(spark: Any, plan: Any, views: set[str] | frozenset[str]) -> None:
    """Raise ``SqlRefused`` unless the analysed ``plan`` holds only allowed nodes and expressions (pass 2)."""
    walk = _Walk(spark, views, "analysed")
    plans = [plan]
    while plans:
        node = plans.pop()
        walk.tick()
        key = class_key(node)
        if key == "plans.logical.View":
            name = str(node.desc().identifier().table())
            if node.isTempView() and name.lower() in walk.views:
                continue  # a registered view: its relation reads the lake table's own files
            raise SqlRefused(f"view {name} is not a lake view (SELECT * FROM trendlake_tables lists them)")
        if key not in ANALYZED_NODES:
            raise _refuse_node(_simple(key))
        container, tree = walk.expressions(node)
        for ekey, path in tree:
            if ekey not in ALLOWED_EXPRESSIONS:
                raise SqlRefused(_not_allowed(f"{_pretty(_at(container, path))} ({_simple(ekey)})"))
            if walk.holds_plan(ekey):
                plans.append(_at(container, path).plan())
        plans.extend(_seq(node.children()))


def _spark_call(call: Any) -> Any:
    """Run a JVM call of the check; Spark's errors (parse, analysis) as one-line ``SqlError``."""
    try:
        return call()
    except Exception as err:  # noqa: BLE001 - py4j wraps Spark's ParseException / AnalysisException
        mapped = spark_error(err)
        if mapped is None:
            raise
        raise mapped from None


def check_read_only(spark: Any, sql: str, views: set[str] | frozenset[str]) -> Any:
    """The analysed plan of ``sql``; ``SqlRefused`` unless it is one query reading only ``views``.

    Nothing is executed: the text is parsed and analysed, and both plans are checked (module doc).
    """
    size = len(sql.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise SqlRefused(f"query text is {size} bytes; the limit is {MAX_QUERY_BYTES} bytes")
    state = spark._jsparkSession.sessionState()
    parsed = _spark_call(lambda: state.sqlParser().parsePlan(sql))
    check_parsed(spark, parsed, views)
    skip = spark.sparkContext._jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    analyzed = _spark_call(lambda: state.executePlan(parsed, skip).analyzed())
    check_analyzed(spark, analyzed, views)
    return analyzed


def view_name(table: str) -> str:
    """``results/stuck_trips`` -> ``results_stuck_trips`` (other characters than [A-Za-z0-9_] become ``_``)."""
    kind, _, name = table.replace(".", "/", 1).partition("/")
    return re.sub(r"\W", "_", f"{kind}_{name}")


def register_views(spark: Any, lake_root: str | Path) -> list[dict[str, Any]]:
    """Register every lake table (and ``trendlake_tables``) as temporary views of ``spark``; their rows."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType
    from trendlake.jobs.lake import Lake

    lake = Lake(lake_root)
    if not lake.root.is_dir():
        raise FileNotFoundError(f"lake folder {lake.root} does not exist")
    listing = []
    for table in lake.tables():
        kind, name = table.split("/", 1)
        view = view_name(table)
        df = lake.read_spark(spark, table)
        df.createOrReplaceTempView(view)
        listing.append({
            "table_name": f"{kind}.{name}", "view": view, "kind": kind, "name": name,
            "version": lake.version(table), "rows": lake.row_count(table), "path": str(lake.path(table)),
        })
    schema = StructType([
        StructField("table_name", StringType()), StructField("view", StringType()),
        StructField("kind", StringType()), StructField("name", StringType()),
        StructField("version", LongType()), StructField("rows", LongType()), StructField("path", StringType()),
    ])
    spark.createDataFrame([tuple(r[f.name] for f in schema) for r in listing], schema).createOrReplaceTempView(TABLES_VIEW)
    log.info("registered %d lake tables as views: %s", len(listing), ", ".join(r["view"] for r in listing))
    return listing


def run_sql(
    spark: Any, lake_root: str | Path, sql: str, show: bool = False, as_arrow: bool = False, limit: int = 100
) -> Any:
    """Run the read-only query ``sql`` over the lake's views; a DataFrame, or a ``pyarrow.Table`` with ``as_arrow``.

    Anything but a query over the views raises ``SqlRefused`` (``SqlError`` when Spark
    rejects the text) before Spark runs it; the checked analysed plan is what runs.
    ``show=True`` also prints up to ``limit`` rows as a table.
    """
    from pyspark.sql.classic.dataframe import DataFrame

    listing = register_views(spark, lake_root)
    analyzed = check_read_only(spark, sql, {r["view"] for r in listing} | {TABLES_VIEW})
    jdf = spark.sparkContext._jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, analyzed)
    df = DataFrame(jdf, spark)
    if show:
        df.show(n=limit, truncate=False)
    return df.toArrow() if as_arrow else df


def _plain(value: Any) -> Any:
    if isinstance(value, float):  # infinities and NaN as eval prints them: JSON has no literal for them
        from trendlake.jobs.evaluate import json_value

        return json_value(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def print_rows(df: Any, fmt: str, out: Any = None) -> int:
    """Every row of ``df`` as CSV (with a header) or JSON lines; the number of rows."""
    out = out or sys.stdout
    n = 0
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(df.columns)
        for row in df.toLocalIterator():
            writer.writerow(["" if v is None else _plain(v) for v in row])
            n += 1
    else:
        for row in df.toLocalIterator():
            out.write(json.dumps({k: _plain(v) for k, v in row.asDict(recursive=True).items()}, allow_nan=False) + "\n")
            n += 1
    return n


def read_query(args: argparse.Namespace) -> str:
    """The query text of ``trendlake sql``: the argument, ``--file F`` or ``-`` (stdin), at most MAX_QUERY_BYTES."""
    if (args.file is None) == (args.query is None):
        raise SqlRefused("give the query as one argument, with --file F, or as - to read it from standard input")
    if args.file is None and args.query != "-":
        return str(args.query)
    where = "standard input" if args.file is None else str(args.file)
    if args.file is None:
        data = sys.stdin.buffer.read(MAX_QUERY_BYTES + 1)
    else:
        with open(args.file, "rb") as f:
            data = f.read(MAX_QUERY_BYTES + 1)
    if len(data) > MAX_QUERY_BYTES:
        raise SqlRefused(f"{where}: the query text is longer than the limit of {MAX_QUERY_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SqlRefused(f"{where}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    if not text.strip():
        raise SqlRefused(f"{where}: no query text")
    return text


# Lines the JVM prints on its own at start-up (not log records): dropped from ``trendlake sql``'s stderr.
JVM_NOTICES = (
    "WARNING: Using incubator modules:",
    "NOTE: Picked up JDK_JAVA_OPTIONS:",
    "Picked up _JAVA_OPTIONS:",
    "Picked up JAVA_TOOL_OPTIONS:",
)


def _pump(source: int, target: int) -> None:
    """Copy lines from ``source`` to ``target`` without the JVM's start-up notices; never blocks the writer."""
    with os.fdopen(source, "rb", closefd=True) as lines:
        for line in lines:
            if line.decode("utf-8", "replace").startswith(JVM_NOTICES):
                continue
            with contextlib.suppress(OSError):
                os.write(target, line)


@contextlib.contextmanager
def _jvm_stderr_filtered() -> Iterator[None]:
    """While a JVM starts inside: its stderr (for its whole life) passes through ``_pump``."""
    try:
        saved = os.dup(2)
    except OSError:  # no standard error to filter
        yield
        return
    read_end, write_end = os.pipe()
    sys.stderr.flush()
    os.dup2(write_end, 2)
    os.close(write_end)
    threading.Thread(target=_pump, args=(read_end, os.dup(saved)), name="jvm-stderr", daemon=True).start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def quiet_spark() -> Any:
    """The session of ``trendlake sql``, started with the JVM's log quiet (module doc, **Errors**).

    A new JVM logs at ``$TRENDLAKE_SPARK_LOG_LEVEL``, default OFF here (``jobs.spark``), and
    its start-up notices are dropped; PySpark's own error loggers (which print the Java stack
    of every failed query) are off. An already running session is used as it is.
    """
    from pyspark.logger import PySparkLogger
    from pyspark.sql import SparkSession
    from trendlake.jobs.spark import get_spark

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
    if SparkSession.getActiveSession() is not None:
        return get_spark()
    own_level = "TRENDLAKE_SPARK_LOG_LEVEL" not in os.environ
    if own_level:
        os.environ["TRENDLAKE_SPARK_LOG_LEVEL"] = "OFF"
    try:
        with _jvm_stderr_filtered():
            return get_spark()
    finally:
        if own_level:
            os.environ.pop("TRENDLAKE_SPARK_LOG_LEVEL", None)
