"""CPU time of GLORIA's planners on generated workloads (not a test; no assertion).

``python scripts/gloria_plan_time.py [--queries 100] [--seeds 5]`` prints, per workload,
the CPU seconds of building the model from the query entries and of ``gloria``,
``gloria-noprune`` and ``gloria-greedy``, their plan costs and the search's counts.
Workloads: queries over 30 event types, each a slice of one of 10 backbones of 8 types
(so that they share), every 7th with a flat or nested Kleene pair (SEQ:Kleene about
6:1), windows of 10 or 5 minutes, rates 5-200 per window. Parsing is not timed.
"""

from __future__ import annotations

import argparse
import random
import time

from trendlake.optimizer import compile_workload
from trendlake.optimizer.gloria import from_entries, greedy, optimize
from trendlake.optimizer.plan import query_entry


def workload(n: int, seed: int) -> tuple[str, dict[str, float]]:
    rnd = random.Random(seed)
    types = [f"T{i}" for i in range(30)]
    backbones = [rnd.sample(types, 8) for _ in range(10)]
    queries = []
    for i in range(n):
        bb = rnd.choice(backbones)
        lo = rnd.randrange(0, 5)
        items = list(bb[lo:rnd.randrange(lo + 3, 9)])
        if i % 7 == 0:
            k = rnd.randrange(0, len(items) - 1)
            x, y = items[k], items[k + 1]
            items[k:k + 2] = [rnd.choice([f"SEQ({x}, {y})+", f"SEQ({x}, {y}+)+"])]
        window = rnd.choice(["10 minutes", "10 minutes", "5 minutes"])
        queries.append(f"QUERY q{i} RETURN COUNT(*) PATTERN SEQ({', '.join(items)}) WITHIN {window};")
    return "\n".join(queries), {t: float(rnd.choice([5, 10, 20, 50, 100, 200])) for t in types}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    for seed in range(args.seeds):
        text, rates = workload(args.queries, seed)
        entries = [query_entry(q) for q in compile_workload(text).queries]
        t0 = time.process_time()
        wl = from_entries(entries, rates)
        t1 = time.process_time()
        best = optimize(wl)
        t2 = time.process_time()
        full = optimize(wl, prune=False)
        t3 = time.process_time()
        greed = greedy(wl)
        t4 = time.process_time()
        print(f"seed {seed}: model {t1 - t0:.3f}s gloria {t2 - t1:.3f}s noprune {t3 - t2:.3f}s "
              f"greedy {t4 - t3:.3f}s | cost gloria {best.cost:.0f} noprune {full.cost:.0f} "
              f"greedy {greed.cost:.0f} none {best.non_shared_cost:.0f} | nodes "
              f"{best.stats.nodes_generated}/{full.stats.nodes_generated} pruned {best.stats.nodes_pruned} "
              f"exact {best.stats.exact}")


if __name__ == "__main__":
    main()
