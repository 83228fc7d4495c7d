"""Anthropic Messages API client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2

from core.contracts.strict_copies import strict_copy
from core.debuglog.events import WireFacts
from core.llm.base import (
    FinishReason,
    LLMReply,
    LLMRequest,
    Message,
    ProviderError,
    TextStream,
    Usage,
    as_finish_reason,
    base_host,
)
from core.llm.deadline import Deadlines
from core.llm.deadline_transport import deadline_http_client, httpx_timeout
from core.llm.sdk_errors import MALFORMED, malformed, map_sdk_error, sanitize

CONVERSATION_START = "（会話の開始）"
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "refusal": "refusal",
}


def map_anthropic_error(exc: Exception, api_key: str | None = None) -> ProviderError:
    """Translate an `anthropic` SDK exception into a `ProviderError` (see core.llm.sdk_errors)."""
    return map_sdk_error(anthropic, exc, api_key)


def split_messages(messages: list[Message]) -> tuple[str, list[dict[str, str]]]:
    """Adapt OpenAI-style messages to the Messages API: (system text, alternating turns).

    System messages are taken out and joined by blank lines. Adjacent messages of one role are
    merged (contents joined by a blank line) because the API expects user/assistant turns to
    alternate. The API also wants the first turn to be the user's, so when the conversation opens
    with an assistant message a short user turn "（会話の開始）" is put in front of it.
    """
    system_parts: list[str] = []
    turns: list[dict[str, str]] = []
    for message in messages:
        role, content = message.get("role", "user"), message.get("content", "")
        if role == "system":
            system_parts.append(content)
            continue
        role = "assistant" if role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user", "content": CONVERSATION_START})
    return "\n\n".join(system_parts), turns


def anthropic_output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema for `output_config.format`: the strict copy when possible, else the original."""
    strict = strict_copy(schema)
    return strict if strict is not None else schema


class AnthropicClient:
    """`LLMClient` for the Anthropic Messages API (structured output through `output_config`).

    `max_retries=0` by default: retrying is the guard's job. The installed SDK's `messages.create`
    has no `temperature` argument, so a temperature travels in `extra_body` and only when set. Every
    call has `deadlines` (core.llm.deadline); a body that is not a Message (HTML with status 200,
    invalid JSON, SSE events out of order) raises `ProviderError("malformed")`.
    """

    provider = "anthropic"
    sdk = f"anthropic {anthropic.__version__}"

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
        deadlines: Deadlines | None = None,
    ):
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self.deadlines = deadlines or Deadlines.from_timeout(timeout)
        try:
            self._client = anthropic.Anthropic(
                api_key=api_key,
                base_url=base_url,
                timeout=httpx_timeout(self.deadlines),
                max_retries=max_retries,
                http_client=deadline_http_client(self.deadlines),
            )
        except anthropic.AnthropicError as exc:
            raise ProviderError("auth", sanitize(str(exc), api_key)) from None
        self.base_host = base_host(self._client.base_url)

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        system, turns = split_messages(request.messages)
        params: dict[str, Any] = {"model": self.model, "max_tokens": request.max_tokens, "messages": turns}
        if system:
            params["system"] = system
        if request.json_schema is not None:
            schema = anthropic_output_schema(request.json_schema.schema)
            params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        if request.temperature is not None:
            params["extra_body"] = {"temperature": request.temperature}
        return params

    def _reply(
        self,
        message: Any,
        params: dict[str, Any],
        started: float,
        ttft_ms: float | None = None,
        request_id: str | None = None,
    ) -> LLMReply:
        """The LLMReply of a Message, with the wire facts of `params` (the request as sent)."""
        text = "".join(block.text for block in message.content or [] if getattr(block, "type", "") == "text")
        stop = message.stop_reason or "other"
        usage = message.usage
        schema = params.get("output_config", {}).get("format", {}).get("schema")
        return LLMReply(
            text=text,
            finish_reason=as_finish_reason(stop, _FINISH),
            usage=Usage(
                input_tokens=(usage.input_tokens or 0) if usage else 0,
                output_tokens=(usage.output_tokens or 0) if usage else 0,
                cached_input_tokens=(getattr(usage, "cache_read_input_tokens", 0) or 0) if usage else 0,
            ),
            latency_ms=(time.perf_counter() - started) * 1000,
            provider=self.provider,
            model=self.model,
            ttft_ms=ttft_ms,
            wire=WireFacts(request_id=request_id, base_host=self.base_host, sdk=self.sdk, wire_schema=schema),
        )

    def complete(self, request: LLMRequest) -> LLMReply:
        """Send one request with `messages.create` and map the Message into an `LLMReply`."""
        started = time.perf_counter()
        params = self._params(request)
        try:
            message = self._client.messages.create(**params)
            request_id = getattr(message, "_request_id", None)
            return self._reply(
                message, params, started, None, request_id if isinstance(request_id, str) else None
            )
        except (anthropic.AnthropicError, httpx2.HTTPError) as exc:
            raise map_anthropic_error(exc, self._api_key) from None
        except MALFORMED as exc:  # an HTML page or other non-Message body with status 200
            raise malformed(exc, self._api_key) from None

    def stream(self, request: LLMRequest) -> TextStream:
        """Stream text deltas with `messages.stream`; `TextStream.reply` is set once exhausted.

        The request is sent here, so HTTP errors raise `ProviderError` from this call; a failure
        mid-stream raises it from iteration. The final message gives the usage and stop reason;
        `ttft_ms` is the time from the request to the first text delta.
        """
        started = time.perf_counter()
        params = self._params(request)
        manager = self._client.messages.stream(**params)
        try:
            message_stream = manager.__enter__()
        except (anthropic.AnthropicError, httpx2.HTTPError) as exc:
            raise map_anthropic_error(exc, self._api_key) from None
        content_type = str(message_stream.response.headers.get("content-type", ""))
        request_id = message_stream.response.headers.get("request-id")
        if "text/event-stream" not in content_type:  # e.g. an HTML page with status 200
            manager.__exit__(None, None, None)
            raise ProviderError(
                "malformed", sanitize(f"not an event stream: {content_type[:80]}", self._api_key)
            )

        def gen() -> Iterator[str]:
            ttft: float | None = None
            try:
                try:
                    for piece in message_stream.text_stream:
                        if ttft is None and piece:
                            ttft = (time.perf_counter() - started) * 1000
                        yield piece
                    final = message_stream.get_final_message()
                    reply = self._reply(final, params, started, ttft, request_id)
                except (anthropic.AnthropicError, httpx2.HTTPError) as exc:
                    raise map_anthropic_error(exc, self._api_key) from None
                except MALFORMED as exc:  # malformed SSE: invalid JSON, events out of order
                    raise malformed(exc, self._api_key) from None
            finally:
                manager.__exit__(None, None, None)
            stream.reply = reply

        stream = TextStream(gen())
        return stream
