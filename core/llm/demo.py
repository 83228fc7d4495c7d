"""The offline demo model: deterministic, no network, labelled as the demo model everywhere.

A persona plays one flow: it gets the request and returns the raw reply text. The caller passes the
personas in, keyed by flow tag (`DemoClient(model, personas={"knowledge": fn})`; the app takes them from
core.flows.registry), so this module knows no flow. A request whose flow has no persona gets a generic
reply: JSON requests a valid instance built from the schema itself (Japanese placeholders), text
requests a short Japanese reply.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from core.debuglog.events import WireFacts
from core.llm.base import LLMClient, LLMReply, LLMRequest, TextStream, Usage, stream_from_reply
from core.llm.descriptor import ClientConfig, ProviderDescriptor

DEMO_LABEL = "デモモデル（オフライン）"
Persona = Callable[[LLMRequest], str]


def instance_from_schema(schema: dict[str, Any], root: dict[str, Any] | None = None, key: str = "値") -> Any:
    """A deterministic instance that validates against `schema` (Japanese placeholder text)."""
    root = root or schema
    if "$ref" in schema and schema["$ref"].startswith("#/"):
        return instance_from_schema(_resolve_ref(schema["$ref"], root), root, key)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    merged = _merge_combinator(schema)
    if merged is not None:
        return instance_from_schema(merged, root, key)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    return _instance_of_type(kind, schema, root, key)


def _resolve_ref(ref: str, root: dict[str, Any]) -> Any:
    """The schema a local `#/...` reference points at."""
    target: Any = root
    for part in ref[2:].split("/"):
        target = target[part]
    return target


def _merge_combinator(schema: dict[str, Any]) -> dict[str, Any] | None:
    """anyOf / oneOf / allOf folded into one plain schema (the first non-null option); None without one."""
    for combo in ("anyOf", "oneOf"):
        if combo in schema:
            base = {k: v for k, v in schema.items() if k != combo}
            options = [s for s in schema[combo] if s.get("type") != "null"] or schema[combo]
            if "type" in base or "properties" in base:  # the combo only constrains: every property is filled
                return {**options[0], **base}
            return {**base, **options[0]}
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(part)
        return merged
    return None


def _instance_of_type(kind: str, schema: dict[str, Any], root: dict[str, Any], key: str) -> Any:
    """An instance of one plain JSON type (object, array, number, integer, boolean, null or string)."""
    if kind == "object":
        props = schema.get("properties", {})
        return {name: instance_from_schema(sub, root, name) for name, sub in props.items()}
    if kind == "array":
        count = max(1, schema.get("minItems", 1))
        items = schema.get("items", {"type": "string"})
        if schema.get("uniqueItems") and items.get("type") in ("string", None):
            return [f"（デモ）{key}{i + 1}" for i in range(count)]
        return [instance_from_schema(items, root, key) for _ in range(count)]
    if kind in ("number", "integer"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 1)))
        mid = (low + high) / 2
        return int(mid) if kind == "integer" else round(mid, 2)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    text = f"（デモ）{schema.get('description', key)}"
    text = text.ljust(schema.get("minLength", 0), "。")
    return text[: schema["maxLength"]] if "maxLength" in schema else text


def last_user_text(request: LLMRequest) -> str:
    """The content of the last user message (what the demo persona answers)."""
    return next((m["content"] for m in reversed(request.messages) if m["role"] == "user"), "")


class DemoClient:
    """The offline demo model. Deterministic: the same request always gets the same reply."""

    provider = "demo"
    sdk = "demo"
    base_host: str | None = None  # no network

    def __init__(self, model: str = "katachi-demo", personas: Mapping[str, Persona] | None = None):
        self.model = model
        self.personas: dict[str, Persona] = dict(personas or {})

    def complete(self, request: LLMRequest) -> LLMReply:
        start = time.perf_counter()
        persona = self.personas.get(request.tags.get("flow", ""))
        if persona is not None:
            text = persona(request)
        elif request.json_schema is not None:
            text = json.dumps(instance_from_schema(request.json_schema.schema), ensure_ascii=False)
        else:
            asked = last_user_text(request).strip().splitlines()
            topic = asked[-1][:40] if asked else "ご質問"
            text = f"（デモモデルの応答）「{topic}」について承りました。実際のモデルを使うには、サイドバーでプロバイダーを設定してください。"
        prompt_chars = sum(len(m["content"]) for m in request.messages)
        return LLMReply(
            text=text,
            finish_reason="stop",
            usage=Usage(prompt_chars // 2, len(text) // 2),
            latency_ms=(time.perf_counter() - start) * 1000,
            provider=self.provider,
            model=self.model,
            wire=WireFacts(
                sdk=self.sdk,
                wire_schema=request.json_schema.schema if request.json_schema is not None else None,
            ),
        )

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


def _build_demo(model: str, config: ClientConfig) -> LLMClient:
    return DemoClient(model, personas=config.personas)


DEMO = ProviderDescriptor(
    name="demo",
    label="デモモデル",
    default_model="katachi-demo",
    settings=(),
    secret_settings=(),
    ready=lambda _credentials: True,  # offline: nothing to configure
    build=_build_demo,
    missing_hint="",
)
