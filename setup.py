"""Package layout: the repository's top-level folders installed as ``trendlake.*``.

``optimizer/`` -> ``trendlake.optimizer`` and so on (``package_dir``), so the
checkout keeps the design card's top level while nothing is installed under a
generic name. ``dags/``, ``tests/`` and ``benchmarks/`` are not installed.
"""

from setuptools import find_packages, setup

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
        "trendlake.schemas": ["*.json", "streams/*.json", "workloads/*.etq", "workloads/*.md", "suites/*.json"],
        "trendlake.optimizer": ["*.lark"],
    },
)
