"""What every experiment shares: the run context, strategies by name, data, timing, agreement.

A **strategy** is referenced by name (``STRATEGIES``), built from what exists:

* ``engine`` strategies, one per engine strategy of ``engine.STRATEGIES``
  (``twostep``, ``greta``, ``cogra``), run each query of the workload alone on
  the unshared plan ``optimizer.build_plan(optimizer.compile_workload(text))``;
* ``shared`` strategies, one per planner of ``optimizer.planners.PLANNERS``
  (``hamlet`` is named ``hamlet-dynamic``), plan the workload from the
  statistics of the events and run that plan with the engine;
* ``planner`` strategies (``optimizer:<planner>``, one per planner) only time
  the optimizer (``build_plan``) and record the plan's estimated cost;
* ``forced`` strategies put every sharable set into one group whatever the
  cost model says (the ``share-all`` planner's groups), and ``cli`` ones run
  ``trendlake eval`` end to end.

A name that is not in ``STRATEGIES`` is an error (``strategy``): an experiment
measures only what is built.

Every point of a figure runs the compared strategies side by side in one
process on the same events, ``repeat`` times, and checks that the strategies
that ran return the same rows.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import math
import random
import statistics
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trendlake.engine.events import Event, events_from_arrow
from trendlake.engine.results import OVERFLOW, is_equal
from trendlake.optimizer.errors import OptimizerError

from trendlake import engine, optimizer

START_US = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000
SIZES = ("smoke", "small", "full")

OK = "ok"


# ---- run context -----------------------------------------------------------------


@dataclass
class Context:
    """One experiment run: its size, repeats, seed and the log line printer."""

    name: str
    size: str = "smoke"
    repeat: int = 3
    seed: int = 0
    log: Callable[[str], None] = print
    stream: str = "rides"
    options: argparse.Namespace = field(default_factory=argparse.Namespace)  # the experiment's own
    record_name: str = ""  # the record's file name (without .json): the experiment's, or its variant's
    out: Path = Path("out/bench")

    def __post_init__(self) -> None:
        self.record_name = self.record_name or self.name

    def pick(self, smoke: Any, small: Any, full: Any) -> Any:
        """The value for this run's size."""
        return {"smoke": smoke, "small": small, "full": full}[self.size]

    def option(self, name: str, default: Any = None) -> Any:
        """The experiment's option ``name`` when given (not None), else ``default`` (often a ``pick``)."""
        value = getattr(self.options, name, None)
        return default if value is None else value


# ---- strategies --------------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    name: str
    label: str
    kind: str  # engine | shared | planner | forced (every sharable set shared, no planner) | cli
    engine_strategy: str = "auto"
    planner: str | None = None
    note: str = ""

    def status(self) -> dict[str, Any]:
        out = {"label": self.label, "kind": self.kind, "status": OK}
        if self.planner:
            out["planner"] = self.planner
        if self.kind == "engine":
            out["engine_strategy"] = self.engine_strategy
        if self.note:
            out["note"] = self.note
        return out


# how a few strategies read in a figure's legend (others: "<planner> plan", "<planner> optimizer")
ENGINE_LABELS = {
    "twostep": ("Two-step (construct every trend, then aggregate)",
                "the brute-force reference; exponential in events per window"),
    "greta": ("GRETA, each query alone", ""),
    "cogra": ("COGRA, each query alone", ""),
}
SHARED_NAMES = {"hamlet": "hamlet-dynamic"}  # the strategy of planner hamlet, as the records name it
PLANNER_LABELS = {
    "none": "no sharing",
    "hamlet": "Hamlet, dynamic per-burst sharing",
    "hamlet-static": "Hamlet executor, static sharing decisions",
    "gloria": "GLORIA",
    "gloria-noprune": "GLORIA without pruning (NoPrune)",
    "gloria-greedy": "GLORIA's Greedy",
    "sharon": "Sharon (optimal: reduction and plan finder)",
    "sharon-greedy": "Sharon's greedy (GWMIN)",
    "sharon-exhaustive": "Sharon's exhaustive search",
    "shared-panes": "Weave Share's Shared: one group over the panes of all its windows",
    "weaveshare": "Weave Share: execution trees by the greedy merge",
    "share-all": "every sharable set shared",
    "auto": "auto: the plan of least estimated cost among the planners",
}


