"""Data tooling: stream generators, adapters for public event files, workload generators.

Nothing here is part of the runtime: the engine and the jobs never import it.
"""
