"""python -m benchmarksmarks: experiments that run compared strategies side by side (``python -m benchmarks``)."""
