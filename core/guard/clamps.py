"""Numbers just out of range are clamped with a note, not rejected.

A model that writes `"persona_affect_intensity": 1.4` for a 0..1 field means "very"; throwing the whole
trailer or extraction away for it (and spending a repair or reflection call) loses everything else it said.
`clamp_numbers` walks a JSON value beside its schema (properties, items, local $refs) and brings each number
with a `minimum` / `maximum` into range, returning one Japanese note per change.
"""

from __future__ import annotations

import copy
from typing import Any

Notes = list[str]


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return node if isinstance(node, dict) else {}
    return schema


def _walk(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str, notes: Notes) -> Any:
    schema = _resolve(schema, root)
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in list(value):
            if isinstance(props.get(key), dict):
                value[key] = _walk(value[key], props[key], root, f"{path}.{key}", notes)
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_walk(v, schema["items"], root, f"{path}[{i}]", notes) for i, v in enumerate(value)]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    low, high = schema.get("minimum"), schema.get("maximum")
    clamped = value
    if isinstance(low, int | float) and value < low:
        clamped = low
    if isinstance(high, int | float) and value > high:
        clamped = high
    if clamped != value:
        where = path.removeprefix("$.") or "値"
        notes.append(f"{where}: {value} は範囲外のため {clamped} に丸めました")
    return clamped


def clamp_numbers(value: Any, schema: dict[str, Any]) -> tuple[Any, Notes]:
    """A copy of `value` with every out-of-range number clamped to its schema's bounds, and the notes."""
    notes: Notes = []
    return _walk(copy.deepcopy(value), schema, schema, "$", notes), notes
