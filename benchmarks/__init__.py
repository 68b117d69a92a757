"""trendlake benchmarks: experiments that run compared strategies side by side (``trendlake bench``)."""
