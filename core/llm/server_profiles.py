"""How each OpenAI-compatible server is asked for schema-constrained output (ARCHITECTURE.md "Model servers").

A profile is an ordered list of structured-output forms (the first is preferred; a rejected form
steps down to the next) and the name of the token-limit parameter. The form that worked is
remembered per base URL for RETRY_UPWARD_AFTER_S, so new clients skip known rejections; after that the preferred
form is tried again (one extra request if the server still rejects it), so a server that has been upgraded or
has recovered is not held to a lesser form for the life of the process.

What the servers accept (sources checked):
- OpenAI, Azure: `response_format: json_schema` with `strict`; Azure's reasoning models reject
  `max_tokens` ("Use 'max_completion_tokens' instead").
- vLLM: `response_format: json_schema` (docs.vllm.ai features/structured_outputs) and json_object;
  its token limit is `max_tokens`.
- Ollama (/v1, ollama/ollama openai/openai.go): `json_schema.schema` is copied verbatim into the
  native `format`, `json_object` becomes `format: "json"`; name and strict are ignored; only
  `max_tokens` is read.
- LM Studio: only `json_schema`; json_object is a 400 "'response_format.type' must be
  'json_schema'" (lmstudio-ai/lmstudio-bug-tracker#189).
- llama.cpp's llama-server: `{"type": "json_object", "schema": ...}` (and json_schema in newer
  builds, ggml-org/llama.cpp#9527); llama-cpp-python's server: type is Literal["text",
  "json_object"] with an optional `schema` (llama_cpp/llama_types.py), json_schema is a 500.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from core.contracts.strict_copies import strict_copy
from core.llm.base import JSONSchemaSpec

JSON_SCHEMA = "json_schema"  # OpenAI structured outputs; strict when the schema allows it
OLLAMA_FORMAT = "ollama_format"  # json_schema carrying the original schema, which Ollama puts in `format`
JSON_OBJECT_SCHEMA = "json_object+schema"  # llama.cpp / llama-cpp-python: JSON mode with a schema
JSON_OBJECT = "json_object"  # bare JSON mode: valid JSON, the schema is only in the prompt and validator
FORMS = (JSON_SCHEMA, OLLAMA_FORMAT, JSON_OBJECT_SCHEMA, JSON_OBJECT)
SCHEMA_FORMS = (JSON_SCHEMA, OLLAMA_FORMAT, JSON_OBJECT_SCHEMA)  # forms the server enforces the schema with


@dataclass(frozen=True)
class ServerProfile:
    """A server's structured-output forms (preferred first) and its token-limit parameter.

    `token_param` None means: `max_completion_tokens` for OpenAI itself, `max_tokens` when a base
    URL points elsewhere (most compatible servers only know the older name).
    """

    name: str
    forms: tuple[str, ...]
    token_param: str | None


PROFILES: dict[str, ServerProfile] = {
    p.name: p
    for p in (
        ServerProfile("auto", (JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT), None),
        ServerProfile("openai", (JSON_SCHEMA,), "max_completion_tokens"),
        ServerProfile("vllm", (JSON_SCHEMA, JSON_OBJECT), "max_tokens"),
        ServerProfile("ollama", (OLLAMA_FORMAT, JSON_OBJECT), "max_tokens"),
        ServerProfile("llamacpp", (JSON_OBJECT_SCHEMA, JSON_OBJECT), "max_tokens"),
        ServerProfile("lmstudio", (JSON_SCHEMA,), "max_tokens"),
        ServerProfile("azure", (JSON_SCHEMA,), "max_completion_tokens"),
    )
}
DEFAULT_PROFILE = "auto"


def get_profile(name: str | None) -> ServerProfile:
    """The profile of that name; unknown names and None give `auto`."""
    return PROFILES.get((name or "").lower(), PROFILES[DEFAULT_PROFILE])


def token_param(profile: ServerProfile, base_url: str | None) -> str:
    """The token-limit parameter name to send."""
    if profile.token_param is not None:
        return profile.token_param
    return "max_tokens" if base_url else "max_completion_tokens"


def response_format_body(form: str, spec: JSONSchemaSpec) -> tuple[dict[str, Any], str]:
    """The `response_format` body of a form for this schema, and the label recorded on the reply."""
    if form == JSON_SCHEMA:
        strict = strict_copy(spec.schema)
        if strict is not None:
            body = {"name": spec.name, "schema": strict, "strict": True}
            return {"type": "json_schema", "json_schema": body}, "json_schema strict"
        # strict mode cannot express this schema (free-form objects): send it as is, not strict
        body = {"name": spec.name, "schema": spec.schema, "strict": False}
        return {"type": "json_schema", "json_schema": body}, "json_schema non-strict"
    if form == OLLAMA_FORMAT:
        return {
            "type": "json_schema",
            "json_schema": {"name": spec.name, "schema": spec.schema},
        }, "ollama format"
    if form == JSON_OBJECT_SCHEMA:
        return {"type": "json_object", "schema": spec.schema}, "json_object+schema"
    if form == JSON_OBJECT:
        return {"type": "json_object"}, "json_object"
    raise ValueError(f"unknown structured-output form: {form}")


def wire_facts(body: dict[str, Any]) -> tuple[bool | None, dict[str, Any] | None]:
    """(strict flag, JSON Schema) of a `response_format` body exactly as sent: the strict
    copy for json_schema strict, the schema of json_object+schema, (None, None) for bare json_object."""
    if body.get("type") == "json_schema":
        inner = body.get("json_schema") or {}
        return inner.get("strict"), inner.get("schema")
    return None, body.get("schema")


def is_response_format_rejection(status: int | None, text: str) -> bool:
    """Whether an HTTP error rejects the structured-output form itself (so a lower form may work).

    400/404/422 naming response_format / json_schema / json_object (OpenAI-style validation), or a
    500 naming them (llama-cpp-python answers an unknown response_format type with a 500
    "Input should be 'text' or 'json_object'"). Any other error is not about the form.
    """
    if status not in (400, 404, 422, 500):
        return False
    lowered = text.lower()
    return any(name in lowered for name in ("response_format", "json_schema", "json_object"))


def downgrade_note(preferred: str, sent: str) -> str:
    """The note every reply carries while a server uses a lower form than its profile prefers."""
    return f"response_format {preferred} not accepted by this server; downgraded to {sent}"


# -- what worked, per base URL, for the process ---------------------------------------------------
RETRY_UPWARD_AFTER_S = 600.0
_lock = threading.Lock()
_working: dict[str, tuple[str, float]] = {}  # base URL -> (form, monotonic time it was remembered)


def remembered_form(base_url: str, now: float | None = None) -> str | None:
    """The form that last worked with this base URL, while it is younger than RETRY_UPWARD_AFTER_S (None
    before any structured call succeeded, and once it is older: the preferred form is tried again)."""
    now = time.monotonic() if now is None else now
    with _lock:
        found = _working.get(base_url)
        if found is None or now - found[1] >= RETRY_UPWARD_AFTER_S:
            return None
        return found[0]


def remember_form(base_url: str, form: str, now: float | None = None) -> None:
    """Record the form that worked with this base URL (read by new clients and the sidebar)."""
    if form not in FORMS:
        raise ValueError(f"unknown structured-output form: {form}")
    with _lock:
        _working[base_url] = (form, time.monotonic() if now is None else now)


def remembered_forms() -> dict[str, str]:
    """Every base URL with the form that works there (a copy, for the sidebar)."""
    with _lock:
        return {url: form for url, (form, _) in _working.items()}


def forget_form(base_url: str) -> None:
    """Forget the form remembered for one base URL (the sidebar's 「構造化出力の形式をもう一度試す」): its next
    structured call tries the profile's preferred form again."""
    with _lock:
        _working.pop(base_url, None)


def forget_forms() -> None:
    """Forget every remembered form (tests; a server swapped behind the same URL)."""
    with _lock:
        _working.clear()
