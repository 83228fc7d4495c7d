"""Strict-mode copies of JSON Schemas for structured outputs (OpenAI strict, Anthropic output_config).

OpenAI's strict structured outputs accept a subset of JSON Schema: every object must list all of its
properties in `required` and set `additionalProperties: false`, and many validation keywords are
rejected. `openai_strict_schema` rewrites a schema into that subset without changing what a valid
answer looks like: a property that was optional becomes required-but-nullable, so the model writes
`null` where it would have left the key out. The guard downstream validates against the original
schema, so callers should drop `null`s of optional keys (or accept them) when they validate.

`openai_strict_schema` and `is_strict_compatible` are pure; `strict_copy` memoizes both per schema object,
so the clients do no schema work on the request path. It lives beside core.contracts.schemas (schema loading), below
core.llm: the provider clients import it, never the other way round.
"""

from __future__ import annotations

import copy
from typing import Any

# Keywords strict mode rejects (or that the rewrite would make misleading). `title` and
# `description` are kept: they are accepted and help the model.
UNSUPPORTED_KEYWORDS = frozenset(
    {
        "$schema",
        "uniqueItems",
        "pattern",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "patternProperties",
        "minProperties",
        "maxProperties",
        "default",
    }
)

# Composition keywords strict mode cannot express; a schema using them is sent non-strict.
_INCOMPATIBLE_KEYWORDS = frozenset({"not", "if", "then", "else", "dependentRequired", "dependentSchemas"})

_SCHEMA_LIST_KEYS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAP_KEYS = ("$defs", "definitions")
_NULL_SCHEMA: dict[str, Any] = {"type": "null"}

# id(schema) -> (schema, strict copy or None); keeping the schema alive means its id is never reused.
_strict: dict[int, tuple[dict[str, Any], dict[str, Any] | None]] = {}


def openai_strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a strict-mode copy of `schema`; the argument is never mutated.

    Every object with `properties` gets `additionalProperties: false` and `required` listing all of
    its properties; properties that were not required become nullable. Keywords in
    `UNSUPPORTED_KEYWORDS` are removed at every level. Objects without declared properties keep
    their `additionalProperties` as is: such a schema cannot be strict (see `is_strict_compatible`),
    but the copy is still a cleaner schema to send with `strict: false`.
    """
    converted: dict[str, Any] = _convert(schema, nullable=False)
    return converted


def is_strict_compatible(schema: dict[str, Any]) -> bool:
    """Whether `schema` can be sent with `strict: true` once passed through `openai_strict_schema`.

    False when the root is not an object, when any object declares no `properties` (a free-form
    object such as `{"type": ["object", "null"]}`), or when a keyword strict mode cannot express
    (`not`, `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`) appears anywhere.
    """
    if not isinstance(schema, dict) or not _is_object(schema):
        return False
    return _compatible(schema)


def strict_copy(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The OpenAI strict-mode copy of this schema object, or None when strict mode cannot express it.

    Built once per schema object: no per-call schema work on the request path.
    """
    hit = _strict.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    copy_ = openai_strict_schema(schema) if is_strict_compatible(schema) else None
    _strict[id(schema)] = (schema, copy_)
    return copy_


def _is_object(node: dict[str, Any]) -> bool:
    type_ = node.get("type")
    if type_ == "object" or (isinstance(type_, list) and "object" in type_):
        return True
    return "properties" in node


def _children(node: dict[str, Any]) -> list[Any]:
    """All direct sub-schemas of `node` (properties, items, compositions, definitions)."""
    found: list[Any] = []
    props = node.get("properties")
    if isinstance(props, dict):
        found.extend(props.values())
    items = node.get("items")
    if isinstance(items, dict):
        found.append(items)
    elif isinstance(items, list):
        found.extend(items)
    for key in _SCHEMA_LIST_KEYS:
        value = node.get(key)
        if isinstance(value, list):
            found.extend(value)
    for key in _SCHEMA_MAP_KEYS:
        value = node.get(key)
        if isinstance(value, dict):
            found.extend(value.values())
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        found.append(extra)
    return found


def _compatible(node: Any) -> bool:
    if not isinstance(node, dict):
        return True  # boolean schemas inside lists are left to the server
    if _INCOMPATIBLE_KEYWORDS & node.keys():
        return False
    if _is_object(node) and not isinstance(node.get("properties"), dict):
        return False
    return all(_compatible(child) for child in _children(node))


def _convert(node: Any, *, nullable: bool) -> Any:
    if not isinstance(node, dict):
        return copy.deepcopy(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in UNSUPPORTED_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, dict):
            required = node.get("required")
            required_set = set(required) if isinstance(required, list) else set()
            out[key] = {name: _convert(sub, nullable=name not in required_set) for name, sub in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = _convert(value, nullable=False)
        elif key in ("items", *_SCHEMA_LIST_KEYS) and isinstance(value, list):
            out[key] = [_convert(sub, nullable=False) for sub in value]
        elif key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {name: _convert(sub, nullable=False) for name, sub in value.items()}
        elif key == "additionalProperties" and isinstance(value, dict):
            out[key] = _convert(value, nullable=False)
        else:
            out[key] = copy.deepcopy(value)
    if isinstance(out.get("properties"), dict):
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return _make_nullable(out) if nullable else out


def _make_nullable(node: dict[str, Any]) -> dict[str, Any]:
    """Let `node` also accept null, in the form strict mode understands."""
    if "const" in node:
        if node["const"] is None:
            return node
        return {"anyOf": [node, dict(_NULL_SCHEMA)]}
    if "type" in node:
        type_ = node["type"]
        types = list(type_) if isinstance(type_, list) else [type_]
        if "null" not in types:
            types.append("null")
        node["type"] = types
        if isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        return node
    if isinstance(node.get("enum"), list):
        if None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        return node
    if isinstance(node.get("anyOf"), list) and len(node) == 1:
        if not any(isinstance(v, dict) and v.get("type") == "null" for v in node["anyOf"]):
            node["anyOf"] = [*node["anyOf"], dict(_NULL_SCHEMA)]
        return node
    return {"anyOf": [node, dict(_NULL_SCHEMA)]}
