"""core.contracts.schema_types: each schema's TypedDict has exactly its properties, required as the schema says, all the way down.

No `from __future__ import annotations` here: on Python 3.11 TypedDict misses NotRequired in string annotations.
"""

from typing import Any, Literal, NotRequired, TypedDict, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from core.contracts.schema_types import SCHEMA_TYPES
from core.contracts.schemas import load_schema, schema_names


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def _object_schemas(node: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas with declared properties that `node` holds: itself, its items, its anyOf options."""
    node = _resolve(node, root)
    if isinstance(node.get("properties"), dict):
        return [node]
    found: list[dict[str, Any]] = []
    if isinstance(node.get("items"), dict):
        found += _object_schemas(node["items"], root)
    for key in ("anyOf", "oneOf"):
        for option in node.get(key, []):
            found += _object_schemas(option, root)
    return found


def _typeddicts(hint: Any) -> list[type]:
    if is_typeddict(hint):
        return [hint]
    return [td for arg in get_args(hint) for td in _typeddicts(arg)]


def _literal_values(hint: Any) -> set[Any] | None:
    if get_origin(hint) is Literal:
        return set(get_args(hint))
    found = [v for arg in get_args(hint) if (v := _literal_values(arg)) is not None]
    return set().union(*found) if found else None


def shape_problems(
    td: type, schema: dict[str, Any], root: dict[str, Any] | None = None, path: str = "$"
) -> list[str]:
    """Every difference between a TypedDict and an object schema, recursively, as readable lines."""
    root = root or schema
    problems: list[str] = []
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", [])) & set(props)
    required_keys, optional_keys = set(td.__required_keys__), set(td.__optional_keys__)  # type: ignore[attr-defined]
    if required_keys | optional_keys != set(props):
        problems.append(
            f"{path} ({td.__name__}): keys {sorted(required_keys | optional_keys)} != properties {sorted(props)}"
        )
    if required_keys != required:
        problems.append(
            f"{path} ({td.__name__}): required keys {sorted(required_keys)} != required {sorted(required)}"
        )
    hints = get_type_hints(td)
    for name, sub in props.items():
        if name not in hints:
            continue
        sub = _resolve(sub, root)
        objects, tds = _object_schemas(sub, root), _typeddicts(hints[name])
        if objects and len(tds) != 1:
            problems.append(
                f"{path}.{name}: the schema has an object with properties, the type {hints[name]} no TypedDict"
            )
        elif objects:
            problems += shape_problems(tds[0], objects[0], root, f"{path}.{name}")
        elif tds:
            problems.append(f"{path}.{name}: typed as a TypedDict but the schema declares no properties")
        enum = sub.get("enum", [sub["const"]] if "const" in sub else None)
        if enum is not None and _literal_values(hints[name]) != {v for v in enum if v is not None}:
            problems.append(f"{path}.{name}: Literal {_literal_values(hints[name])} != enum {enum}")
    return problems


def test_every_schema_file_has_its_typeddict() -> None:
    assert sorted(SCHEMA_TYPES) == schema_names()
    assert len(SCHEMA_TYPES) == 15


@pytest.mark.parametrize("name", schema_names())
def test_typeddict_keys_match_the_schema_properties(name: str) -> None:
    schema = load_schema(name)
    assert shape_problems(SCHEMA_TYPES[name], schema) == []


class _Inner(TypedDict):
    a: int


class _Wrong(TypedDict):
    kept: str
    extra: NotRequired[str]
    inner: _Inner
    mode: Literal["x"]


def test_the_check_reports_missing_extra_optional_nested_and_enum_differences() -> None:
    schema = {
        "type": "object",
        "required": ["kept", "extra", "inner", "mode", "missing"],
        "properties": {
            "kept": {"type": "string"},
            "extra": {"type": "string"},
            "missing": {"type": "string"},
            "inner": {"type": "object", "required": ["a", "b"], "properties": {"a": {}, "b": {}}},
            "mode": {"enum": ["x", "y"]},
        },
    }
    assert shape_problems(_Wrong, schema) == [
        "$ (_Wrong): keys ['extra', 'inner', 'kept', 'mode'] != properties ['extra', 'inner', 'kept', 'missing', 'mode']",
        "$ (_Wrong): required keys ['inner', 'kept', 'mode'] != required ['extra', 'inner', 'kept', 'missing', 'mode']",
        "$.inner (_Inner): keys ['a'] != properties ['a', 'b']",
        "$.inner (_Inner): required keys ['a'] != required ['a', 'b']",
        "$.mode: Literal {'x'} != enum ['x', 'y']",
    ]
