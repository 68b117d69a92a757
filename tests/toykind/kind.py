"""The engine side of the toy ``twins`` kind."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendlake.engine.query import CompiledQuery
from trendlake.engine.shared import GroupInput, GroupResults
from trendlake.engine.strategies import STRATEGIES

SAME_EXCEPT = ("name", "source")  # what twins may differ in


def twin_key(entry: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in entry.items() if k not in SAME_EXCEPT}, sort_keys=True)


@dataclass
class TwinStats:
    computed: int = 0  # queries evaluated
    copied: int = 0  # queries given another's results


class TwinsKind:
    name = "twins"
    body_schema = json.loads((Path(__file__).parent / "twins.json").read_text())

    def check(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
        runs = group["body"]["runs"]
        if runs not in group["queries"]:
            return [f"runs {runs}, which is not one of its queries"]
        return [f"query {q} is not a twin of {runs}" for q in group["queries"]
                if twin_key(entries[q]) != twin_key(entries[runs])]

    def supports(self, group: Mapping[str, Any], queries: Sequence[CompiledQuery]) -> str | None:
        cogra = STRATEGIES["cogra"]
        bad = [q.name for q in queries if not cogra.columnar(q)]
        return f"queries {bad} are not type-grained" if bad else None

    def new_stats(self, per_window: bool = False) -> TwinStats:
        return TwinStats()

    def run(self, group: Mapping[str, Any], data: GroupInput, stats: Any) -> GroupResults:
        first = data.queries[0]
        run_partitions = STRATEGIES["cogra"].run_partitions
        assert run_partitions is not None
        got = run_partitions(first, data.pruned(first.name), data.idx, data.ts, data.attrs, data.starts)
        if stats is not None:
            stats.computed += 1
            stats.copied += len(data.queries) - 1
        return {q.name: (got if q is first else copy.deepcopy(got)) for q in data.queries}

    def summary(self, stats: TwinStats) -> str:
        return f"{stats.computed} computed, {stats.copied} copied"

    def report(self, group: Mapping[str, Any], stats: TwinStats) -> dict[str, Any]:
        return {"computed": stats.computed, "copied": stats.copied}

    def describe(self, group: Mapping[str, Any]) -> list[str]:
        return [f"{len(group['queries'])} twins of {group['body']['runs']}, computed once"]

    def template(self, group: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return None

    def upgrade(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], version: int) -> Mapping[str, Any]:
        return group  # a kind of format version 3


TWINS = TwinsKind()
