"""The synthetic stream generators (trendlake.datagen.streams): deterministic, schema-conforming, parameters kept.

Every statistical check counts on the output itself (numpy over the table's
columns), and ``measure`` is held to the same counts, so the test does not
trust the generator's own bookkeeping.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from trendlake.datagen.streams import STREAMS, generate, measure, write_events
from trendlake.datagen.streams import base as stream_base
from trendlake.schemas import load_stream_schema


def _table(stream: str, events: int, seed: int = 0, **kw) -> pa.Table:
    return pa.concat_tables(list(generate(stream, events, seed, **kw)))


def _np(col) -> np.ndarray:
    return np.asarray(col.to_numpy(zero_copy_only=False))


def _count(table: pa.Table) -> dict:
    """Independent figures: type counts, maximal runs of one type, (n-1)/span, order."""
    types = _np(table.column("type")).astype(str)
    ts = _np(pc.cast(table.column("ts"), pa.int64())).astype(np.int64)
    names, codes = np.unique(types, return_inverse=True)
    counts = np.bincount(codes, minlength=names.size)
    starts = np.r_[True, types[1:] != types[:-1]]
    return {
        "counts": dict(zip(names.tolist(), counts.tolist(), strict=True)),
        "runs": int(starts.sum()),
        "runs_by_type": dict(zip(names.tolist(), np.bincount(codes[starts], minlength=names.size).tolist(), strict=True)),
        "rate": (types.size - 1) / ((ts[-1] - ts[0]) / 1e6),
        "ordered": bool((np.diff(ts) >= 0).all()),
        "first_us": int(ts[0]),
    }


# ---------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("stream", ["rides", "bus"])
def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path, stream, fmt) -> None:
    a = write_events(stream, tmp_path / f"a.{fmt}", 3000, seed=7)
    b = write_events(stream, tmp_path / "again" / f"b.{fmt}", 3000, seed=7)
    c = write_events(stream, tmp_path / f"c.{fmt}", 3000, seed=8)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    assert not list(tmp_path.glob(".*tmp*")), "no temporary file is left behind"


def test_the_csv_has_the_same_events_as_the_parquet(tmp_path) -> None:
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    p = write_events("smart_home", tmp_path / "e.parquet", 2000, seed=3)
    c = write_events("smart_home", tmp_path / "e.csv", 2000, seed=3)
    want = pq.read_table(p)
    got = pcsv.read_csv(c, convert_options=pcsv.ConvertOptions(column_types=want.schema))
    assert got.num_rows == want.num_rows
    for name in want.column_names:
        assert got.column(name).equals(want.column(name)), name


# ---------------------------------------------------------------------------- schema


@pytest.mark.parametrize("stream", sorted(STREAMS))
def test_a_small_generation_conforms_to_the_stream_schema(stream) -> None:
    schema = load_stream_schema(stream)
    table = _table(stream, 4000, seed=11)
    assert table.num_rows == 4000
    assert table.column_names == ["type", "ts", *schema["attributes"]]
    types = _np(table.column("type")).astype(str)
    assert set(types) <= set(schema["event_types"])
    assert table.column("ts").null_count == 0 and table.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert _count(table)["ordered"], "ts is non-decreasing"
    for name, spec in schema["attributes"].items():
        col = table.column(name)
        carried = np.ones(types.size, bool) if spec.get("types", "*") == "*" else np.isin(types, spec["types"])
        null = _np(col.is_null()).astype(bool)
        if spec.get("required"):
            assert not (carried & null).any(), f"{stream}.{name}: required but null"
        assert (null | carried).all(), f"{stream}.{name}: set on a type that does not carry it"
        values = _np(col.drop_null())
        if "min" in spec:
            assert (values >= spec["min"]).all(), f"{stream}.{name} below min"
        if "max" in spec:
            assert (values <= spec["max"]).all(), f"{stream}.{name} above max"
        if "values" in spec:
            assert set(values.tolist()) <= set(spec["values"]), f"{stream}.{name} outside its values"
        if spec["type"] == "double":
            assert np.isfinite(values.astype(float)).all(), f"{stream}.{name} not finite"


def test_every_stream_starts_at_start_and_honours_zero_and_tiny_sizes() -> None:
    for stream in STREAMS:
        assert list(generate(stream, 0)) == []
        one = _table(stream, 3, start="2025-06-01T12:00:00Z", chunk_size=1)
        assert one.num_rows == 3
        assert _count(one)["first_us"] == 1748779200 * 1_000_000


# ---------------------------------------------------------------------------- parameters


CASES = [  # stream, events, rate, burst, mix (None: the stream's defaults)
    # Trade exactly half of the mix: the exact chain degenerates there (it used to hang)
    ("stocks", 60_000, 50.0, 4.0, {"Trade": 5, "Bid": 3, "Ask": 1, "Order": 1, "Cancel": 0, "Halt": 0}),
    ("bus", 60_000, None, None, None),  # one type is 70%: its runs are made longer
    ("cluster", 60_000, None, None, None),
    ("smart_home", 60_000, 1000.0, 1.0, None),
    ("linear_road", 40_000, None, 6.0, None),
    ("rides", 20_000, None, None, None),
]


@pytest.mark.parametrize(("stream", "events", "rate", "burst", "mix"), CASES, ids=[c[0] for c in CASES])
def test_rate_type_mix_and_burst_size_match_the_parameters(stream, events, rate, burst, mix) -> None:
    spec = STREAMS[stream]
    table = _table(stream, events, seed=5, rate_per_second=rate, burst=burst, mix=mix)
    got = _count(table)
    m = measure(table)

    # measure reports what independent counting finds
    assert m["events"] == events and m["type_counts"] == got["counts"]
    assert m["bursts"] == got["runs"] and m["time_ordered"] is got["ordered"] is True
    assert m["rate_per_second"] == pytest.approx(got["rate"], rel=1e-9)
    assert m["mean_burst"] == pytest.approx(events / got["runs"])
    assert m["mean_burst_by_type"] == pytest.approx({t: got["counts"][t] / r for t, r in got["runs_by_type"].items()})

    # ... and that is what was asked for, within a few standard errors
    want_rate = spec.rate if rate is None else rate
    want_burst = spec.burst if burst is None else burst
    types = load_stream_schema(stream)["event_types"]
    weights = {t: float(spec.mix.get(t, 0.0)) for t in types} | {t: float(w) for t, w in (mix or {}).items()}
    total = sum(weights.values())
    assert got["rate"] == pytest.approx(want_rate, rel=5 / np.sqrt(events))
    assert events / got["runs"] == pytest.approx(want_burst, rel=0.05)
    for t in types:
        p = weights[t] / total
        share = got["counts"].get(t, 0) / events
        if p == 0:
            assert share == 0, f"{t} was given weight 0"
            continue
        # runs of mean length B make the count's variance about 2B times the i.i.d. one
        tolerance = 5 * np.sqrt(p * (1 - p) * 2 * want_burst / events) + 1e-3
        assert abs(share - p) < tolerance, f"{stream} {t}: {share:.4f} vs {p:.4f}"


def test_a_burst_too_small_for_the_mix_is_refused_with_the_minimum() -> None:
    with pytest.raises(ValueError, match="at least 1.4"):
        list(generate("cluster", 10, burst=1.0))
    with pytest.raises(ValueError, match="unknown parameter"):
        list(generate("stocks", 10, companies=3, planets=4))
    with pytest.raises(ValueError, match="unknown event type"):
        list(generate("stocks", 10, mix={"Teleport": 1}))


# ---------------------------------------------------------------------------- chunking


@pytest.mark.parametrize("stream", ["rides", "stocks", "ecommerce"])
def test_chunked_output_equals_unchunked_across_segments(monkeypatch, stream) -> None:
    monkeypatch.setattr(stream_base, "SEGMENT_EVENTS", 4096)  # several internal segments, state carried over
    whole = list(generate(stream, 12_000, seed=4, chunk_size=1_000_000))
    chunks = list(generate(stream, 12_000, seed=4, chunk_size=777))
    assert len(whole) == 1 and len(chunks) == 16
    assert all(c.num_rows == 777 for c in chunks[:-1])
    assert pa.concat_tables(chunks).equals(whole[0])
    assert measure(iter(chunks)) == measure(whole[0])


# ---------------------------------------------------------------------------- stocks


def test_stock_prices_are_per_company_random_walks() -> None:
    table = _table("stocks", 60_000, seed=9)
    company = _np(pc.dictionary_encode(table.column("company")).combine_chunks().indices)
    price = _np(table.column("price")).astype(float)
    order = np.argsort(company, kind="stable")  # each company's events, in time order
    same = company[order][1:] == company[order][:-1]
    prev, nxt = price[order][:-1][same], price[order][1:][same]
    up, down = (nxt > prev).mean(), (nxt < prev).mean()
    assert up == pytest.approx(0.5, abs=0.04) and down == pytest.approx(0.5, abs=0.04)
    assert up / (up + down) == pytest.approx(0.5, abs=0.015)
    # a walk, not noise around a level: steps are small and the level wanders
    step = np.abs(np.log(nxt / prev))
    assert np.median(step) < 0.01
    assert np.corrcoef(prev, nxt)[0, 1] > 0.999


# ---------------------------------------------------------------------------- CLI


def test_cli_writes_the_file_and_lists_the_streams(tmp_path, capsys) -> None:
    from trendlake.jobs.cli import main

    out = tmp_path / "s.csv"
    assert main(["generate", "stocks", "-n", "500", "--seed", "2", "-o", str(out), "--param", "companies=5"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 501 and lines[0].startswith("type,ts,company")
    assert len({line.split(",")[2] for line in lines[1:]}) <= 5
    assert main(["generate", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in STREAMS)
    assert main(["generate", "cluster", "-n", "5", "-o", str(tmp_path / "x.csv"), "--burst", "1"]) == 2