def registered_strategies() -> dict[str, Strategy]:
    """Every strategy this build can run: engine strategies and registered planners."""
    from trendlake.optimizer.planners import PLANNERS

    out = []
    for name in engine.STRATEGIES:
        label, note = ENGINE_LABELS.get(name, (f"{name}, each query alone", ""))
        out.append(Strategy(name, label, "engine", engine_strategy=name, note=note))
    for planner in PLANNERS:
        label = PLANNER_LABELS.get(planner, planner)
        if planner != "none":
            out.append(Strategy(SHARED_NAMES.get(planner, planner), f"{label} plan", "shared", planner=planner))
        out.append(Strategy(f"optimizer:{planner}", f"{label} optimizer", "planner", planner=planner))
    if "share-all" in PLANNERS:
        note = "measures the shared executor whatever the cost model says"
        out += [Strategy("shared-all-static", "every sharable set shared, every burst", "forced",
                         planner="static", note=note),
                Strategy("shared-all-dynamic", "every sharable set shared, per-burst decision", "forced",
                         planner="dynamic", note=note)]
    out.append(Strategy("eval-none", "trendlake eval, planner none (each query alone)", "cli", planner="none",
                        note="the command end to end: reading the Parquet file, planning, evaluating, printing"))
    if "hamlet" in PLANNERS:
        out += [Strategy("eval-hamlet", "trendlake eval --planner hamlet (statistics of the file computed each run)",
                         "cli", planner="hamlet",
                         note="the command end to end, planning from the file's statistics included"),
                Strategy("eval-hamlet-plan", "trendlake eval --plan (a hamlet plan made once, before timing)", "cli",
                         planner="hamlet-plan", note="the command end to end with a stored plan")]
    return {s.name: s for s in out}


STRATEGIES: dict[str, Strategy] = registered_strategies()


def strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown benchmark strategy {name!r} (known: {', '.join(STRATEGIES)})") from None


def planner_strategies() -> list[str]:
    """``optimizer:<planner>`` for every registered planner: an optimizer figure times them all."""
    return [n for n, s in STRATEGIES.items() if s.kind == "planner"]


# ---- data --------------------------------------------------------------------------


def data_source(stream: str = "rides") -> str:
    """``datagen.streams`` when it is importable and knows ``stream``, else the built-in fallback."""
    if importlib.util.find_spec("trendlake.datagen.streams") is None:
        return "builtin"
    streams = getattr(importlib.import_module("trendlake.datagen.streams"), "STREAMS", None)
    return "trendlake.datagen.streams" if streams is None or stream in streams else "builtin"


def preferred_stream(name: str, fallback: str = "rides") -> str:
    """``name`` when its stream schema is bundled, else ``fallback``."""
    from trendlake.schemas import has_stream

    return name if has_stream(name) else fallback


