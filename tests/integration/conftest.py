"""Integration tiers: real Spark (local[2]) and Airflow (``dag.test()``)."""

import pytest


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for every Spark test of the run (trendlake's own settings)."""
    from trendlake.jobs.spark import get_spark

    return get_spark("local[2]", app_name="trendlake-tests")
