"""The compiled validator (jsonschema-rs) and jsonschema agree on every bundled schema.

The guard asks the compiled validator whether a reply is valid and goes to jsonschema only for the error
messages of an invalid one (core.contracts.schemas). Were they ever to disagree, a reply jsonschema rejects
would pass the guard, or a valid one would come back with no error to send: so every schema is checked
with values drawn near its own shape (every field present, fields dropped or added, wrong types, numbers and
lengths at and across their bounds, integral floats, booleans where numbers belong).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.contracts import schemas
from core.contracts.schemas import is_valid, load_schema, schema_names, validation_errors, validator_for

JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
ANY_JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _unique_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def valid(node: dict[str, Any], root: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values `node` asks for (the compiled and the reference validator decide; this only aims there)."""
    node = _resolve(node, root)
    if "enum" in node:
        return st.sampled_from(node["enum"])
    if "const" in node:
        return st.just(node["const"])
    if "anyOf" in node:
        return st.one_of([valid(option, root, depth + 1) for option in node["anyOf"]])
    kind = node.get("type")
    if isinstance(kind, list):
        return st.one_of([valid({**node, "type": k}, root, depth) for k in kind])
    if kind in ("integer", "number"):
        low = node.get("minimum", -5)
        ints = st.integers(min_value=int(low), max_value=int(node.get("maximum", low + 10)))
        if kind == "integer":
            return ints | ints.map(float)  # 3.0 is an integer in Draft 2020-12
        return ints | st.floats(min_value=low, max_value=node.get("maximum", low + 10))
    if kind == "string":
        low = node.get("minLength", 0)
        return st.text(min_size=low, max_size=node.get("maxLength", low + 6))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        item = valid(node.get("items", {}), root, depth + 1) if depth < 6 else JSON_LEAF
        unique = _unique_key if node.get("uniqueItems") else None
        return st.lists(
            item, min_size=node.get("minItems", 0), max_size=node.get("maxItems", 3), unique_by=unique
        )
    if kind == "object":
        props = node.get("properties", {})
        required = set(node.get("required", []))
        return st.fixed_dictionaries(
            {k: valid(v, root, depth + 1) for k, v in props.items() if k in required},
            optional={k: valid(v, root, depth + 1) for k, v in props.items() if k not in required},
        )
    return ANY_JSON


def off(node: dict[str, Any], root: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values a little outside `node`: across its bounds, of a neighbouring type, or anything at all."""
    node = _resolve(node, root)
    kind = node.get("type")
    around: list[st.SearchStrategy[Any]] = [JSON_LEAF, st.booleans(), st.text(max_size=3)]
    if kind in ("integer", "number"):
        for bound in ("minimum", "maximum"):
            if bound in node:
                b = node[bound]
                around += [st.sampled_from([b - 1, b + 1, b - 0.5, b + 0.5, float(b)])]
    if kind == "string":
        size = node.get("maxLength", node.get("minLength", 1))
        around += [st.text(min_size=size, max_size=size + 2), st.integers(0, 3)]
    if kind == "array" and "maxItems" in node:
        around += [
            st.lists(
                valid(node.get("items", {}), root, 1),
                min_size=node["maxItems"] + 1,
                max_size=node["maxItems"] + 2,
            )
        ]
    return st.one_of(around)


def near(node: dict[str, Any], root: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Mostly valid values with one thing wrong somewhere (or nothing): a field off its bounds or type, a
    required field dropped, a field added."""
    node = _resolve(node, root)
    if node.get("type") == "object" and node.get("properties") and depth < 6:
        props = node["properties"]

        @st.composite
        def one_field_off(draw: st.DrawFn) -> Any:
            value = draw(valid(node, root, depth))
            if not isinstance(value, dict):  # valid() of a deep node may give a leaf: nothing to put off then
                return value
            name = draw(st.sampled_from(sorted(props)))
            how = draw(st.sampled_from(["inner", "drop", "extra"]))
            if how == "inner":
                value[name] = draw(near(props[name], root, depth + 1))
            elif how == "drop":
                value.pop(name, None)
            else:
                value[draw(st.text(min_size=1, max_size=4))] = draw(JSON_LEAF)
            return value

        return valid(node, root, depth) | one_field_off()
    if node.get("type") == "array" and depth < 6:
        item = node.get("items", {})
        return (
            valid(node, root, depth)
            | st.lists(near(item, root, depth + 1), min_size=1, max_size=3)
            | off(node, root)
        )
    return valid(node, root, depth) | off(node, root)


@pytest.mark.parametrize("name", schema_names())
def test_compiled_validator_agrees_with_jsonschema(name: str) -> None:
    schema = load_schema(name)
    reference = validator_for(schema)
    seen = {True: 0, False: 0}

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(near(schema, schema))
    def agree(instance: Any) -> None:
        instance = json.loads(json.dumps(instance))  # what the guard validates: parsed JSON
        expected = reference.is_valid(instance)
        assert is_valid(schema, instance) is expected, json.dumps(instance, ensure_ascii=False)
        assert (validation_errors(schema, instance) == []) is expected
        seen[expected] += 1

    agree()
    assert seen[False] > 0  # the strategy reached invalid values of this schema...
    assert seen[True] > 0, seen  # ...and valid ones


def test_valid_and_invalid_examples_take_the_expected_path(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "maximum": 3}}}
    calls: list[Any] = []
    real = schemas.validator_for

    def counting(s: dict[str, Any]) -> Any:
        calls.append(s)
        return real(s)

    monkeypatch.setattr(schemas, "validator_for", counting)
    assert validation_errors(schema, {"n": 2}) == []
    assert calls == []  # a valid value never reaches jsonschema
    assert validation_errors(schema, {"n": 4}) == ["$.n: 4 is greater than the maximum of 3"]
    assert len(calls) == 1  # an invalid one does, for its messages


@pytest.mark.parametrize(
    ("instance", "expected"),
    [
        # a lone surrogate, then a key that is not a string: the compiled validator cannot take them
        ({"s": "a\ud800"}, False),
        ({"s": "o", 1: "x"}, True),
    ],
)
def test_values_json_cannot_hold_fall_back_to_jsonschema(instance: dict[Any, Any], expected: bool) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 1}}}
    assert is_valid(schema, instance) is expected
    assert is_valid(schema, instance) is validator_for(schema).is_valid(instance)
