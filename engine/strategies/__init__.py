"""Per-query evaluation strategies: the two-step reference, GRETA and COGRA."""
