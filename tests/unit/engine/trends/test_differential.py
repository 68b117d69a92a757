"""The drill-down library against the oracle's enumeration of every trend.

On random queries and streams (``tests.oracle.generate.cases``: every pattern
shape, negation position, predicate class and semantics), per (group, window):

* M-CET, T-CET and H-CET (no cut, random cuts of Def. 6.2, random time-centric
  cuts) give exactly the oracle's trends (``tests.oracle.trends``: enumerated
  by brute force), and exactly its complete ones (filtered by comparing every
  trend with every other);
* the number of trends equals the aggregation's ``COUNT(*)`` (``engine.evaluate``)
  for that window, and the windows listed by ``window_counts`` are the
  windows with a trend;
* every trend is one of the oracle's (it satisfies the query);
* M-CET and H-CET list them in the same lexicographic order, T-CET by their
  last vertex, and each
  algorithm spends exactly what the cost model counted before it ran.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.events import make_events
from trendlake.engine.trends import drill, h_cet, m_cet, t_cet, window_counts
from trendlake.engine.trends.cost import cost
from trendlake.engine.trends.partitioning import valid_cuts

from tests.oracle import TooManyTrends, queries
from tests.oracle.generate import Case, cases
from tests.oracle.trends import complete, window_trends
from tests.randomized import drawn_on_a_fixed_seed
from tests.unit.engine.engine_adapter import run_engine
from trendlake import engine, optimizer

STATS: Counter[str] = Counter()


def steps(graph: Any, found: list[tuple[int, ...]]) -> list[tuple[tuple[int, str], ...]]:
    return [tuple((graph.vertices[v][0].seq, graph.vertices[v][1]) for v in p) for p in found]


def engine_counts(plan: dict[str, Any], rows: list[dict[str, Any]], q: Any) -> dict[tuple[Any, int], int]:
    out = {}
    for r in run_engine(plan, rows, "auto"):
        group = tuple(r[a] for a in q.group_by)
        out[(group, r["window_start"] // q.slide)] = r["COUNT(*)"]
    return out


def check_algorithms(paths: Any, graph: Any, want: set[Any], rng: random.Random) -> None:
    """Every algorithm lists ``want``; its stats equal the cost model's counts."""
    size = (len(graph.vertices), graph.edges)
    stats: dict[str, int] = {}
    m = list(m_cet(paths, stats))
    assert set(steps(graph, m)) == want and len(m) == len(want)
    assert m == sorted(m), "M-CET lists trends in lexicographic order"
    model = cost(paths, "m-cet", (), size)
    assert (stats["steps"], len(m)) == (model.steps, model.trends)
    stats = {}
    t = list(t_cet(paths, stats))
    assert set(steps(graph, t)) == want and len(t) == len(want)
    assert [p[-1] for p in t] == sorted(p[-1] for p in t), "T-CET lists trends by their last vertex"
    model = cost(paths, "t-cet", (), size)
    assert (stats["edges"], stats["updates"], stats["stored"], stats["occurrences"]) == (
        model.edges, model.updates, model.stored, model.occurrences)
    valid = valid_cuts(paths)
    every = list(range(paths.groups - 1))
    plans = [(), tuple(sorted(rng.sample(valid, rng.randint(0, len(valid))))),
             tuple(sorted(rng.sample(every, rng.randint(0, len(every)))))]
    for cuts in plans:
        stats = {}
        h = list(h_cet(paths, cuts, stats))
        assert h == m, f"H-CET under cuts {cuts} differs from M-CET"
        model = cost(paths, "h-cet", cuts, size)
        for key in ("edges", "updates", "stored", "occurrences", "stitches", "prefixes", "prefix_occurrences"):
            assert stats[key] == getattr(model, key), (key, cuts)
        assert model.trends == len(h)


def check_case(case: Case, seed: int) -> None:
    plan = optimizer.build_plan(optimizer.compile_workload(case.text))
    q = engine.load_plan(plan).queries["q"]
    events = make_events(case.rows)
    STATS["cases"] += 1
    STATS.update(sorted(case.features))
    try:
        want = window_trends(queries(case.text, plan)[0], case.rows, budget=20_000)
    except TooManyTrends:
        STATS["oracle budget exceeded"] += 1
        return
    counts = engine_counts(plan, case.rows, q)
    listed = window_counts(q, events)
    assert listed == counts, "the windows listed are the aggregation's rows"
    assert set(listed) == set(want)
    rng = random.Random(seed)
    for (group, k), found in sorted(want.items(), key=repr):
        every = set(found)
        d = drill(q, events, group, k, complete=False)
        assert d.count_all == len(every) == counts[(group, k)]
        assert {tuple((e.seq, v) for e, v in t) for t in d.trends()} == every
        check_algorithms(d.paths, d.graph, every, rng)
        cets = set(complete(found))
        c = drill(q, events, group, k)
        assert c.count == len(cets)
        check_algorithms(c.paths, c.graph, cets, rng)
        STATS["windows"] += 1
        STATS["incomplete trends"] += len(every) - len(cets)


@settings(max_examples=max(40, settings().max_examples // 3))  # 50 in CI; the thorough profile runs 1,000
@given(case=cases(), seed=st.integers(0, 2**32))
def check_all(case: Case, seed: int) -> None:
    check_case(case, seed)


def test_every_algorithm_equals_the_oracle() -> None:
    STATS.clear()
    check_all()
    report = ", ".join(f"{k}: {v}" for k, v in sorted(STATS.items()))
    print(f"\ntrends differential: {report}")


def test_the_fixed_cases_reach_every_feature() -> None:
    """The same checks on cases drawn on the fixed seed (``tests.randomized``), so that what
    they reach is asserted on the same cases every run, never on an unlucky random draw."""
    STATS.clear()
    drawn_on_a_fixed_seed(st.tuples(cases(), st.integers(0, 2**32)), lambda drawn: (check_case(*drawn), ())[1], 40)
    report = ", ".join(f"{k}: {v}" for k, v in sorted(STATS.items()))
    # not empty against empty: windows with trends, some of them incomplete
    assert STATS["windows"] >= STATS["cases"], report
    for feature in ("aliases", "adjacent", "contiguous", "skip-till-next-match"):
        assert STATS[feature] > 0, report
    # a negation at either end: each end alone is drawn in about one case in twenty
    assert STATS["not_leading"] + STATS["not_trailing"] > 0, report
    assert STATS["incomplete trends"] > 0, report
