"""Airflow for DAG tests: a throw-away AIRFLOW_HOME on SQLite, set before Airflow is imported."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
AIRFLOW_HOME = Path(tempfile.mkdtemp(prefix="trendlake-airflow-"))

if "airflow" not in sys.modules:
    os.environ.update({
        "AIRFLOW_HOME": str(AIRFLOW_HOME),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{AIRFLOW_HOME / 'airflow.db'}",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
    })


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """A migrated metadata database with the Spark pool (the same steps as `trendlake demo`)."""
    from trendlake.jobs.demo import prepare_airflow

    prepare_airflow()
    return AIRFLOW_HOME
