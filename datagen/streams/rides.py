"""Ride-sharing trip lifecycles (Hamlet's ridesharing generator): the ``rides`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import (
    INF,
    NONE,
    US,
    Col,
    Context,
    Model,
    StreamSpec,
    round_to,
    taxi_fare,
    weighted_choice,
)

RIDE_DISTRICTS = ("center", "north", "south", "east", "west", "airport", "harbor",
                  "midtown", "uptown", "university", "stadium", "suburbs")
# mean traffic speed (km/h) per district: slow downtown, fast to the airport
RIDE_SPEEDS = (14.0, 26.0, 24.0, 28.0, 30.0, 45.0, 22.0, 16.0, 27.0, 20.0, 25.0, 38.0)
RIDE_VENDORS = ["alpha", "beta", "gamma"]
DRIVER_ONLY = ("Surge", "Login", "Logout", "Idle", "Refuel", "Break")
FATE_DONE, FATE_CANCEL_EARLY, FATE_CANCEL_LATE = 0, 1, 2

_TRIP_FIELDS = {
    "tid": np.int64, "driver": np.int64, "rider": np.int64, "district": np.int64, "fate": np.int8,
    "pu_zone": np.int64, "do_zone": np.int64, "passengers": np.int64, "est_price": np.float64,
    "speed": np.float64, "req": np.int64, "acc": np.int64, "canc": np.int64, "pick": np.int64,
    "drop": np.int64, "pay": np.int64, "lag_acc": np.int64, "lag_canc": np.int64, "lag_pick": np.int64,
    "lag_drop": np.int64, "lag_pay": np.int64, "fare": np.float64, "km": np.float64, "dead": np.int64,
}


class _Rides(Model):
    """Trip lifecycles matched onto the bursty type sequence.

    Each ``Request`` starts a trip (driver, rider, district, fate: completed,
    cancelled before accept, cancelled after accept). Milestones (Accept,
    Cancel, Pickup, Dropoff, Payment) are queues: a trip becomes eligible a
    random lag after its previous milestone, and the stream's events of that
    type go to eligible trips, earliest eligible first. Travel, Wait, Reroute,
    Rate, Tip, Feedback, Complaint and Refund events go to a random trip in
    the matching phase (Travel: between Accept and Dropoff/Cancel, Wait:
    between Request and Pickup/Cancel, Reroute: between Pickup and Dropoff,
    the others: within ``after_minutes`` after the end). Events no trip can
    take are "strays" with random driver/rider; Surge, Login, Logout, Idle,
    Refuel and Break are driver events with rider 0.
    """

    STAGES = (  # type, field, fates needing it
        ("Accept", "acc", (FATE_DONE, FATE_CANCEL_LATE)),
        ("Cancel", "canc", (FATE_CANCEL_EARLY, FATE_CANCEL_LATE)),
        ("Pickup", "pick", (FATE_DONE,)),
        ("Dropoff", "drop", (FATE_DONE,)),
        ("Payment", "pay", (FATE_DONE,)),
    )

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        p = ctx.params
        self.drivers = int(p["drivers"])
        self.riders = int(p["riders"])
        nd = int(p["districts"])
        if not 1 <= nd <= len(RIDE_DISTRICTS):
            raise ValueError(f"districts must be 1..{len(RIDE_DISTRICTS)}, got {nd}")
        if self.drivers < 1 or self.riders < 1:
            raise ValueError("drivers and riders must be >= 1")
        self.cancel_rate = float(p["cancel_rate"])
        if not 0 <= self.cancel_rate <= 1:
            raise ValueError("cancel_rate must be in [0, 1]")
        self.districts = list(RIDE_DISTRICTS[:nd])
        self.dweights = 1.0 / np.sqrt(np.arange(1, nd + 1))
        self.dspeed = np.array(RIDE_SPEEDS[:nd])
        self.trip_us = float(p["trip_minutes"]) * 60 * US
        self.after_us = int(float(p["after_minutes"]) * 60 * US)
        if self.trip_us <= 0 or self.after_us <= 0:
            raise ValueError("trip_minutes and after_minutes must be > 0")
        # zones 1..265 split into contiguous ranges, one per district
        bounds = np.linspace(1, 266, nd + 1).astype(np.int64)
        self.zone_lo, self.zone_hi = bounds[:-1], bounds[1:]
        self.perm = ctx.rng("drivers").permutation(self.drivers)
        self.t = {k: np.empty(0, dtype=v) for k, v in _TRIP_FIELDS.items()}
        self.next_tid = 0
        T = self.trip_us
        self.caps = {"wait": int(2.0 * T), "travel": int(3.0 * T), "reroute": int(3.0 * T), "after": self.after_us}
        self.timeout = int(5.0 * T)

    # -- trips ---------------------------------------------------------------

    def _new_trips(self, req_ts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        m = req_ts.size
        T = self.trip_us
        district = weighted_choice(rng, m, self.dweights)
        u = rng.random(m)
        fate = np.where(u < self.cancel_rate / 2, FATE_CANCEL_EARLY,
                        np.where(u < self.cancel_rate, FATE_CANCEL_LATE, FATE_DONE)).astype(np.int8)
        span = self.zone_hi - self.zone_lo
        pu = self.zone_lo[district] + (rng.random(m) * span[district]).astype(np.int64)
        dd = weighted_choice(rng, m, self.dweights)
        do = self.zone_lo[dd] + (rng.random(m) * span[dd]).astype(np.int64)
        speed = self.dspeed[district] * rng.uniform(0.8, 1.2, m)
        lag_drop = (5 * US + 0.70 * T * rng.gamma(3.0, 1 / 3.0, m)).astype(np.int64)
        est_minutes = lag_drop / (60 * US)
        est_price = round_to(taxi_fare(speed * est_minutes / 60.0, est_minutes) * rng.uniform(0.9, 1.1, m), 2)
        tid = self.next_tid + np.arange(m, dtype=np.int64)
        self.next_tid += m
        new = {
            "tid": tid,
            "driver": self.perm[tid % self.drivers].astype(np.int64),
            "rider": rng.integers(1, self.riders + 1, m),
            "district": district.astype(np.int64),
            "fate": fate,
            "pu_zone": pu,
            "do_zone": do,
            "passengers": 1 + weighted_choice(rng, m, np.array([0.70, 0.20, 0.07, 0.03])),
            "est_price": est_price,
            "speed": speed,
            "req": req_ts.astype(np.int64),
            "acc": np.full(m, NONE), "canc": np.full(m, NONE), "pick": np.full(m, NONE),
            "drop": np.full(m, NONE), "pay": np.full(m, NONE),
            "lag_acc": (2 * US + rng.exponential(0.04 * T, m)).astype(np.int64),
            "lag_canc": np.where(fate == FATE_CANCEL_EARLY, rng.exponential(0.08 * T, m),
                                 rng.exponential(0.20 * T, m)).astype(np.int64) + US,
            "lag_pick": (5 * US + 0.25 * T * rng.gamma(2.0, 0.5, m)).astype(np.int64),
            "lag_drop": lag_drop,
            "lag_pay": (US + rng.exponential(0.02 * T, m)).astype(np.int64),
            "fare": np.full(m, np.nan), "km": np.full(m, np.nan),
            "dead": np.full(m, INF),
        }
        start = self.t["tid"].size
        for k in self.t:
            self.t[k] = np.concatenate([self.t[k], new[k].astype(self.t[k].dtype)])
        return np.arange(start, start + m)

    def _match(self, stage: tuple[str, str, tuple[int, ...]], ts: np.ndarray, codes: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        etype, fld, fates = stage
        t = self.t
        positions = np.flatnonzero(codes == self.ctx.code[etype])
        if etype == "Cancel":
            pred = np.where(t["fate"] == FATE_CANCEL_EARLY, t["req"], t["acc"])
        else:
            pred = t[{"acc": "req", "pick": "acc", "drop": "pick", "pay": "drop"}[fld]]
        need = np.isin(t["fate"], fates) & (t[fld] == NONE) & (pred != NONE) & (t["dead"] == INF)
        cand = np.flatnonzero(need)
        if cand.size == 0 or positions.size == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        elig = pred[cand] + t[f"lag_{fld}"][cand]
        order = np.lexsort((t["tid"][cand], elig))
        cand, elig = cand[order], elig[order]
        tau = ts[positions]
        s = np.searchsorted(tau, elig, side="right")
        k = np.arange(cand.size)
        idx = k + np.maximum.accumulate(s - k)
        ok = idx < tau.size
        cand, idx = cand[ok], idx[ok]
        t[fld][cand] = tau[idx]
        if fld == "drop":  # the ride is over: its distance and fare
            minutes = (t["drop"][cand] - t["pick"][cand]) / (60 * US)
            km = t["speed"][cand] * minutes / 60.0 * rng.uniform(0.9, 1.1, cand.size)
            t["km"][cand] = round_to(km, 3)
            t["fare"][cand] = round_to(taxi_fare(km, minutes), 2)
        return cand, positions[idx]

    def _intervals(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, start, end) of the trips' phase ``kind``; end INF while unknown."""
        t = self.t
        fate, dead = t["fate"], t["dead"]
        if kind == "wait":
            start = t["req"]
            end = np.where(fate == FATE_DONE, t["pick"], t["canc"])
        elif kind == "travel":
            start = np.where(fate == FATE_CANCEL_EARLY, NONE, t["acc"])
            end = np.where(fate == FATE_DONE, t["drop"], t["canc"])
        elif kind == "reroute":
            start = np.where(fate == FATE_DONE, t["pick"], NONE)
            end = t["drop"]
        elif kind == "after":
            start = np.where(fate == FATE_DONE, t["drop"], NONE)
            end = np.where(start == NONE, NONE, start + self.after_us)
        elif kind == "refund":
            start = np.where(fate == FATE_DONE, t["drop"], t["canc"])
            end = np.where(start == NONE, NONE, start + self.after_us)
        else:  # pragma: no cover
            raise KeyError(kind)
        end = np.where(end == NONE, INF, end)
        end = np.minimum(end, dead)
        return np.arange(start.size), start, end

    def _stab(self, kind: str, times: np.ndarray, rng: np.random.Generator, rounds: int = 32) -> np.ndarray:
        """A random trip in phase ``kind`` at each time (strictly inside it), or -1."""
        chosen = np.full(times.size, -1, dtype=np.int64)
        if times.size == 0:
            return chosen
        cap = self.caps["after" if kind == "refund" else kind]
        rows, start, end = self._intervals(kind)
        end = np.minimum(end, start + cap)
        keep = (start != NONE) & (end > start) & (start < times[-1]) & (end > times[0])
        rows, start, end = rows[keep], start[keep], end[keep]
        if rows.size == 0:
            return chosen
        order = np.lexsort((self.t["tid"][rows], start))
        rows, start, end = rows[order], start[order], end[order]
        lo = np.searchsorted(start, times - cap, side="right")
        hi = np.searchsorted(start, times, side="left")
        todo = np.flatnonzero(hi > lo)
        for _ in range(rounds):
            if todo.size == 0:
                break
            width = hi[todo] - lo[todo]
            k = lo[todo] + np.minimum((rng.random(todo.size) * width).astype(np.int64), width - 1)
            ok = end[k] > times[todo]
            chosen[todo[ok]] = rows[k[ok]]
            todo = todo[~ok]
        return chosen

    def _prune(self, now: int) -> None:
        t = self.t
        fate = t["fate"]
        finished_at = np.where(fate == FATE_DONE, t["pay"], t["canc"])
        ended_at = np.where(fate == FATE_DONE, t["drop"], t["canc"])
        alive = t["dead"] == INF
        # trips stuck in a queue for too long are given up (they keep their events so far)
        stuck = alive & (finished_at == NONE) & (t["req"] < now - self.timeout)
        t["dead"][stuck] = now
        done_long_ago = (finished_at != NONE) & (ended_at + self.after_us < now) & (finished_at < now)
        dead_long_ago = (t["dead"] != INF) & (t["dead"] + self.caps["travel"] < now)
        keep = ~(done_long_ago | dead_long_ago)
        if not keep.all():
            for k in t:
                t[k] = t[k][keep]

    # -- the segment -----------------------------------------------------------

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        code = self.ctx.code
        row = np.full(n, -1, dtype=np.int64)
        req_pos = np.flatnonzero(codes == code["Request"])
        row[req_pos] = self._new_trips(ts[req_pos], rng)
        for stage in self.STAGES:
            rows, pos = self._match(stage, ts, codes, rng)
            row[pos] = rows
        phases = {"Travel": "travel", "Wait": "wait", "Reroute": "reroute", "Rate": "after", "Tip": "after",
                  "Feedback": "after", "Complaint": "after", "Refund": "refund"}
        for etype, kind in phases.items():
            pos = np.flatnonzero(codes == code[etype])
            if pos.size:
                row[pos] = self._stab(kind, ts[pos], rng)
        cols = self._attributes(codes, ts, row, rng)
        self._prune(int(ts[-1]))
        return cols

    def _attributes(self, codes: np.ndarray, ts: np.ndarray, row: np.ndarray, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        t = self.t
        linked = row >= 0
        r = row[linked]
        is_ = {name: codes == c for name, c in self.ctx.code.items()}

        driver = rng.integers(0, self.drivers, n)
        rider = rng.integers(1, self.riders + 1, n)
        district = weighted_choice(rng, n, self.dweights)
        driver[linked], rider[linked], district[linked] = t["driver"][r], t["rider"][r], t["district"][r]
        solo = np.isin(codes, [self.ctx.code[x] for x in DRIVER_ONLY])
        rider[solo] = 0

        speed_mean = self.dspeed[district]
        trip_speed = speed_mean * rng.uniform(0.8, 1.2, n)
        trip_speed[linked] = t["speed"][r]
        # Travel: a leg of a few minutes at a noisy speed around the trip's speed
        leg_s = round_to(1.0 + rng.gamma(2.0, 30.0, n), 1)
        speed = round_to(np.maximum(0.5, trip_speed * rng.gamma(4.0, 0.25, n)), 1)
        travel_km = round_to(speed * leg_s / 3600.0, 3)
        # Dropoff: the ride (linked trips: the real pickup -> dropoff time)
        ride_min = 0.7 * self.trip_us / (60 * US) * rng.gamma(3.0, 1 / 3.0, n) + 0.1
        ride_km = trip_speed * ride_min / 60.0
        fare = taxi_fare(ride_km, ride_min)
        ld = linked & is_["Dropoff"]
        rd = row[ld]
        ride_min[ld] = (t["drop"][rd] - t["pick"][rd]) / (60 * US)
        ride_km[ld] = t["km"][rd]
        fare[ld] = t["fare"][rd]
        duration = np.where(is_["Dropoff"], round_to(ride_min * 60.0, 1), leg_s)
        distance = np.where(is_["Dropoff"], round_to(ride_km, 3), travel_km)

        est = round_to(taxi_fare(ride_km, ride_min) * rng.uniform(0.9, 1.1, n), 2)
        lr = linked & is_["Request"]
        est[lr] = t["est_price"][row[lr]]
        price = np.where(is_["Dropoff"], round_to(fare, 2), est)

        span = self.zone_hi - self.zone_lo
        pu = self.zone_lo[district] + (rng.random(n) * span[district]).astype(np.int64)
        dd = weighted_choice(rng, n, self.dweights)
        do = self.zone_lo[dd] + (rng.random(n) * span[dd]).astype(np.int64)
        passengers = 1 + weighted_choice(rng, n, np.array([0.70, 0.20, 0.07, 0.03]))
        pu[linked], do[linked], passengers[linked] = t["pu_zone"][r], t["do_zone"][r], t["passengers"][r]

        # money after the trip: the trip's fare when known
        known_fare = np.full(n, np.nan)
        known_fare[linked] = np.where(np.isnan(t["fare"][r]), t["est_price"][r], t["fare"][r])
        base = np.where(np.isnan(known_fare), fare, known_fare)
        amount = np.where(is_["Payment"], base,
                          np.where(is_["Tip"], base * rng.uniform(0.05, 0.25, n), base * rng.uniform(0.1, 1.0, n)))
        amount = round_to(np.maximum(amount, 0.0), 2)

        status = weighted_choice(rng, n, np.array([0.6, 0.3, 0.1]))  # rider, driver, system
        lc = linked & is_["Cancel"]
        early = t["fate"][row[lc]] == FATE_CANCEL_EARLY
        status[lc] = np.where(early, np.where(rng.random(early.size) < 0.8, 0, 2),
                              np.where(rng.random(early.size) < 0.5, 0, 1))
        return {
            "driver": Col(driver),
            "rider": Col(rider),
            "district": Col(district, self.districts),
            "duration": Col(duration),
            "speed": Col(speed),
            "price": Col(price),
            "distance": Col(distance),
            "passengers": Col(passengers),
            "pickup_zone": Col(pu),
            "dropoff_zone": Col(do),
            "vendor": Col(driver % len(RIDE_VENDORS), RIDE_VENDORS),
            "amount": Col(amount),
            "method": Col(weighted_choice(rng, n, np.array([0.7, 0.15, 0.15])), ["card", "cash", "wallet"]),
            "rating": Col(1 + weighted_choice(rng, n, np.array([0.03, 0.05, 0.12, 0.30, 0.50]))),
            "multiplier": Col(round_to(np.minimum(1.0 + rng.exponential(0.4, n), 10.0), 2)),
            "status": Col(status, ["rider", "driver", "system"]),
            "reason": Col(rng.integers(0, 6, n), ["late", "route", "rude", "vehicle", "price", "other"]),
            "fuel": Col(round_to(rng.uniform(10.0, 60.0, n), 1)),
        }


def _rides_mix() -> dict[str, float]:
    # expected events per Request of the trip model (see docs/generators.md), with 3% more
    # milestone events than trips need so queues stay short (the extra ones are strays)
    slack = 1.03
    return {
        "Request": 1.0, "Accept": 0.95 * slack, "Travel": 6.0, "Pickup": 0.90 * slack,
        "Dropoff": 0.90 * slack, "Cancel": 0.10 * slack, "Wait": 1.0, "Reroute": 0.3,
        "Payment": 0.90 * slack, "Rate": 0.5, "Tip": 0.3, "Refund": 0.04, "Feedback": 0.2,
        "Complaint": 0.05, "Surge": 0.1, "Login": 0.1, "Logout": 0.1, "Idle": 0.15, "Refuel": 0.03,
        "Break": 0.05,
    }


SPEC = StreamSpec(
    "rides", "ride-sharing trip lifecycles interleaved across concurrent trips",
    "Hamlet ridesharing generator (20 types, 10k events/min)",
    rate=10_000 / 60, burst=3.0, mix=_rides_mix(),
    params={"drivers": 20_000, "riders": 50_000, "districts": 10, "cancel_rate": 0.10,
            "trip_minutes": 16.0, "after_minutes": 10.0},
    model=_Rides,
)
