"""One expression semantics, two evaluators: ``python`` (compiled callables over one
event's attributes) and ``vector`` (numpy over columns, exact or refusing)."""

from trendlake.engine.expr.python import (
    ARITHMETIC,
    COMPARISON,
    Attrs,
    Value,
    attributes,
    compile_adjacent,
    compile_local,
    compile_value,
)

__all__ = [
    "ARITHMETIC",
    "COMPARISON",
    "Attrs",
    "Value",
    "attributes",
    "compile_adjacent",
    "compile_local",
    "compile_value",
]
