"""Package layout: the repository's top-level folders installed as ``trendlake.*``.

``optimizer/`` -> ``trendlake.optimizer`` and so on (``package_dir``), so the
checkout keeps the design card's top level while nothing is installed under a
generic name. ``dags/``, ``tests/`` and ``benchmarks/`` are not installed.

Three C extensions, COGRA's count kernel, the type-grained shared Kleene pass and the
sequence pass over counts, are built where a compiler is at hand; without them the engine
runs the same computation in Python.
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
    package_data={
        "trendlake.schemas": ["*.json", "kinds/*.json", "streams/*.json", "workloads/*.etq", "workloads/*.md", "suites/*.json"],
        "trendlake.optimizer": ["*.lark"],
    },
    # COGRA's compiled count kernel: optional, the engine falls back to its Python kernel
    # where no C compiler is at hand (docs/engine.md, "COGRA")
    ext_modules=[
        Extension(
            "trendlake.engine.strategies.cogra._steps",
            ["engine/strategies/cogra/_steps.c"],
            depends=["engine/count128.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        # the type-grained shared Kleene pass over count states: optional likewise, the
        # shared executor falls back to its Python loop (docs/engine.md, "Shared Kleene execution")
        Extension(
            "trendlake.engine.shared.kleene._typed",
            ["engine/shared/kleene/_typed.c"],
            depends=["engine/count128.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        # the sequence (GLORIA) pass over count states: optional likewise, the sequence
        # executor falls back to its Python pass (docs/engine.md, "Shared sequence execution")
        Extension(
            "trendlake.engine.shared.sequence._counts",
            ["engine/shared/sequence/_counts.c"],
            depends=["engine/count128.h"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
    ],
)
