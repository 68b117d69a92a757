"""Data tooling: stream generators, adapters for public event files, workload generators.

``streams`` (``trendlake generate``), ``adapters`` (``trendlake adapt``) and
``workloads`` (``trendlake workload``) are packages with one module per
stream model, source or paper and a registry each (``STREAMS``,
``ADAPTERS``, ``KINDS``); docs/generators.md describes them. The engine never
imports this package; the jobs only for those commands and ``trendlake demo``'s
events.
"""
