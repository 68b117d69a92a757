"""Trades, quotes and orders with per-company random-walk prices: the ``stocks`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import (
    Col,
    Context,
    Model,
    StreamSpec,
    group_cumsum,
    round_to,
    weighted_choice,
)

STOCK_SECTORS = ["tech", "energy", "finance", "health", "industrials", "materials",
                 "utilities", "consumer", "staples", "telecom", "realestate"]


def _ticker(i: int) -> str:
    """A stable made-up ticker for company ``i`` (3 letters, then 4 beyond 17576)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    x = (i * 7919 + 4099) % (26**3) if i < 26**3 else 26**3 + i
    out = ""
    width = 3 if i < 26**3 else 4
    for _ in range(width):
        x, d = divmod(x, 26)
        out = letters[d] + out
    return out


class _Stocks(Model):
    """Per-company geometric random walks: consecutive prices of a company rise about half the time."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        p = ctx.params
        self.n = int(p["companies"])
        self.traders = int(p["traders"])
        if self.n < 1 or self.traders < 1:
            raise ValueError("companies and traders must be >= 1")
        self.vol = float(p["volatility"])
        setup = ctx.rng("companies")
        self.tickers = [_ticker(i) for i in range(self.n)]
        self.sector = np.arange(self.n) % len(STOCK_SECTORS)
        self.logp = np.log(setup.lognormal(np.log(50.0), 0.8, self.n).clip(2.0, 2000.0))
        self.volf = setup.uniform(0.5, 2.0, self.n)
        self.popularity = 1.0 / np.arange(1, self.n + 1) ** 0.8
        setup.shuffle(self.popularity)

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        company = weighted_choice(rng, n, self.popularity)
        steps = rng.normal(0.0, 1.0, n) * self.vol * self.volf[company]
        price = round_to(np.maximum(np.exp(group_cumsum(company, steps, self.logp)), 0.01), 2)
        c = self.ctx.code
        volume = np.where(
            codes == c["Trade"], 1 + rng.lognormal(5.0, 1.0, n).astype(np.int64),
            np.where(codes == c["Halt"], 0, 100 * (1 + rng.poisson(2.5, n))),
        )
        return {
            "company": Col(company, self.tickers),
            "sector": Col(self.sector[company], STOCK_SECTORS),
            "price": Col(price),
            "volume": Col(volume.astype(np.int64)),
            "side": Col(rng.integers(0, 2, n), ["buy", "sell"]),
            "open": Col(price, valid=np.zeros(n, bool)),
            "high": Col(price, valid=np.zeros(n, bool)),
            "low": Col(price, valid=np.zeros(n, bool)),
            "trader": Col(rng.integers(0, self.traders, n)),
        }


SPEC = StreamSpec(
    "stocks", "trades, quotes and orders with per-company random-walk prices",
    "Hamlet/GRETA stock data sets (220 companies, 4.5k events/min)",
    rate=4_500 / 60, burst=10.0,
    mix={"Trade": 0.35, "Bid": 0.25, "Ask": 0.25, "Order": 0.10, "Cancel": 0.045, "Halt": 0.005},
    params={"companies": 220, "traders": 1000, "volatility": 0.002},
    model=_Stocks,
)
