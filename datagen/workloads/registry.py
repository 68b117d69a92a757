"""The registry of workload kinds: ``KINDS`` maps a kind name to its ``Kind`` (one module per paper)."""

from __future__ import annotations

from trendlake.datagen.workloads import gloria, hamlet, sharon, weaveshare
from trendlake.datagen.workloads.common import Kind

KINDS: dict[str, Kind] = {**hamlet.KINDS, **sharon.KINDS, **gloria.KINDS, **weaveshare.KINDS}
