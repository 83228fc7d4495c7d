"""openai_strict_schema / is_strict_compatible: a table of schemas and their strict copies."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest

from core.contracts.schemas import load_schema, schema_names, strict_copy
from core.contracts.strict_copies import UNSUPPORTED_KEYWORDS, is_strict_compatible, openai_strict_schema
from core.flows.knowledge.interview import wire_turn_schema

CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    (
        "all required stays non-nullable",
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "optional becomes nullable and required",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a"],
        },
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": ["integer", "null"]}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "type list gains null once",
        {
            "type": "object",
            "properties": {"a": {"type": ["string", "number"]}, "b": {"type": ["string", "null"]}},
        },
        {
            "type": "object",
            "properties": {"a": {"type": ["string", "number", "null"]}, "b": {"type": ["string", "null"]}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "optional enum with type",
        {"type": "object", "properties": {"c": {"type": "string", "enum": ["x", "y"]}}},
        {
            "type": "object",
            "properties": {"c": {"type": ["string", "null"], "enum": ["x", "y", None]}},
            "required": ["c"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "optional enum without type",
        {"type": "object", "properties": {"c": {"enum": ["x", 1]}}},
        {
            "type": "object",
            "properties": {"c": {"enum": ["x", 1, None]}},
            "required": ["c"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "optional const is wrapped in anyOf",
        {"type": "object", "properties": {"k": {"const": "fixed"}}},
        {
            "type": "object",
            "properties": {"k": {"anyOf": [{"const": "fixed"}, {"type": "null"}]}},
            "required": ["k"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "optional $ref is wrapped, $defs converted",
        {
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P"}},
            "$defs": {"P": {"type": "object", "properties": {"q": {"type": "string"}}}},
        },
        {
            "type": "object",
            "properties": {"p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]}},
            "$defs": {
                "P": {
                    "type": "object",
                    "properties": {"q": {"type": ["string", "null"]}},
                    "required": ["q"],
                    "additionalProperties": False,
                }
            },
            "required": ["p"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "optional anyOf gains a null branch",
        {"type": "object", "properties": {"u": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
        {
            "type": "object",
            "properties": {"u": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}},
            "required": ["u"],
            "additionalProperties": False,
        },
        True,
    ),
    (
        "nested objects and arrays of objects",
        {
            "type": "object",
            "required": ["items"],
            "properties": {
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string", "minLength": 1},
                            "meta": {
                                "type": "object",
                                "properties": {"score": {"type": "number", "maximum": 1}},
                            },
                        },
                    },
                }
            },
        },
        {
            "type": "object",
            "required": ["items"],
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name", "meta"],
                        "properties": {
                            "name": {"type": "string"},
                            "meta": {
                                "type": ["object", "null"],
                                "properties": {"score": {"type": ["number", "null"]}},
                                "required": ["score"],
                                "additionalProperties": False,
                            },
                        },
                        "additionalProperties": False,
                    },
                }
            },
            "additionalProperties": False,
        },
        True,
    ),
    (
        "unsupported keywords removed, title/description kept",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "T",
            "type": "object",
            "required": ["s", "n", "l"],
            "properties": {
                "s": {
                    "type": "string",
                    "pattern": "^a",
                    "format": "date",
                    "maxLength": 3,
                    "description": "d",
                },
                "n": {"type": "number", "minimum": 0, "exclusiveMaximum": 9, "multipleOf": 0.5, "default": 1},
                "l": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 4},
            },
            "minProperties": 1,
        },
        {
            "title": "T",
            "type": "object",
            "required": ["s", "n", "l"],
            "properties": {
                "s": {"type": "string", "description": "d"},
                "n": {"type": "number"},
                "l": {"type": "array", "items": {"type": "string"}},
            },
            "additionalProperties": False,
        },
        True,
    ),
    (
        "free-form object keeps additionalProperties and is not strict-compatible",
        {"type": "object", "properties": {"extra": {"type": ["object", "null"]}}, "required": ["extra"]},
        {
            "type": "object",
            "properties": {"extra": {"type": ["object", "null"]}},
            "required": ["extra"],
            "additionalProperties": False,
        },
        False,
    ),
    (
        "free-form with explicit additionalProperties schema",
        {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        False,
    ),
]


@pytest.mark.parametrize(("label", "schema", "expected", "compatible"), CASES, ids=[c[0] for c in CASES])
def test_strict_copy(label: str, schema: dict[str, Any], expected: dict[str, Any], compatible: bool) -> None:
    original = copy.deepcopy(schema)
    out = openai_strict_schema(schema)
    assert out == expected
    assert schema == original, "the input must not be mutated"
    assert is_strict_compatible(schema) is compatible
    jsonschema.Draft202012Validator.check_schema(out)


def test_returns_independent_copy() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"enum": ["x"]}}},
        "required": ["a"],
    }
    out = openai_strict_schema(schema)
    out["properties"]["a"]["items"]["enum"].append("y")
    assert schema["properties"]["a"]["items"]["enum"] == ["x"]


def test_no_unsupported_keyword_survives_anywhere() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "string", "pattern": "x"}, {"type": "integer", "minimum": 1}]},
            "b": {"oneOf": [{"type": "object", "properties": {"c": {"type": "string", "format": "email"}}}]},
            "d": {"allOf": [{"type": "string", "minLength": 2}]},
        },
    }
    text = json.dumps(openai_strict_schema(schema))
    for keyword in UNSUPPORTED_KEYWORDS:
        assert f'"{keyword}"' not in text


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {"anyOf": [{"type": "object", "properties": {}}]},
        {"type": "object", "properties": {"a": {"not": {"type": "string"}}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}},
    ],
)
def test_not_strict_compatible(schema: dict[str, Any]) -> None:
    assert is_strict_compatible(schema) is False


def test_optional_becomes_nullable_keeps_valid_answers_valid() -> None:
    schema = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "kind": {"enum": ["a", "b"]},
            "tag": {"const": "t"},
            "sub": {"type": "object", "properties": {"x": {"type": "integer"}}},
        },
    }
    strict = jsonschema.Draft202012Validator(openai_strict_schema(schema))
    assert strict.is_valid({"name": "n", "kind": None, "tag": None, "sub": None})
    assert strict.is_valid({"name": "n", "kind": "a", "tag": "t", "sub": {"x": None}})
    assert not strict.is_valid({"name": "n", "kind": "c", "tag": None, "sub": None})
    assert not strict.is_valid({"name": "n", "kind": None, "tag": None, "sub": None, "extra": 1})


def test_every_schema_sent_to_a_model_works_in_openai_strict_mode():
    # The knowledge turn goes out as its wire schema; the entry and review record are only checked locally.
    local_only = {"knowledge_llm_turn", "knowledge_llm_entry", "review_record"}
    sent = [load_schema(n) for n in schema_names() if n not in local_only]
    sent.append(wire_turn_schema(load_schema("knowledge_llm_turn"), load_schema("knowledge_llm_entry")))
    assert len(sent) >= 12
    for schema in sent:
        assert strict_copy(schema) is not None, schema.get("title")
