"""What pyproject.toml cannot declare: the package layout and the C extensions.

The layout: the repository's top-level folders are installed as ``trendlake.*``
(``optimizer/`` -> ``trendlake.optimizer`` and so on, through ``package_dir``), so the
checkout keeps the design card's top level while nothing is installed under a generic
name; their sub-packages are found here, since setuptools' static discovery cannot add
the ``trendlake.`` prefix. ``dags/``, ``tests/`` and ``benchmarks/`` are not installed.

Four C extensions, COGRA's count kernel, the type-grained shared Kleene pass, the
sequence pass over counts and the panes pass, are built where a compiler is at hand; without them the engine
runs the same computation in Python. Everything else (metadata, dependencies, package
data) is in pyproject.toml.
"""

from setuptools import Extension, find_packages, setup

FOLDERS = ("optimizer", "engine", "jobs", "datagen", "schemas")

package_dir = {"trendlake": "src/trendlake"}
packages = ["trendlake"]
for folder in FOLDERS:
    package_dir[f"trendlake.{folder}"] = folder
    packages.append(f"trendlake.{folder}")
    packages.extend(f"trendlake.{folder}.{sub}" for sub in find_packages(folder))

setup(
    packages=packages,
    package_dir=package_dir,
    ext_modules=[
        # COGRA's compiled count kernel: optional, the engine falls back to its Python kernel
        # where no C compiler is at hand (docs/engine.md, "COGRA")
        Extension(
            "trendlake.engine.strategies.cogra._steps",
            ["engine/strategies/cogra/_steps.c"],
            depends=["engine/count128.h", "engine/pymodule.h", "engine/steps.h", "engine/count_pass.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        # the type-grained shared Kleene pass over count states: optional likewise, the
        # shared executor falls back to its Python loop (docs/engine.md, "Shared Kleene execution")
        Extension(
            "trendlake.engine.shared.kleene._typed",
            ["engine/shared/kleene/_typed.c"],
            depends=["engine/count128.h", "engine/pymodule.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        # the sequence (GLORIA) pass over count states: optional likewise, the sequence
        # executor falls back to its Python pass (docs/engine.md, "Shared sequence execution")
        Extension(
            "trendlake.engine.shared.sequence._counts",
            ["engine/shared/sequence/_counts.c"],
            depends=["engine/count128.h", "engine/pymodule.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        # the panes pass (queries that differ only in their windows): optional likewise; without
        # it the planners do not plan ``panes`` groups (docs/engine.md, "Shared panes")
        Extension(
            "trendlake.engine.shared.panes._panes",
            ["engine/shared/panes/_panes.c"],
            depends=["engine/count128.h", "engine/pymodule.h", "engine/steps.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        # the subsequence kind's prefix pass (a trie of sequence queries on the count pass):
        # optional likewise, the sequence executor runs such groups without it
        Extension(
            "trendlake.engine.shared.subsequence._prefix",
            ["engine/shared/subsequence/_prefix.c"],
            depends=["engine/count128.h", "engine/pymodule.h", "engine/steps.h", "engine/count_pass.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
    ],
)
