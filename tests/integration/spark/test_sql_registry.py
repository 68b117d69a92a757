"""Every built-in function of Spark's registry against the read-only check (real Spark, nothing executed).

The allow-list of ``jobs.sql_allowlist`` is explicit; these tests show that what it
allows is side-effect free, by a rule that does not use the list (``reaches_outside``):
an analysed expression tree -- followed into subqueries and into the implementation
Spark substitutes for a built-in (``RuntimeReplaceable.replacement``) -- must hold no
``CallMethodViaReflection``, no UDF (``UserDefinedExpression``), no object expression
calling a method outside ``org.apache.spark`` (``StaticInvoke``/``Invoke`` of another
class, ``NewInstance``, ...), and the functions known to read files by an argument
(``from_protobuf``'s descriptor, ``from_xml``'s XSD option, Avro) must be refused.

Each function is resolved through the example queries of its own documentation
(``ExpressionInfo.getExamples``), or ``SELECT f('1')`` for the casts that have none.
Analysis resolves without running anything; functions off the list are refused by
the parsed pass, before analysis (``from_protobuf`` reads its file *during*
analysis). A function added to the list without an example that resolves here
fails the test: the list holds nothing that was not checked.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from trendlake.jobs.sql import (
    CATALYST,
    SqlError,
    SqlRefused,
    _at,
    _seq,
    check_read_only,
    expression_tree,
)
from trendlake.jobs.sql_allowlist import EXPRESSIONS, FUNCTIONS

pytestmark = pytest.mark.spark

# functions that read a file named by an argument or option, or reach a connector
READ_FILES = {"from_protobuf", "to_protobuf", "from_avro", "to_avro", "schema_of_avro", "from_xml", "schema_of_xml"}
REFLECTION = {"reflect", "java_method", "try_reflect"}
E = CATALYST + "expressions."


class Oracle:
    """Classes of the JVM, asked once each: what is reflection, a UDF, an object call, a replacement."""

    def __init__(self, spark: Any) -> None:
        self.jvm = spark.sparkContext._jvm
        self.loader = spark._jsparkSession.sessionState().getClass().getClassLoader()
        self.bases = {name: self.cls(E + name) for name in (
            "CallMethodViaReflection", "UserDefinedExpression", "RuntimeReplaceable", "InheritAnalysisRules",
            "PlanExpression", "Expression")}
        self.kinds: dict[str, set[str]] = {}

    def cls(self, name: str) -> Any:
        return self.jvm.java.lang.Class.forName(name, False, self.loader)

    def kind(self, key: str) -> set[str]:
        if key not in self.kinds:
            cls = self.cls(key if key.startswith(("org.", "java.", "scala.")) else CATALYST + key)
            self.kinds[key] = {name for name, base in self.bases.items() if base.isAssignableFrom(cls)}
        return self.kinds[key]

    def reaches_outside(self, plan: Any) -> list[str]:
        """What in the analysed ``plan`` reaches outside Spark: reflection, UDFs, non-Spark methods."""
        found: list[str] = []
        plans = [plan]
        while plans:
            node = plans.pop()
            todo = [self.jvm.org.apache.spark.sql.catalyst.expressions.CreateArray(node.expressions(), False)]
            while todo:
                expr = todo.pop()
                for key, path in expression_tree(expr):
                    kind = self.kind(key)
                    if kind & {"CallMethodViaReflection", "UserDefinedExpression"}:
                        found.append(key)
                    if key.startswith("expressions.objects."):
                        obj = _at(expr, path)
                        if key == "expressions.objects.StaticInvoke":
                            target = str(obj.staticObject().getName())
                        elif key == "expressions.objects.Invoke":
                            # a method of an object, or of one of Spark's own values (UTF8String, ...)
                            data_type = obj.targetObject().dataType()
                            target = (str(data_type.cls().getName())
                                      if str(data_type.getClass().getSimpleName()) == "ObjectType"
                                      else f"org.apache.spark.unsafe.types ({data_type.typeName()} value)")
                        else:
                            target = key
                        if not target.startswith("org.apache.spark."):
                            found.append(f"{key} of {target}")
                    if "PlanExpression" in kind:
                        plans.append(_at(expr, path).plan())
                    if "RuntimeReplaceable" in kind and "InheritAnalysisRules" not in kind:
                        todo.append(_at(expr, path).replacement())  # (the inheriting ones have it as child)
            plans.extend(_seq(node.children()))
        return found


def analysed(spark: Any, sql: str) -> Any:
    state = spark._jsparkSession.sessionState()
    skip = spark.sparkContext._jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    return state.executePlan(state.sqlParser().parsePlan(sql), skip).analyzed()


def builtins(spark: Any) -> dict[str, tuple[str, list[str]]]:
    """Every built-in of the session's registry: its registry class and its example queries."""
    registry = spark._jsparkSession.sessionState().functionRegistry()
    out = {}
    for ident in _seq(registry.listFunction()):
        if str(ident.database().getOrElse(None)) != "builtin":
            continue
        info = registry.lookupFunction(ident).get()
        name = str(ident.funcName())
        queries = re.findall(r"^\s*> (SELECT .*?);\s*$", str(info.getExamples() or ""), re.M)
        out[name] = (str(info.getClassName()).removeprefix(CATALYST), queries or [f"SELECT {name}('1')"])
    return out


