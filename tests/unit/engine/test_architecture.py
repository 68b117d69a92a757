"""The engine's module structure: no import cycles inside ``engine/``, no module importing
another module's private (``_name``) names, no pipeline or compiler imports, building
blocks and shared executors that import no strategy, strategies that import no other
strategy, and no function longer than a screen (``MAX_LINES``).

Every ``.py`` file under ``engine/`` is parsed (nothing is imported); every
import statement counts, also those inside functions. ``import a.b`` and
``from a import b`` (b a module) are edges to that module; ``from a import
name`` is an edge to ``a``. Implicit parent-package imports are not edges.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[3] / "engine"
PACKAGE = "trendlake.engine"
FORBIDDEN = (
    "trendlake.optimizer",
    "trendlake.jobs",
    "trendlake.datagen",
    "pyspark",
    "airflow",
    "deltalake",
    "great_expectations",
)


def modules(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``root``: Python files, and the C
    sources setup.py builds into extension modules of the same name."""
    out = {}
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.c")]):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join([package, *parts])] = path
    return out


def _resolve(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


class Imports:
    """What one module imports: target modules, names taken from modules, module aliases."""

    def __init__(self, name: str, path: Path, known: set[str]) -> None:
        self.name = name
        self.targets: set[str] = set()
        self.private: list[str] = []
        if path.suffix == ".c":  # an extension module imports nothing of the package
            return
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        aliases: dict[str, str] = {}  # local name -> imported engine module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.targets.add(alias.name)
                    if alias.asname and alias.name in known:
                        aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(name, is_package, node)
                if source == "__future__":
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    if full in known:
                        self.targets.add(full)
                        aliases[alias.asname or alias.name] = full
                        continue
                    self.targets.add(source)
                    if (
                        source in known
                        and source != name
                        and alias.name.startswith("_")
                        and not alias.name.startswith("__")
                    ):
                        self.private.append(f"from {source} import {alias.name}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and aliases[node.value.id] != name
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                self.private.append(f"{aliases[node.value.id]}.{node.attr}")


def analyse(root: Path, package: str) -> dict[str, Imports]:
    found = modules(root, package)
    known = set(found)
    return {name: Imports(name, path, known) for name, path in found.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (a list of modules, first == last), or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def internal_graph(found: dict[str, Imports]) -> dict[str, set[str]]:
    return {name: {t for t in imp.targets if t in found and t != name} for name, imp in found.items()}


# ---------------------------------------------------------------------------
# the engine itself


ENGINE_IMPORTS = analyse(ENGINE, PACKAGE)


def test_engine_modules_are_found() -> None:
    assert f"{PACKAGE}.executor" in ENGINE_IMPORTS
    assert f"{PACKAGE}.strategies.cogra.kernel" in ENGINE_IMPORTS
    assert f"{PACKAGE}.strategies.cogra._steps" in ENGINE_IMPORTS  # a C extension module


def test_no_import_cycle_inside_the_engine() -> None:
    cycle = find_cycle(internal_graph(ENGINE_IMPORTS))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_module_imports_another_modules_private_names() -> None:
    found = {name: imp.private for name, imp in ENGINE_IMPORTS.items() if imp.private}
    assert not found, found


@pytest.mark.parametrize("forbidden", FORBIDDEN)
def test_engine_never_imports_the_pipeline_or_the_compiler(forbidden: str) -> None:
    found = {
        name: sorted(t for t in imp.targets if t == forbidden or t.startswith(forbidden + "."))
        for name, imp in ENGINE_IMPORTS.items()
    }
    assert not {k: v for k, v in found.items() if v}


def test_building_blocks_import_no_strategy_or_executor() -> None:
    blocks = ("aggregates", "columns", "negation", "timeline", "vertices", "expr", "query",
              "results", "plan", "errors", "layout", "numbers", "semantics", "timestamps")
    upper = (f"{PACKAGE}.strategies", f"{PACKAGE}.executor")
    for name, imp in ENGINE_IMPORTS.items():
        rest = name[len(PACKAGE) + 1:]
        if rest.split(".")[0] not in blocks:
            continue
        bad = sorted(t for t in imp.targets if any(t == u or t.startswith(u + ".") for u in upper))
        assert not bad, f"{name} imports {bad}"


def test_shared_executors_import_building_blocks_never_a_strategy() -> None:
    upper = (f"{PACKAGE}.strategies", f"{PACKAGE}.executor")
    shared = [name for name in ENGINE_IMPORTS if name.startswith(f"{PACKAGE}.shared")]
    assert f"{PACKAGE}.shared.kleene.typed" in shared
    for name in shared:
        bad = sorted(t for t in ENGINE_IMPORTS[name].targets if any(t == u or t.startswith(u + ".") for u in upper))
        assert not bad, f"{name} imports {bad}"


def imports_between_strategies(found: dict[str, Imports], package: str) -> list[str]:
    """``X imports Y`` for every module of strategy X (``<package>.strategies.X``, a module
    or a package) importing another strategy or the registry (``<package>.strategies``)."""
    registry = f"{package}.strategies"
    out = []
    for name, imp in sorted(found.items()):
        if not name.startswith(registry + "."):
            continue
        own = ".".join(name.split(".")[: len(registry.split(".")) + 1])
        for target in sorted(imp.targets):
            if target == registry or (target.startswith(registry + ".")
                                      and not (target == own or target.startswith(own + "."))):
                out.append(f"{name} imports {target}")
    return out


def test_no_strategy_imports_another() -> None:
    assert f"{PACKAGE}.strategies.cogra.kernel" in ENGINE_IMPORTS
    assert not imports_between_strategies(ENGINE_IMPORTS, PACKAGE)


# functions longer than a screen: none in the engine
MAX_LINES = 80


def long_functions(root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """``path:qualified.name`` -> lines (its ``def`` line to its last) of every function
    or method under ``root`` longer than ``limit`` lines, nested ones included."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    if lines > limit:
                        out[f"{where}:{name}"] = lines
                visit(child, name + ".", where)
            else:
                visit(child, prefix, where)

    for path in sorted(root.rglob("*.py")):
        visit(ast.parse(path.read_text(), filename=str(path)), "", path.relative_to(root).as_posix())
    return out


def test_no_function_in_the_engine_is_longer_than_a_screen() -> None:
    assert long_functions(ENGINE) == {}


REPO = ENGINE.parent
# the plan reader, the executor, eval, explain and the benchmark harness reach a sharing kind
# only through the registry (engine.shared.KINDS): no kind's name or module in them (a kind's
# own calibration benchmark, such as benchmarks/calibration/typed_sharing.py, measures its internals)
KIND_FREE = ("engine/plan.py", "engine/executor.py", "jobs/evaluate.py", "jobs/explain.py", "jobs/cli",
             "benchmarks/experiments",
             "benchmarks/suite.py", "benchmarks/__main__.py")


@pytest.mark.parametrize("where", KIND_FREE)
def test_the_plan_reader_executor_and_tools_never_name_a_kind(where: str) -> None:
    import re

    from trendlake.engine.shared import KINDS

    path = REPO / where
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    assert files
    names = "|".join(KINDS)
    # a kind's name as a value (not a subscript: a negation's "sequence" field is no kind)
    pattern = re.compile(rf"""(?<!\[)["']({names})["']|shared\.({names})\b""")
    found = [f"{f.relative_to(REPO)}:{n}" for f in files
             for n, line in enumerate(f.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, found


# ---------------------------------------------------------------------------
# the checks catch what they are meant to catch


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    root = write(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "from pkg.b import f\n",
        "b.py": "def f():\n    from pkg import c\n    return c\n",
        "c.py": "import pkg.a\n",
    })
    cycle = find_cycle(internal_graph(analyse(root, "pkg")))
    assert cycle is not None and set(cycle) == {"pkg.a", "pkg.b", "pkg.c"}


def test_a_tree_has_no_cycle(tmp_path: Path) -> None:
    root = write(tmp_path / "pkg", {
        "__init__.py": "from pkg.sub import x\n",
        "sub/__init__.py": "from pkg.sub.leaf import x\n",
        "sub/leaf.py": "from pkg import base\nx = 1\n",
        "base.py": "",
    })
    assert find_cycle(internal_graph(analyse(root, "pkg"))) is None


def test_private_imports_are_found(tmp_path: Path) -> None:
    root = write(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "_hidden = 1\n__version__ = 2\n",
        "b.py": "from pkg.a import _hidden, __version__\n",
        "c.py": "from pkg import a\nprint(a._hidden)\n",
        "d.py": "from .a import _hidden\n",
        "e.py": "from pkg.a import __version__\n",
    })
    found = analyse(root, "pkg")
    assert found["pkg.b"].private == ["from pkg.a import _hidden"]
    assert found["pkg.c"].private == ["pkg.a._hidden"]
    assert found["pkg.d"].private == ["from pkg.a import _hidden"]
    assert found["pkg.e"].private == []


def test_imports_between_strategies_are_found(tmp_path: Path) -> None:
    root = write(tmp_path / "pkg", {
        "__init__.py": "",
        "block.py": "",
        "strategies/__init__.py": "from pkg.strategies import a, b\n",
        "strategies/a.py": "from pkg import block\n",
        "strategies/b/__init__.py": "from pkg.strategies.b.inner import x\n",
        "strategies/b/inner.py": "def f():\n    from pkg.strategies.a import y\n",
        "strategies/c.py": "from pkg.strategies import b\n",
        "strategies/d.py": "import pkg.strategies\n",
    })
    assert imports_between_strategies(analyse(root, "pkg"), "pkg") == [
        "pkg.strategies.b.inner imports pkg.strategies.a",
        "pkg.strategies.c imports pkg.strategies.b",
        "pkg.strategies.d imports pkg.strategies",
    ]


def test_long_functions_are_found(tmp_path: Path) -> None:
    def body(n: int, indent: int) -> str:
        return "".join(f"{' ' * indent}x{i} = {i}\n" for i in range(n))

    root = write(tmp_path / "pkg", {
        "a.py": f"def short():\n{body(5, 4)}\n\nclass C:\n    def long(self):\n{body(8, 8)}",
        "sub/b.py": f"def outer():\n    def inner():\n{body(8, 8)}    return inner\n",
    })
    assert long_functions(root, limit=6) == {"a.py:C.long": 9, "sub/b.py:outer": 11, "sub/b.py:outer.inner": 9}
