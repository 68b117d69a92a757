"""The benchmark experiments, one module each, registered by name in ``benchmarks.suite``.

Each module defines ``TITLE`` and ``run(ctx: common.Context) -> dict`` (the
JSON record; ``common.Recorder.result`` builds it). Strategies are named in
``common.STRATEGIES``.
"""
