"""Test-wide settings: hypothesis profiles (``ci`` default, ``thorough`` for long local runs)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for every Spark test of the run (trendlake's own settings)."""
    from jobs.spark import get_spark

    return get_spark("local[2]", app_name="trendlake-tests")
