"""Event columns as the engine reads them: the NULL rule for attribute values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["clean"]


def clean(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value

