"""Customers' clicks, carts, purchases and reviews (Sharon's generator): the ``ecommerce`` stream."""

from __future__ import annotations

import numpy as np
from trendlake.datagen.streams.base import (
    US,
    Col,
    Context,
    Model,
    StreamSpec,
    hash_ints,
    round_to,
    weighted_choice,
)

SHOP_CATEGORIES = ["electronics", "books", "home", "toys", "fashion", "sports", "grocery", "beauty",
                   "garden", "music", "office", "pets"]


class _Ecommerce(Model):
    """Customers browsing a few items per session (Sharon: 50 items, 20 customers)."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        p = ctx.params
        self.customers, self.items = int(p["customers"]), int(p["items"])
        ncat = int(p["categories"])
        self.session_us = float(p["session_minutes"]) * 60 * US
        self.per_session = int(p["items_per_session"])
        if min(self.customers, self.items, self.per_session) < 1 or not 1 <= ncat <= len(SHOP_CATEGORIES):
            raise ValueError(f"customers, items, items_per_session must be >= 1 and categories 1..{len(SHOP_CATEGORIES)}")
        if self.session_us <= 0:
            raise ValueError("session_minutes must be > 0")
        self.categories = SHOP_CATEGORIES[:ncat]
        setup = ctx.rng("catalog")
        self.item_price = round_to(setup.lognormal(np.log(25.0), 0.9, self.items).clip(0.5, 5000.0), 2)
        self.item_cat = setup.integers(0, ncat, self.items)
        self.phase = setup.uniform(0, self.session_us, self.customers)

    def segment(self, codes: np.ndarray, ts: np.ndarray, offset: int, rng: np.random.Generator) -> dict[str, Col]:
        n = codes.size
        cust = rng.integers(0, self.customers, n)
        session = np.floor((ts - self.ctx.start_us + self.phase[cust]) / self.session_us).astype(np.int64)
        j = rng.integers(0, self.per_session, n)
        item = (hash_ints(self.ctx.seed, cust, session, j) % np.uint64(self.items)).astype(np.int64)
        discount = np.where(rng.random(n) < 0.1, rng.uniform(0.1, 0.3, n), 0.0)
        return {
            "customer": Col(cust),
            "item": Col(item),
            "category": Col(self.item_cat[item], self.categories),
            "price": Col(round_to(self.item_price[item] * (1.0 - discount), 2)),
            "quantity": Col(np.minimum(1 + rng.poisson(0.3, n), 100)),
            "rating": Col(1 + weighted_choice(rng, n, np.array([0.06, 0.06, 0.13, 0.3, 0.45]))),
        }


SPEC = StreamSpec(
    "ecommerce", "customers' clicks, carts, purchases and reviews",
    "Sharon e-commerce generator (50 items, 20 customers, 3k events/s)",
    rate=3_000.0, burst=1.0,
    mix={"View": 0.40, "Search": 0.15, "AddToCart": 0.12, "RemoveFromCart": 0.03, "Wishlist": 0.05,
         "Checkout": 0.08, "Purchase": 0.10, "Return": 0.02, "Review": 0.05},
    params={"customers": 20, "items": 50, "categories": 8, "session_minutes": 30.0, "items_per_session": 3},
    model=_Ecommerce,
)
