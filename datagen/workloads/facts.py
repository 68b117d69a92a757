"""What a workload generator needs to know about a stream schema (``StreamFacts``): keys, measures, ranges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StreamFacts:
    """What a generator needs to know about a stream schema.

    *Keys* are attributes every event type carries: strings, and longs
    without a declared ``max`` (open-ended identifiers). The first key in
    schema order is the equivalence attribute (``[driver]``, ``[company]``);
    GROUP-BY takes the first string key after it, else the first bounded long
    every type carries, else another key. *Measures* are the other numeric
    attributes, per event type that carries them.
    """

    name: str
    types: tuple[str, ...]
    keys: tuple[str, ...]  # in schema order
    bounded: tuple[str, ...]  # longs every type carries, with a max (xway, lane)
    measures: dict[str, tuple[str, ...]]  # event type -> numeric non-key attributes it carries
    kinds: dict[str, str]  # attribute -> long | double | string | boolean
    ranges: dict[str, tuple[float, float]]  # numeric attribute -> (low, high) for literals

    @classmethod
    def from_schema(cls, schema: dict[str, Any], ranges: dict[str, tuple[float, float]] | None = None) -> StreamFacts:
        types = tuple(schema["event_types"])
        attrs: dict[str, dict[str, Any]] = schema.get("attributes", {})

        def carriers(spec: dict[str, Any]) -> set[str]:
            carried = spec.get("types", "*")
            return set(types) if carried == "*" else set(carried)

        keys, bounded, numeric = [], [], []
        for name, spec in attrs.items():
            kind = spec.get("type")
            everywhere = carriers(spec) >= set(types)
            if everywhere and (kind == "string" or (kind == "long" and "max" not in spec)):
                keys.append(name)
                continue
            if everywhere and kind == "long":
                bounded.append(name)
            if kind in ("long", "double"):
                numeric.append(name)
        measures = {t: tuple(a for a in numeric if t in carriers(attrs[a])) for t in types}
        given = dict(ranges or {})
        bounds: dict[str, tuple[float, float]] = {}
        for name, spec in attrs.items():
            if spec.get("type") not in ("long", "double"):
                continue
            if name in given:
                bounds[name] = (float(given[name][0]), float(given[name][1]))
                continue
            lo = float(spec.get("min", 0))
            hi = float(spec.get("max", lo + 100))
            bounds[name] = (lo, hi)
        return cls(
            name=str(schema.get("stream", "stream")),
            types=types,
            keys=tuple(keys),
            bounded=tuple(bounded),
            measures=measures,
            kinds={n: str(s.get("type")) for n, s in attrs.items()},
            ranges=bounds,
        )

    @property
    def category_keys(self) -> tuple[str, ...]:
        return tuple(k for k in self.keys if self.kinds.get(k) == "string")

    def kleene_type(self, wanted: str = "") -> str:
        """The type the shared Kleene sub-pattern repeats: ``wanted``, else the one with most
        double measures (the earliest in the schema among equals)."""
        if wanted:
            if wanted not in self.types:
                raise ValueError(f"kleene_type {wanted!r} is not an event type of stream {self.name} ({', '.join(self.types)})")
            return wanted

        def doubles(t: str) -> int:
            return sum(1 for a in self.measures[t] if self.kinds.get(a) == "double")

        return max(self.types, key=lambda t: (doubles(t), -self.types.index(t)))

    def equivalence(self) -> list[str]:
        """The equivalence attribute (the first key), as a list (empty without keys)."""
        return list(self.keys[:1])

    def group_by(self) -> list[str]:
        """The default GROUP-BY attribute, as a list (empty when there is none besides the equivalence)."""
        rest = [k for k in self.category_keys if k not in self.keys[:1]]
        if rest:
            return rest[:1]
        if self.bounded:
            return list(self.bounded[:1])
        return list(self.keys[1:2])

    def grouping_keys(self) -> list[str]:
        """Attributes a query may group by: every key but the equivalence one, and the bounded ones."""
        return [k for k in self.keys[1:]] + list(self.bounded)
