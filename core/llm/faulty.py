"""A wrapper that damages replies and raises provider errors at seeded rates (tests, benchmarks, demos)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

from core.llm.base import (
    LLMClient,
    LLMReply,
    LLMRequest,
    ProviderError,
    ProviderErrorKind,
    TextStream,
    stream_from_reply,
)

CORRUPTIONS = ("code_fence", "prose", "trailing_comma", "missing_field", "wrong_enum", "truncated")
PROVIDER_ERRORS: dict[str, ProviderErrorKind] = {
    "timeout": "timeout",
    "rate_limit": "rate_limit",
    "server_error": "server_error",
}
FAULT_KINDS = (*PROVIDER_ERRORS, *CORRUPTIONS)


def corrupt(text: str, kind: str, schema: dict[str, Any] | None) -> str:
    """Damage a JSON reply the way real models do; returns text unchanged when the kind cannot apply."""
    if kind == "code_fence":
        return f"```json\n{text}\n```"
    if kind == "prose":
        return f"承知しました。以下が出力です。\n{text}\n以上です。"
    if kind == "truncated":
        return text[: max(1, len(text) * 2 // 3)]
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    if kind == "trailing_comma":
        dumped = json.dumps(value, ensure_ascii=False, indent=1)
        return dumped[: dumped.rfind("}")].rstrip() + ",\n}" if dumped.endswith("}") else dumped
    if not isinstance(value, dict) or not schema:
        return text
    if kind == "missing_field":
        required = [k for k in schema.get("required", []) if k in value]
        if required:
            value.pop(required[-1])
    elif kind == "wrong_enum":
        _break_enum(value, schema)
    return json.dumps(value, ensure_ascii=False)


def _break_enum(value: Any, schema: dict[str, Any]) -> bool:
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                if "enum" in sub and isinstance(value[key], str):
                    value[key] = "invalid_" + value[key]
                    return True
                if _break_enum(value[key], sub):
                    return True
    return False


class FaultyClient:
    """`FaultyClient(inner, seed=0, rates={"code_fence": 0.1, "timeout": 0.05})`: one fault per call at most."""

    def __init__(self, inner: LLMClient, seed: int = 0, rates: dict[str, float] | None = None):
        unknown = set(rates or {}) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")
        self.inner = inner
        self.rates = dict(rates or {})
        self.random = random.Random(seed)
        self.provider = inner.provider
        self.model = inner.model
        self.sdk: str | None = getattr(inner, "sdk", None)
        self.base_host: str | None = getattr(inner, "base_host", None)
        self.injected: list[str] = []

    def _draw(self, request: LLMRequest) -> str | None:
        roll, acc = self.random.random(), 0.0
        for kind in FAULT_KINDS:
            if kind in CORRUPTIONS and kind != "truncated" and request.json_schema is None:
                continue
            acc += self.rates.get(kind, 0.0)
            if roll < acc:
                return kind
        return None

    def complete(self, request: LLMRequest) -> LLMReply:
        kind = self._draw(request)
        if kind in PROVIDER_ERRORS:
            self.injected.append(kind)
            raise ProviderError(PROVIDER_ERRORS[kind], f"injected fault: {kind}")
        reply = self.inner.complete(request)
        if kind is None:
            return reply
        self.injected.append(kind)
        schema = request.json_schema.schema if request.json_schema else None
        text = corrupt(reply.text, kind, schema)
        finish = "length" if kind == "truncated" else reply.finish_reason
        return replace(
            reply, text=text, finish_reason=finish, notes=[*reply.notes, f"fault injected: {kind}"]
        )

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))
