"""``python -m trendlake``: the command line."""

import sys

from trendlake.jobs.cli import main

sys.exit(main())
