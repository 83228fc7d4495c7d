"""The guard's free-text door: empty output and provider errors become results; streaming too."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from core.debuglog.events import DebugEvent, DebugSink, ErrorType, EventKind
from core.guard.reply_limits import MAX_RAW_CHARS, cap_notice, cap_text, limits_for
from core.guard.results import (
    Attempt,
    GuardResult,
    call_client,
    emit,
    error_fields,
    reply_fields,
    request_fields,
    trace_fields,
    user_message,
)
from core.llm.base import LLMClient, LLMReply, LLMRequest, Message, ProviderError, TextStream


class GuardedStream:
    """Iterate for text deltas; `result` is a GuardResult once the stream ends (never raises).

    The trace context (core.debuglog.trace) and `call_id` are fixed when the stream is made, so a page that
    iterates it later still logs the call where the flow made it.
    """

    def __init__(self, client: LLMClient, request: LLMRequest, sink: DebugSink | None):
        self._client, self._request, self._sink = client, request, sink
        self.call_id = new_call_id()
        self._where = trace_fields(request.tags)
        self.result: GuardResult[str] | None = None

    def __iter__(self) -> Iterator[str]:
        start = time.perf_counter()
        parts: list[str] = []
        reply: LLMReply | None = None
        ttft: float | None = None
        cap = limits_for(self._request.tags).max_chars
        shown = received = 0  # characters yielded / read (at most `cap` are shown)
        try:
            stream: TextStream = self._client.stream(self._request)
            for delta in stream:
                if ttft is None and delta:
                    ttft = (time.perf_counter() - start) * 1000
                parts.append(delta)
                received += len(delta)
                if shown < cap:
                    piece = delta[: cap - shown]
                    shown += len(piece)
                    yield piece
                if received >= MAX_RAW_CHARS:
                    stream.close()  # a runaway reply: stop reading it
                    break
            reply = stream.reply
        except ProviderError as exc:  # a failure mid-stream is a result too (the client mapped it)
            self.result = _text_failure(
                _Call(self._client, self._request, self._sink, self.call_id, self._where),
                "".join(parts),
                exc,
                (time.perf_counter() - start) * 1000,
            )
            return
        if received > cap:
            yield cap_notice(cap, received)
        text = "".join(parts)
        latency = (time.perf_counter() - start) * 1000
        if reply is None:
            reply = LLMReply(text, provider=self._client.provider, model=self._client.model)
        reply.text, reply.latency_ms = text, reply.latency_ms or latency
        if reply.ttft_ms is None:
            reply.ttft_ms = ttft  # the client did not time it: the guard's own first-delta time
        self.result = _text_result(
            _Call(self._client, self._request, self._sink, self.call_id, self._where), reply
        )


def new_call_id() -> str:
    """A fresh id for one guarded call (all its events share it)."""
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class _Call:
    """One text call: its client, request, sink, id and where it sits (trace_fields)."""

    client: LLMClient
    request: LLMRequest
    sink: DebugSink | None
    call_id: str
    where: dict[str, Any]


def _log(call: _Call, attempt: Attempt, kind: EventKind, errors: list[str]) -> None:
    """The call (or error) event of a text call, then its result event (one model call per text call)."""
    client, request, sink = call.client, call.request, call.sink
    if sink is None:
        return
    common: dict[str, Any] = {
        **call.where,
        **request_fields(request),
        "call_id": call.call_id,
        "attempt": 1,
        "provider": client.provider,
        "model": client.model,
    }
    ok = attempt.error_type is None
    emit(
        sink,
        DebugEvent(
            kind=kind,
            messages=request.messages,
            raw=attempt.raw,
            ok=ok,
            error_type=attempt.error_type,
            errors=errors,
            **attempt.event_fields(),
            **common,
        ),
    )
    emit(
        sink, DebugEvent(kind="result", ok=ok, error_type=attempt.error_type, errors=attempt.errors, **common)
    )


def _text_failure(call: _Call, partial: str, exc: ProviderError, latency: float) -> GuardResult[str]:
    attempt = Attempt(
        1,
        "initial",
        raw=partial,
        finish_reason="error",
        error_type="provider_error",
        errors=[exc.user_message],
        latency_ms=latency,
        notes=[f"{exc.kind}: {exc.detail}"[:500]],
        **error_fields(call.client, exc),
    )
    detail = f"{exc.kind} {exc.status or ''}: {exc.detail}"[:1000]
    _log(call, attempt, "error", [exc.user_message, detail])
    return GuardResult(
        False,
        None,
        partial,
        "provider_error",
        [exc.user_message],
        [attempt],
        user_message("provider_error", [exc.user_message]),
        call_id=call.call_id,
    )


def _text_result(call: _Call, reply: LLMReply) -> GuardResult[str]:
    request = call.request
    error_type: ErrorType | None = None
    errors: list[str] = []
    if reply.finish_reason == "refusal":
        error_type, errors = "refusal", [reply.text or "refusal"]
    elif not reply.text.strip():
        error_type, errors = "empty_output", ["出力が空です"]
    cap = limits_for(request.tags).max_chars
    kept, capped = cap_text(reply.text, cap)
    notes = list(reply.notes) + (["出力トークンの上限で途中まで"] if reply.finish_reason == "length" else [])
    if capped:
        notes.append(f"応答 {len(reply.text):,} 文字のうち {cap:,} 文字だけを表示・保存")
    attempt = Attempt(
        1,
        "initial",
        raw=reply.text,
        finish_reason=reply.finish_reason,
        errors=errors,
        error_type=error_type,
        latency_ms=reply.latency_ms,
        notes=notes,
        **reply_fields(reply),
    )
    _log(call, attempt, "call", errors)
    if error_type:
        message = user_message(error_type, errors)
        return GuardResult(
            False, None, reply.text, error_type, errors, [attempt], message, call_id=call.call_id
        )
    return GuardResult(True, kept, reply.text, None, [], [attempt], call_id=call.call_id)


def _text_request(
    messages: list[Message], tags: dict[str, str] | None, max_tokens: int | None, temperature: float | None
) -> LLMRequest:
    tokens = limits_for(tags).max_tokens if max_tokens is None else max_tokens
    return LLMRequest(list(messages), None, max_tokens=tokens, temperature=temperature, tags=dict(tags or {}))


def guarded_text(
    client: LLMClient,
    messages: list[Message],
    *,
    sink: DebugSink | None = None,
    tags: dict[str, str] | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> GuardResult[str]:
    """Free-text call through the guard (summaries, RAG answers, reflection): a result for every provider
    failure (ProviderError); a bug of ours raises.

    `max_tokens` defaults to the flow's (core.guard.reply_limits, by `tags["flow"]`); the result's text is
    capped at the flow's characters with a notice, `raw` keeps the whole reply.
    """
    request = _text_request(messages, tags, max_tokens, temperature)
    call = _Call(client, request, sink, new_call_id(), trace_fields(request.tags))
    reply, exc, latency = call_client(client, request)
    if exc is not None:
        return _text_failure(call, "", exc, latency)
    assert reply is not None
    reply.latency_ms = reply.latency_ms or latency
    return _text_result(call, reply)


def guarded_stream(
    client: LLMClient,
    messages: list[Message],
    *,
    sink: DebugSink | None = None,
    tags: dict[str, str] | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> GuardedStream:
    """Streamed free text through the guard (review chat, memory chat): iterate, then read `.result`."""
    return GuardedStream(client, _text_request(messages, tags, max_tokens, temperature), sink)
