"""Benchmarks of one sharing kind's internals (registered in ``benchmarks.suite`` like the experiments)."""
