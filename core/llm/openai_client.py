"""OpenAI Chat Completions client (also serves OpenAI-compatible servers through `base_url`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx2
import openai

from core.debuglog.events import WireFacts
from core.llm.base import (
    FinishReason,
    LLMReply,
    LLMRequest,
    ProviderError,
    TextStream,
    Usage,
    as_finish_reason,
    base_host,
)
from core.llm.deadline import Deadlines
from core.llm.deadline_transport import deadline_http_client, httpx_timeout
from core.llm.sdk_errors import MALFORMED, malformed, map_sdk_error, sanitize
from core.llm.server_profiles import (
    DEFAULT_PROFILE,
    JSON_SCHEMA,
    downgrade_note,
    get_profile,
    is_response_format_rejection,
    remember_form,
    remembered_form,
    response_format_body,
    token_param,
    wire_facts,
)
from core.llm.token_estimate import usage_or_estimate


def map_openai_error(exc: Exception, api_key: str | None = None) -> ProviderError:
    """Translate an `openai` SDK exception into a `ProviderError` (see core.llm.sdk_errors)."""
    return map_sdk_error(openai, exc, api_key)


def _is_response_format_rejection(exc: openai.APIStatusError) -> bool:
    return is_response_format_rejection(exc.status_code, f"{exc.message} {exc.body}")


def _cached_tokens(usage: Any) -> int:
    """usage.prompt_tokens_details.cached_tokens (0 when the server does not report it)."""
    details = getattr(usage, "prompt_tokens_details", None)
    return int(getattr(details, "cached_tokens", 0) or 0)


def _message_text(completion: Any) -> tuple[str, FinishReason]:
    """(text, finish reason) of a ChatCompletion; anything else raises AttributeError (malformed)."""
    choice = completion.choices[0] if completion.choices else None
    if choice is None:
        return "", "other"
    message = choice.message
    finish = as_finish_reason(choice.finish_reason or "other")
    if getattr(message, "refusal", None):
        return str(message.refusal), "refusal"
    return str(message.content or ""), finish


class OpenAIClient:
    """`LLMClient` for OpenAI Chat Completions and compatible servers (vLLM, Ollama, llama.cpp, LM Studio, Azure).

    `max_retries=0` by default: retrying is the guard's job, so a 429 or 5xx surfaces at once as a
    `ProviderError`. Every call has `deadlines` (connect, first byte, overall; core.llm.deadline), and
    a body that is not a Chat Completion (HTML with status 200, invalid JSON, malformed SSE) raises
    `ProviderError("malformed")`, never the SDK's parsing error. `server` names a profile (core.llm.server_profiles) saying how structured
    output is requested; when a server rejects a form, the client steps down to the profile's next
    form with one extra request, remembers the working form for the base URL (new clients reuse
    it) and notes the downgrade on every reply that uses it.
    """

    provider = "openai"
    sdk = f"openai {openai.__version__}"

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
        http_client: Any = None,
        server: str = DEFAULT_PROFILE,
        deadlines: Deadlines | None = None,
    ):
        self.model = model
        self.base_url = base_url
        self.profile = get_profile(server)
        self._api_key = api_key
        self.deadlines = deadlines or Deadlines.from_timeout(timeout)
        try:
            self._client = openai.OpenAI(
                api_key=api_key,
                base_url=base_url,
                timeout=httpx_timeout(self.deadlines),
                max_retries=max_retries,
                http_client=http_client or deadline_http_client(self.deadlines),
            )
        except openai.OpenAIError as exc:  # e.g. no key anywhere
            raise ProviderError("auth", sanitize(str(exc), api_key)) from None
        self.server_url = str(self._client.base_url).rstrip("/")  # the key of the remembered form
        self.base_host = base_host(self._client.base_url)

    # -- structured-output form -------------------------------------------------------------
    def _first_form_index(self) -> int:
        """Where to start in the profile's forms: the form remembered for this URL, if it is one."""
        remembered = remembered_form(self.server_url)
        forms = self.profile.forms
        return forms.index(remembered) if remembered in forms else 0

    @property
    def form(self) -> str:
        """The structured-output form the next schema request starts with."""
        return self.profile.forms[self._first_form_index()]

    @property
    def json_schema_supported(self) -> bool:
        """Whether schema requests still go out as `json_schema` (False after a downgrade)."""
        return self.form == JSON_SCHEMA

    # -- request building -------------------------------------------------------------------
    def _params(self, request: LLMRequest, response_format: dict[str, Any] | None) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": list(request.messages)}
        # OpenAI deprecated `max_tokens` for `max_completion_tokens` (reasoning models reject
        # `max_tokens`), but most compatible servers only know `max_tokens`: the profile decides.
        params[token_param(self.profile, self.base_url)] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if response_format is not None:
            params["response_format"] = response_format
        return params

    def _create(self, request: LLMRequest, response_format: dict[str, Any] | None, **extra: Any) -> Any:
        return self._client.chat.completions.create(**self._params(request, response_format), **extra)

    def _call(self, request: LLMRequest, **extra: Any) -> tuple[Any, LLMReply, list[str]]:
        """Create a completion: (SDK result, a reply template with the wire facts, notes).

        The template carries provider, model, sdk, base host, the form label, and the strict flag
        and schema exactly as sent; the caller fills in text, usage and the request id.

        A rejected form steps down to the profile's next form, one extra request per step; any
        other error, or a rejection of the last form, raises `ProviderError`.
        """
        spec = request.json_schema
        wire = LLMReply(
            "",
            provider=self.provider,
            model=self.model,
            wire=WireFacts(sdk=self.sdk, base_host=self.base_host),
        )
        try:
            if spec is None:
                return self._create(request, None, **extra), wire, []
            forms = self.profile.forms
            index = self._first_form_index()
            while True:
                body, label = response_format_body(forms[index], spec)
                try:
                    result = self._create(request, body, **extra)
                    break
                except openai.APIStatusError as exc:
                    if index + 1 >= len(forms) or not _is_response_format_rejection(exc):
                        raise
                    index += 1
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise map_openai_error(exc, self._api_key) from None
        except MALFORMED as exc:
            raise malformed(exc, self._api_key) from None
        remember_form(self.server_url, forms[index])
        notes = [downgrade_note(forms[0], forms[index])] if index > 0 else []
        strict, wire_schema = wire_facts(body)
        facts = replace(wire.wire, response_format=label, strict=strict, wire_schema=wire_schema)
        return result, replace(wire, wire=facts), notes

    # -- LLMClient ----------------------------------------------------------------------------
    def complete(self, request: LLMRequest) -> LLMReply:
        """Send one request and map the ChatCompletion into an `LLMReply`."""
        started = time.perf_counter()
        completion, wire, notes = self._call(request)
        latency = (time.perf_counter() - started) * 1000
        try:
            text, finish = _message_text(completion)
            usage = self._usage(request, text, completion.usage)
        except MALFORMED as exc:  # an HTML page or other non-completion body with status 200
            raise malformed(exc, self._api_key) from None
        request_id = getattr(completion, "_request_id", None)
        return replace(
            wire,
            text=text,
            finish_reason=finish,
            usage=usage,
            latency_ms=latency,
            notes=notes,
            wire=replace(wire.wire, request_id=request_id if isinstance(request_id, str) else None),
        )

    def _usage(self, request: LLMRequest, text: str, usage: Any) -> Usage:
        """The server's token counts (cached input included), or a labelled local estimate."""
        counted = None
        if usage:
            counted = Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0)
            counted.cached_input_tokens = _cached_tokens(usage)
        return usage_or_estimate(self.model, request.messages, text, counted)

    def stream(self, request: LLMRequest) -> TextStream:
        """Stream text deltas; `TextStream.reply` is set once the stream is exhausted.

        `stream_options.include_usage` is always sent: OpenAI, vLLM, Ollama and LM Studio accept it,
        and without it a stream carries no token counts. llama-cpp-python's server ignores it:
        such replies get a local estimate marked `Usage.estimated`. `ttft_ms` is the time from the
        request to the first text delta. Refusal deltas are streamed like text and mark the reply
        as a refusal. The request is sent here, so HTTP errors (429, 5xx, a rejected request)
        raise `ProviderError` from this call; a failure mid-stream raises it from iteration.
        """
        started = time.perf_counter()
        raw, wire, notes = self._call(request, stream=True, stream_options={"include_usage": True})
        headers = getattr(getattr(raw, "response", None), "headers", {})
        content_type = str(headers.get("content-type", ""))
        wire = replace(wire, wire=replace(wire.wire, request_id=headers.get("x-request-id")))
        if "text/event-stream" not in content_type:  # e.g. an HTML page with status 200
            raw.close()
            raise ProviderError(
                "malformed", sanitize(f"not an event stream: {content_type[:80]}", self._api_key)
            )

        def gen() -> Iterator[str]:
            parts: list[str] = []
            refusal = False
            finish: FinishReason = "other"
            usage: Any = None
            ttft: float | None = None
            try:
                with raw:
                    for chunk in raw:
                        if chunk.usage is not None:
                            usage = chunk.usage
                        for choice in chunk.choices or []:
                            if choice.finish_reason:
                                finish = as_finish_reason(choice.finish_reason)
                            delta = choice.delta
                            piece = delta.content if delta is not None else None
                            if delta is not None and getattr(delta, "refusal", None):
                                piece, refusal = delta.refusal, True
                            if piece:
                                if ttft is None:
                                    ttft = (time.perf_counter() - started) * 1000
                                parts.append(piece)
                                yield piece
            except (openai.OpenAIError, httpx2.HTTPError) as exc:
                raise map_openai_error(exc, self._api_key) from None
            except MALFORMED as exc:  # malformed SSE: invalid JSON in an event, a chunk of the wrong shape
                raise malformed(exc, self._api_key) from None
            text = "".join(parts)
            stream.reply = replace(
                wire,
                text=text,
                finish_reason="refusal" if refusal else finish,
                usage=self._usage(request, text, usage),
                latency_ms=(time.perf_counter() - started) * 1000,
                notes=notes,
                ttft_ms=ttft,
            )

        stream = TextStream(gen())
        return stream
