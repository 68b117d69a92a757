"""``python -m benchmarks NAME [--size ...]``: the benchmark suite (see benchmarks/README.md)."""

import sys

from benchmarks.suite import main

sys.exit(main())
