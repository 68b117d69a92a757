"""A toy sharing kind, ``twins``: what a new kind is (its own files, one registry line per side).

Queries that are the same query under other names are computed once. Engine
side: ``kind.py`` (the ``Kind`` contract) and ``twins.json`` (its body
schema); optimizer side: ``candidates.py``. ``register`` adds the two
registry lines (``engine.shared.KINDS``, ``optimizer.candidates.KINDS``).
"""
