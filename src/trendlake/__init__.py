"""trendlake: shared event trend aggregation over historical event streams.

The installed namespace maps the repository's top-level folders:
``trendlake.optimizer`` (the language and planners), ``trendlake.engine`` (the
runtime), ``trendlake.jobs`` (Spark jobs, Delta storage, the CLI),
``trendlake.datagen`` (stream generators, file adapters, workload generators)
and ``trendlake.schemas`` (data contracts as data).
"""

__version__ = "0.2.0"
