"""Load schemas/*.schema.json once, check them, and cache one validator per schema (spec 00 移植手順 1).

Every reply is checked twice over: a compiled Draft 2020-12 validator (jsonschema-rs) answers "valid?" in about a
microsecond, and only an instance it rejects goes through jsonschema's validator for the error messages the guard
sends back in a repair call. Both implement Draft 2020-12; `tests/core/test_schema_fast_path.py` checks that
they agree on every bundled schema."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.contracts.strict_copies import strict_copy

__all__ = [
    "SCHEMA_DIR",
    "UnknownSchemaError",
    "is_valid",
    "load_schema",
    "schema_names",
    "strict_copy",
    "validation_errors",
    "validator_for",
]

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"

# id(schema) -> (schema, value); keeping the schema alive means its id is never reused.
if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

_validators: dict[int, tuple[dict[str, Any], Draft202012Validator]] = {}
_fast: dict[int, tuple[dict[str, Any], Any]] = {}


class UnknownSchemaError(KeyError):
    """A schema name that has no file under schemas/."""


def schema_names() -> list[str]:
    """Names of every bundled schema (file name without `.schema.json`)."""
    return sorted(p.name.removesuffix(".schema.json") for p in SCHEMA_DIR.glob("*.schema.json"))


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Load and check `schemas/{name}.schema.json`; the same dict is returned on every call."""
    if name not in schema_names():
        raise UnknownSchemaError(name)
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - jsonschema: when a flow first needs a schema

    schema: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema


def validator_for(schema: dict[str, Any]) -> Draft202012Validator:
    """The cached Draft 2020-12 validator of this schema object (built on first use)."""
    hit = _validators.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - see load_schema

    validator = Draft202012Validator(schema)
    _validators[id(schema)] = (schema, validator)
    return validator


def _fast_validator(schema: dict[str, Any]) -> Any:
    hit = _fast.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    import jsonschema_rs  # noqa: PLC0415 - see load_schema

    validator = jsonschema_rs.Draft202012Validator(schema, validate_formats=False)
    _fast[id(schema)] = (schema, validator)
    return validator


def is_valid(schema: dict[str, Any], instance: Any) -> bool:
    """Whether `instance` satisfies `schema` (the compiled validator; jsonschema's when it cannot take the value)."""
    try:
        return bool(_fast_validator(schema).is_valid(instance))
    except (ValueError, TypeError, OverflowError):  # a value JSON cannot hold (a tuple, a lone surrogate, …)
        return validator_for(schema).is_valid(instance)


def validation_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    """Every error of `instance` against `schema`, as `$.path: message`, in a stable order."""
    if is_valid(schema, instance):
        return []
    errors = []
    for err in validator_for(schema).iter_errors(instance):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        errors.append(f"{path}: {err.message}")
    return sorted(errors)