def builtin_rows(schema: dict[str, Any], n: int, seed: int, *, keys: int = 64, burst: float = 4.0,
                 weights: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Schema-driven bursty events: a burst is one type and one key for ~``burst`` events.

    Long attributes every type carries take values in ``[0, keys)``, string ones
    ``keys`` distinct values (or the schema's ``values``); other numeric
    attributes are uniform in the schema's [min, max] (default [0, 100]).
    """
    rng = random.Random(seed)
    types = list(schema["event_types"])
    attrs: dict[str, dict[str, Any]] = schema.get("attributes", {})
    w = [float((weights or {}).get(t, 1.0)) for t in types]

    def carried(spec: dict[str, Any], t: str) -> bool:
        c = spec.get("types", "*")
        return c == "*" or t in c

    key_attrs = [a for a, s in attrs.items() if s.get("types", "*") == "*" and s.get("type") in ("long", "string")]
    rows: list[dict[str, Any]] = []
    while len(rows) < n:
        t = rng.choices(types, w)[0]
        key = {}
        for a in key_attrs:
            spec = attrs[a]
            if spec["type"] == "long":
                key[a] = rng.randrange(keys)
            else:
                values = spec.get("values") or [f"{a}{i}" for i in range(keys)]
                key[a] = rng.choice(values)
        length = 1 + int(rng.expovariate(1.0 / max(burst - 1, 1e-9))) if burst > 1 else 1
        for _ in range(min(length, n - len(rows))):
            row: dict[str, Any] = {"type": t, **key}
            for a, spec in attrs.items():
                if a in key or not carried(spec, t):
                    continue
                kind = spec.get("type")
                lo = float(spec.get("min", 0))
                hi = float(spec.get("max", lo + 100))
                if kind == "double":
                    row[a] = round(rng.uniform(lo, hi), 3)
                elif kind == "long":
                    row[a] = rng.randint(int(lo), int(hi))
                elif kind == "boolean":
                    row[a] = rng.random() < 0.5
                elif kind == "string":
                    row[a] = rng.choice(spec.get("values") or ["a", "b", "c"])
            rows.append(row)
    return rows


def type_statistics(events: list[Event], pane_us: int) -> dict[str, Any]:
    """Statistics of the event types' rates only (per pane of ``pane_us``, bursts of one): what
    an optimizer-time figure plans from, without a per-query pass over the events."""
    if not events:
        return {"assumption": "uniform"}
    span = max(e.ts for e in events) - min(e.ts for e in events) + 1
    panes = max(1.0, span / pane_us)
    counts: dict[str, int] = {}
    for e in events:
        counts[e.type] = counts.get(e.type, 0) + 1
    return {"pane_us": pane_us, "types": {t: {"events": n, "rate_mean": n / panes, "rate_max": n}
                                         for t, n in sorted(counts.items())}}


def make_events(ctx: Context, n: int, span_s: float, *, seed: int | None = None, groups: int | None = None,
                group_attr: str | None = None, burst: float | None = None,
                weights: dict[str, float] | None = None) -> list[Event]:
    """About ``n`` events of ``ctx.stream`` over ``span_s`` seconds from START_US.

    With ``datagen.streams`` (when importable) the stream's own model makes
    them at ``n / span_s`` events per second (``burst`` passed on when given,
    the model's type mix kept). Otherwise ``builtin_rows`` makes exactly
    ``n`` events (``burst`` default 4, ``weights`` the type mix), respaced
    evenly over the span. With ``groups``, ``group_attr`` is folded onto
    ``groups`` distinct values.
    """
    from trendlake.schemas import load_stream_schema

    seed = ctx.seed if seed is None else seed
    if data_source(ctx.stream) == "trendlake.datagen.streams":
        import pyarrow as pa
        from trendlake.datagen.streams import generate

        extra = {} if burst is None else {"burst": burst}
        tables = list(generate(ctx.stream, n, seed=seed, start="2026-01-01T00:00:00Z",
                               rate_per_second=n / span_s, **extra))
        events = events_from_arrow(pa.concat_tables(tables), where="trendlake.datagen.streams")
    else:
        from trendlake.engine.events import make_events as from_rows

        rows = builtin_rows(load_stream_schema(ctx.stream), n, seed, burst=4.0 if burst is None else burst,
                            weights=weights)
        for i, row in enumerate(rows):
            row["ts"] = 0
            row["seq"] = i
        step = span_s * 1_000_000 / max(len(rows), 1)
        events = [Event(START_US + int(i * step), i, e.type, e.attrs)
                  for i, e in enumerate(sorted(from_rows(rows), key=lambda e: e.seq))]
    if groups is not None and group_attr is not None:
        for e in events:
            if e.attrs.get(group_attr) is not None:
                e.attrs[group_attr] = _fold(e.attrs[group_attr], groups)
    return events


def _fold(value: Any, groups: int) -> Any:
    if isinstance(value, int):
        return value % groups
    return f"g{zlib.crc32(str(value).encode()) % groups}"


def measured_ranges(events: Iterable[Event], low: float = 0.1, high: float = 0.9) -> dict[str, tuple[float, float]]:
    """Per numeric attribute, its (``low``, ``high``) quantiles in ``events`` (for predicate literals)."""
    values: dict[str, list[float]] = {}
    for e in events:
        for a, v in e.attrs.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                values.setdefault(a, []).append(float(v))
    out = {}
    for a, vs in values.items():
        vs.sort()
        out[a] = (vs[int(low * (len(vs) - 1))], vs[int(high * (len(vs) - 1))])
    return out


# ---- running and timing ------------------------------------------------------------


@dataclass
class Prepared:
    """A workload compiled once per point: its text, plan and hash."""

    text: str
    workload: Any
    plan: Any  # engine.Plan of the unshared plan
    queries: int


def prepare(text: str, schema: dict[str, Any] | None = None) -> Prepared:
    workload = optimizer.compile_workload(text, schema)
    plan = optimizer.build_plan(workload)
    return Prepared(text, workload, engine.load_plan(plan, optimizer.workload_hash(text)), len(workload.queries))


def int_list(text: str) -> list[int]:
    """An experiment option's comma-separated integers (``20,40,80``; empty items skipped)."""
    return [int(x) for x in text.split(",") if x]


def timed_once(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """Run ``fn`` once after a garbage collection; its result, wall and process CPU seconds."""
    gc.collect()
    started, cpu_started = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - started, time.process_time() - cpu_started


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, list[float]]:
    """Run ``fn`` ``repeat`` times; its last result and every wall time in seconds."""
    times = []
    result = None
    for _ in range(max(1, repeat)):
        result, wall, _ = timed_once(fn)
        times.append(wall)
    return result, times


def runner(s: Strategy, prepared: Prepared, events: list[Event]) -> Callable[[], list[dict[str, Any]]]:
    """A call computing the workload's result rows under strategy ``s`` (planning done before)."""
    table = engine.table_from_events(events)  # the engine's input, built outside the timed runs
    if s.kind == "engine":
        return lambda: engine.evaluate(prepared.plan, table, strategy=s.engine_strategy)
    if s.kind == "shared":
        from trendlake.jobs.statistics import file_statistics

        # the planner reads the statistics of the very events it is timed on (as `eval --planner` does)
        stats = file_statistics(table, prepared.workload, None)
        built = optimizer.build_plan(prepared.workload, planner=s.planner, statistics=stats)
        plan = engine.load_plan(built, optimizer.workload_hash(prepared.text))

        def run() -> list[dict[str, Any]]:
            return engine.evaluate(plan, table)

        run.plan = built  # type: ignore[attr-defined]  # what the point records of the plan it ran
        return run
    if s.kind == "forced":
        plan = engine.load_plan(forced_sharing(prepared.plan.raw, s.planner or "static"))
        return lambda: engine.evaluate(plan, table)
    if s.kind == "cli":
        return _cli_runner(s, prepared, table)
    raise ValueError(f"{s.name} is an optimizer-only strategy")


def _cli_runner(s: Strategy, prepared: Prepared, table: Any) -> Callable[[], list[dict[str, Any]]]:
    """``trendlake eval`` in this process on a Parquet file of the events (written before
    timing), its JSON-lines output parsed back into rows."""
    import contextlib
    import io
    import tempfile
    from pathlib import Path

    import pyarrow.parquet as pq
    from trendlake.jobs.cli import main

    folder = Path(tempfile.mkdtemp(prefix="trendlake-bench-eval-"))
    events, workload = folder / "events.parquet", folder / "workload.etq"
    import pyarrow as pa

    i = table.column_names.index("ts")
    if not pa.types.is_timestamp(table.schema.field(i).type):  # µs integers: a timestamp column, as files carry them
        table = table.set_column(i, "ts", table.column("ts").cast(pa.int64()).cast(pa.timestamp("us", tz="UTC")))
    pq.write_table(table, events)
    workload.write_text(prepared.text)
    argv = ["eval", str(workload), "--events", str(events)]
    if s.planner == "hamlet-plan":
        plan_path = folder / "plan.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["plan", str(workload), "--planner", "hamlet", "--events", str(events), "--out", str(plan_path)])
        if code != 0:
            raise RuntimeError(f"trendlake plan exited with {code}")
        argv += ["--plan", str(plan_path)]
    elif s.planner:
        argv += ["--planner", s.planner]

    def run() -> list[dict[str, Any]]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        if code != 0:
            raise RuntimeError(f"trendlake eval exited with {code}: {err.getvalue().strip()}")
        return [json.loads(line) for line in out.getvalue().splitlines()]

    return run


def plan_facts(raw: dict[str, Any]) -> dict[str, Any]:
    """What a point records of the plan it ran or timed: its groups per kind, the queries in
    them, the shared parts its groups state (``body.shared``, where a kind lists them) and their
    summed ``benefit`` (Sharon's score), its estimated cost and the ``none`` plan's."""
    groups: dict[str, int] = {}
    parts = 0
    score = 0.0
    for g in raw.get("sharing", []):
        groups[g["kind"]] = groups.get(g["kind"], 0) + 1
        for item in g["body"].get("shared") or []:
            parts += 1
            score += float(item.get("benefit", 0.0))
    alone = next((a["estimated_cost"] for a in raw.get("alternatives", []) if a.get("planner") == "none"), None)
    return {"groups": groups, "grouped_queries": sum(len(g["queries"]) for g in raw.get("sharing", [])),
            "shared_parts": parts, "score": round(score, 6), "estimated_cost": raw.get("estimated_cost"),
            "estimated_cost_none": alone}


def forced_sharing(raw: dict[str, Any], decision: str) -> dict[str, Any]:
    """The unshared plan with every sharable set of its queries as one group with ``decision``
    (the ``share-all`` planner's groups): what the shared executors cost, planner aside."""
    from trendlake.engine.plan import content_hash
    from trendlake.optimizer.planners.share_all import every_sharable_set

    plan = dict(raw, sharing=every_sharable_set(raw["queries"], decision))
    if "content_hash" in plan:  # a plan with groups is another plan: its own content hash
        plan["content_hash"] = content_hash(plan)
    return plan


def enumeration_paths(prepared: Prepared, events: list[Event]) -> float:
    """How many partial trends the two-step reference walks through for this workload and events.

    Its depth-first search extends every path from a start event whether or
    not the path ever reaches an end, so its work is the number of template
    paths from a start — the COUNT(*) of the same queries with every positive
    variable an end, no trailing negation and skip-till-any-match, which
    GRETA computes without enumerating them.
    """
    import copy

    raw = copy.deepcopy(prepared.plan.raw)
    for q in raw["queries"]:
        q["template"]["end"] = [v["name"] for v in q["variables"] if not v["negated"]]
        q["template"]["end_negations"] = []
        q["semantics"] = "skip-till-any-match"
        q["aggregates"] = [{"name": "COUNT(*)", "fn": "count_star"}]
        q["returns"] = [*q["group_by"], "COUNT(*)"]
        q["granularity"] = "event"
    table = engine.table_from_events(events)
    return trend_total(engine.evaluate(engine.load_plan(raw), table, strategy="greta"))


def trend_total(rows: list[dict[str, Any]]) -> float:
    """Sum of ``COUNT(*)`` over result rows (inf when a count overflowed): two-step's work."""
    total = 0.0
    for r in rows:
        v = r.get("COUNT(*)")
        if v is OVERFLOW:
            return math.inf
        if isinstance(v, (int, float)):
            total += float(v)
    return total


def rows_agree(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> str | None:
    """None when two strategies' rows are equal, else the first difference."""
    if len(a) != len(b):
        return f"{len(a)} rows vs {len(b)} rows"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x.keys() != y.keys():
            return f"row {i}: columns {sorted(x)} vs {sorted(y)}"
        for k in x:
            if not is_equal(x[k], y[k]):
                return f"row {i} ({x.get('query')}): {k} = {x[k]!r} vs {y[k]!r}"
    return None


@dataclass
class Figure:
    """One panel of the experiment's figure: x values and one series per strategy."""

    id: str
    title: str
    x_label: str
    x: list[Any]
    strategies: list[str]
    y_label: str = "seconds (median of repeats)"
    log_y: bool = True
    series: dict[str, list[float | None]] = field(default_factory=dict)
    extra: dict[str, list[Any]] = field(default_factory=dict)  # per-x facts (trends, selectivity, ...)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for s in self.strategies:
            self.series.setdefault(s, [None] * len(self.x))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "x_label": self.x_label, "x": self.x,
            "y_label": self.y_label, "log_y": self.log_y, "series": self.series,
            "extra": self.extra, "notes": self.notes,
        }

    def ratio(self, slow: str, fast: str) -> list[float | None]:
        """Per x: the value of ``slow`` / the value of ``fast`` (None where either is missing)."""
        return [round(a / b, 3) if a and b else None
                for a, b in zip(self.series.get(slow, []), self.series.get(fast, []), strict=False)]

    def with_ratios(self, pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
        """``to_dict`` with ``ratios`` "slow/fast" -> per-x ratio, for the pairs this figure holds."""
        d = self.to_dict()
        d["ratios"] = {f"{slow}/{fast}": self.ratio(slow, fast)
                       for slow, fast in pairs if slow in self.series and fast in self.series}
        return d


class Recorder:
    """Collects the points, figures and agreement checks of one experiment."""

    def __init__(self, ctx: Context, strategies: Iterable[str]) -> None:
        self.ctx = ctx
        self.strategy_names = [strategy(n).name for n in dict.fromkeys(strategies)]
        self.figures: list[Figure] = []
        self.points: list[dict[str, Any]] = []
        self.checks = 0
        self.disagreements: list[dict[str, Any]] = []
        self.skipped: dict[str, str] = {}

    def figure(self, fig: Figure) -> Figure:
        self.figures.append(fig)
        return fig

    def run_point(
        self,
        fig: Figure,
        i: int,
        prepared: Prepared,
        events: list[Event],
        *,
        max_paths: float | None = None,
        facts: dict[str, Any] | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Run every strategy of ``fig`` at x index ``i``; record times and check agreement.

        The repeats are interleaved: each round runs every strategy once, so that a change
        of the machine's load during the point reaches all of them alike. ``twostep`` only
        runs when the partial trends it would walk through (``enumeration_paths``) stay
        under ``max_paths``. A shared strategy's point records the plan it ran
        (``plan_planner``, ``plan_groups``, ``same_plan_as``): two strategies that ran the
        same plan did the same work, whatever their times say. Beside the wall times
        (``times_s``, ``median_s``: what the figures and ratios use) each point records the
        process's CPU times (``cpu_s``, ``cpu_median_s``), which other processes on a shared
        machine disturb less.
        """
        x = fig.x[i]
        results: dict[str, list[dict[str, Any]]] = {}
        order = sorted(fig.strategies, key=lambda n: (n == "twostep", STRATEGIES[n].kind != "engine"))
        points: dict[str, dict[str, Any]] = {}
        runs: dict[str, Callable[[], list[dict[str, Any]]]] = {}
        plans: dict[str, str] = {}  # sharing groups of each shared strategy's plan -> its first strategy
        for name in order:
            s = STRATEGIES[name]
            point: dict[str, Any] = {"figure": fig.id, "x": x, "strategy": name, "events": len(events),
                                     "queries": prepared.queries}
            if facts:
                point.update(facts)
            self.points.append(point)
            if name == "twostep" and max_paths is not None:
                paths = enumeration_paths(prepared, events)
                point["enumeration_paths"] = paths
                if paths > max_paths:
                    point.update(status="skipped", reason=f"{paths:.3g} partial trends to enumerate > budget {max_paths:.3g}")
                    continue
            try:
                runs[name] = runner(s, prepared, events)
            except engine.Unsupported as err:
                point.update(status="unsupported", reason=str(err))
                continue
            points[name] = point
            plan = getattr(runs[name], "plan", None)
            if plan is not None:
                sharing = json.dumps([{k: v for k, v in g.items() if k != "id"} for g in plan["sharing"]], sort_keys=True)
                point.update(plan=plan_facts(plan), plan_planner=plan.get("chosen_planner", plan["planner"]),
                             plan_groups=[g["kind"] for g in plan["sharing"]])
                if sharing in plans:
                    point["same_plan_as"] = plans[sharing]
                plans.setdefault(sharing, name)
        times: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(max(1, self.ctx.repeat)):
            for name in list(runs):
                try:
                    rows, wall, cpu_s = timed_once(runs[name])
                except engine.Unsupported as err:
                    points.pop(name).update(status="unsupported", reason=str(err))
                    del runs[name], times[name]
                    continue
                times[name].append(wall)
                cpu[name].append(cpu_s)
                results[name] = rows
        for name, point in points.items():
            median = statistics.median(times[name])
            rows = results[name]
            point.update(status=OK, times_s=[round(t, 6) for t in times[name]], median_s=round(median, 6), rows=len(rows),
                         cpu_s=[round(t, 6) for t in cpu[name]], cpu_median_s=round(statistics.median(cpu[name]), 6))
            if rows and "COUNT(*)" in rows[0]:
                point["trends"] = trend_total(rows)
            fig.series[name][i] = round(median, 6)
        names = list(results)
        for other in names[1:]:
            self.checks += 1
            diff = rows_agree(results[names[0]], results[other])
            if diff is not None:
                self.disagreements.append({"figure": fig.id, "x": x, "strategies": [names[0], other], "difference": diff})
        shown = ", ".join(
            f"{n}={fig.series[n][i]:.4f}s" for n in fig.strategies if fig.series[n][i] is not None
        )
        self.ctx.log(f"  {fig.id} {fig.x_label}={x}: {shown or 'nothing ran'}")
        return results

    def run_planners(self, fig: Figure, i: int, text: str, schema: dict[str, Any] | None = None,
                     facts: dict[str, Any] | None = None, stats: dict[str, Any] | None = None) -> None:
        """Time ``build_plan`` for every optimizer strategy of ``fig`` at x index ``i``, from
        ``stats`` (default: the stated uniform assumption)."""
        stats = stats if stats is not None else {"assumption": "uniform"}
        workload = optimizer.compile_workload(text, schema)
        x = fig.x[i]
        for name in fig.strategies:
            s = STRATEGIES[name]
            point: dict[str, Any] = {"figure": fig.id, "x": x, "strategy": name, "queries": len(workload.queries)}
            if facts:
                point.update(facts)
            try:
                plan, times = timed(lambda s=s: optimizer.build_plan(workload, planner=s.planner, statistics=stats),
                                    self.ctx.repeat)
            except OptimizerError as err:  # a planner that refuses a workload it cannot finish (exhaustive)
                point.update(status="skipped", reason=str(err))
                self.points.append(point)
                continue
            median = statistics.median(times)
            point.update(status=OK, times_s=[round(t, 6) for t in times], median_s=round(median, 6),
                         estimated_cost=plan.get("estimated_cost"), sharing_entries=len(plan.get("sharing", [])),
                         plan=plan_facts(plan))
            fig.series[name][i] = round(median, 6)
            self.points.append(point)
        self.ctx.log(f"  {fig.id} {fig.x_label}={x}: planners timed")

    def result(self, *, title: str, paper: str, paper_reported: list[str], compares: str,
               ratios: list[tuple[str, str]], extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The experiment's JSON record (without machine facts, added by the suite)."""
        return make_record(
            self.ctx, title=title, paper=paper, paper_reported=paper_reported, compares=compares,
            strategies={n: STRATEGIES[n].status() for n in self.strategy_names},
            figures=[fig.with_ratios(ratios) for fig in self.figures], points=self.points, checks=self.checks,
            disagreements=self.disagreements,
            **{"stream": self.ctx.stream, "data_source": data_source(self.ctx.stream), **(extra or {})},
        )


def make_record(ctx: Context, *, title: str, paper: str, compares: str, strategies: dict[str, dict[str, Any]],
                figures: list[dict[str, Any]], points: list[dict[str, Any]], checks: int,
                disagreements: list[dict[str, Any]], paper_reported: Iterable[str] = (),
                **extra: Any) -> dict[str, Any]:
    """An experiment's JSON record (the suite adds the machine facts and the command): ``figures``
    as ``Figure.with_ratios`` gives them, the headline ratios (min-max per figure and pair) taken
    from theirs; ``checks`` agreement checks, of which ``disagreements`` failed."""
    headline: dict[str, Any] = {}
    for fig in figures:
        for pair, values in fig.get("ratios", {}).items():
            got = [v for v in values if v is not None]
            if got:
                headline[f"{fig['id']}: {pair}"] = {"min": min(got), "max": max(got)}
    return {
        "experiment": ctx.name,
        "title": title,
        "paper": paper,
        "compares": compares,
        "paper_reported": list(paper_reported),
        "size": ctx.size,
        "repeat": ctx.repeat,
        "seed": ctx.seed,
        "status": OK,
        "strategies": strategies,
        "strategies_ran": sorted({p["strategy"] for p in points if p.get("status") == OK}),
        "figures": figures,
        "ratios": headline,
        "points": points,
        "agreement": {"checked": checks, "all_agree": not disagreements, "disagreements": disagreements},
        **extra,
    }
