"""OpenAI Chat Completions client (also serves OpenAI-compatible servers through `base_url`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import openai

from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream, Usage
from core.llm.sdk_errors import map_sdk_error, sanitize
from core.schema_strict import strict_copy

DOWNGRADE_NOTE = "response_format json_schema rejected; downgraded to json_object"


def map_openai_error(exc: Exception, api_key: str | None = None) -> ProviderError:
    """Translate an `openai` SDK exception into a `ProviderError` (see core.llm.sdk_errors)."""
    return map_sdk_error(openai, exc, api_key)


def _is_response_format_rejection(exc: openai.APIStatusError) -> bool:
    """A 400/404/422 that complains about response_format / json_schema (unsupported by the server)."""
    if exc.status_code not in (400, 404, 422):
        return False
    text = f"{exc.message} {exc.body}".lower()
    return "response_format" in text or "json_schema" in text


class OpenAIClient:
    """`LLMClient` for OpenAI Chat Completions and compatible servers (Ollama, vLLM, LM Studio, Azure).

    `max_retries=0` by default: retrying is the guard's job, so a 429 or 5xx surfaces at once as a
    `ProviderError`. When a server rejects `response_format: json_schema`, the client falls back to
    `json_object` once and keeps using it for its lifetime, noting the downgrade on every reply.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
        http_client: Any = None,
    ):
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self.json_schema_supported = True
        try:
            self._client = openai.OpenAI(
                api_key=api_key,
                base_url=base_url,
                timeout=timeout,
                max_retries=max_retries,
                http_client=http_client,
            )
        except openai.OpenAIError as exc:  # e.g. no key anywhere
            raise ProviderError("auth", sanitize(str(exc), api_key)) from None

    # -- request building -------------------------------------------------------------------
    def _response_format(self, request: LLMRequest) -> dict[str, Any] | None:
        spec = request.json_schema
        if spec is None:
            return None
        if not self.json_schema_supported:
            return {"type": "json_object"}
        strict = strict_copy(spec.schema)
        if strict is not None:
            body = {"name": spec.name, "schema": strict, "strict": True}
        else:
            body = {"name": spec.name, "schema": spec.schema, "strict": False}
        return {"type": "json_schema", "json_schema": body}

    def _params(self, request: LLMRequest, response_format: dict[str, Any] | None) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": list(request.messages)}
        # OpenAI deprecated `max_tokens` for `max_completion_tokens` (reasoning models reject
        # `max_tokens`), but most OpenAI-compatible servers (Ollama, vLLM, LM Studio, older Azure
        # deployments) only know `max_tokens`. So: the new name for OpenAI, the old one elsewhere.
        if self.base_url:
            params["max_tokens"] = request.max_tokens
        else:
            params["max_completion_tokens"] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if response_format is not None:
            params["response_format"] = response_format
        return params

    def _call(self, request: LLMRequest, **extra: Any) -> tuple[Any, list[str]]:
        """Create a completion, downgrading json_schema to json_object once when it is rejected."""
        notes: list[str] = []
        response_format = self._response_format(request)
        if request.json_schema is not None and not self.json_schema_supported:
            notes.append(DOWNGRADE_NOTE)
        try:
            try:
                return self._client.chat.completions.create(
                    **self._params(request, response_format), **extra
                ), notes
            except openai.APIStatusError as exc:
                if not (response_format and response_format["type"] == "json_schema"):
                    raise
                if not _is_response_format_rejection(exc):
                    raise
            self.json_schema_supported = False
            notes.append(DOWNGRADE_NOTE)
            params = self._params(request, {"type": "json_object"})
            return self._client.chat.completions.create(**params, **extra), notes
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, self._api_key) from None

    # -- LLMClient ----------------------------------------------------------------------------
    def complete(self, request: LLMRequest) -> LLMReply:
        """Send one request and map the ChatCompletion into an `LLMReply`."""
        started = time.perf_counter()
        completion, notes = self._call(request)
        latency = (time.perf_counter() - started) * 1000
        choice = completion.choices[0] if completion.choices else None
        text, finish = "", "other"
        if choice is not None:
            message = choice.message
            finish = choice.finish_reason or "other"
            if getattr(message, "refusal", None):
                text, finish = message.refusal, "refusal"
            else:
                text = message.content or ""
        usage = completion.usage
        return LLMReply(
            text=text,
            finish_reason=finish,
            usage=Usage(
                input_tokens=(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=(usage.completion_tokens or 0) if usage else 0,
            ),
            latency_ms=latency,
            provider=self.provider,
            model=self.model,
            notes=notes,
        )

    def stream(self, request: LLMRequest) -> TextStream:
        """Stream text deltas; `TextStream.reply` is set once the stream is exhausted.

        `stream_options.include_usage` is always sent: OpenAI, vLLM, Ollama and LM Studio accept it,
        and without it a stream carries no token counts. A server that ignores it just leaves the
        usage at zero. Refusal deltas are streamed like text and mark the reply as a refusal.
        The request is sent here, so HTTP errors (429, 5xx, a rejected request) raise
        `ProviderError` from this call; a failure mid-stream raises it from iteration.
        """
        started = time.perf_counter()
        raw, notes = self._call(request, stream=True, stream_options={"include_usage": True})

        def gen() -> Iterator[str]:
            parts: list[str] = []
            refusal = False
            finish = "other"
            usage = Usage()
            try:
                with raw:
                    for chunk in raw:
                        if chunk.usage is not None:
                            usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                        for choice in chunk.choices or []:
                            if choice.finish_reason:
                                finish = choice.finish_reason
                            delta = choice.delta
                            piece = delta.content if delta is not None else None
                            if delta is not None and getattr(delta, "refusal", None):
                                piece, refusal = delta.refusal, True
                            if piece:
                                parts.append(piece)
                                yield piece
            except openai.OpenAIError as exc:
                raise map_openai_error(exc, self._api_key) from None
            stream.reply = LLMReply(
                text="".join(parts),
                finish_reason="refusal" if refusal else finish,
                usage=usage,
                latency_ms=(time.perf_counter() - started) * 1000,
                provider=self.provider,
                model=self.model,
                notes=notes,
            )

        stream = TextStream(gen())
        return stream