@pytest.fixture(scope="module")
def oracle(spark: Any) -> Oracle:  # noqa: ANN001
    return Oracle(spark)


def test_the_oracle_sees_reflection_and_udfs(spark: Any, oracle: Oracle) -> None:
    call = "'java.lang.System', 'getProperty', 'user.home'"
    for sql in (f"SELECT reflect({call})", f"SELECT try_reflect({call})", f"SELECT IDENTIFIER('java_' || 'method')({call})",
                f"SELECT (SELECT max(h) FROM (SELECT transform(array(1), x -> reflect({call})) AS h))"):
        assert oracle.reaches_outside(analysed(spark, sql)) == ["expressions.CallMethodViaReflection"], sql
    spark.udf.register("registry_probe_udf", lambda x: x)
    try:
        assert oracle.reaches_outside(analysed(spark, "SELECT registry_probe_udf(1)")) == [
            "expressions.PythonUDF"]
    finally:
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS registry_probe_udf")


def test_the_allow_list_names_only_plain_spark_expressions(oracle: Oracle) -> None:
    """Every listed class loads, and none is reflection, a UDF or an object call -- whatever example is used."""
    for key in sorted(FUNCTIONS | EXPRESSIONS):
        kind = oracle.kind(key)
        assert not kind & {"CallMethodViaReflection", "UserDefinedExpression"}, key
        assert not key.startswith("expressions.objects."), key
        assert "Expression" in kind or key.endswith("Builder"), key


def test_every_allowed_builtin_is_side_effect_free(spark: Any, oracle: Oracle) -> None:
    functions = builtins(spark)
    assert len(functions) > 400, len(functions)
    registry_classes = {cls for cls, _ in functions.values()}
    assert FUNCTIONS <= registry_classes, sorted(FUNCTIONS - registry_classes)  # nothing stale on the list
    allowed = {name for name, (cls, _) in functions.items() if cls in FUNCTIONS}
    assert not allowed & (READ_FILES | REFLECTION), sorted(allowed & (READ_FILES | REFLECTION))
    problems: list[str] = []
    checked: set[str] = set()  # registry classes of the functions whose example passed and was judged
    unresolved: list[str] = []  # functions no example of which resolves here (Spark rejects them all)
    unchecked: list[str] = []
    for name, (cls, queries) in sorted(functions.items()):
        if name not in allowed:
            # refused by name in the parsed pass: no example of it is analysed at all
            with pytest.raises(SqlRefused, match="not allowed in lake queries"):
                check_read_only(spark, f"SELECT `{name}`(1)", set())
            continue
        spark_rejects = True
        for sql in queries:
            try:
                plan = check_read_only(spark, sql, set())
            except SqlError:
                continue  # the example does not resolve here (a TIME literal, ...): try the next one
            except SqlRefused:
                spark_rejects = False
                continue  # the example also uses something refused (a table-valued function, ...)
            problems += [f"{name}: {sql}: {what}" for what in oracle.reaches_outside(plan)]
            checked.add(cls)
            break
        else:
            (unresolved if spark_rejects else unchecked).append(name)
    assert problems == []
    assert unchecked == [], f"allowed but no example passes the check: {unchecked}"
    # ``time(x)`` is a cast to TIME, off in this Spark: it cannot run here, and its class was judged
    assert [name for name in unresolved if functions[name][0] not in checked] == [], unresolved
