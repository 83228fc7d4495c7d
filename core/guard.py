"""The one door to an LLM: call -> local repair -> validate -> repair call -> log (ARCHITECTURE.md).

Implements spec 00 リトライと修復 and spec 01 §5-6: every reply becomes validated data or an
`ok=False` result carrying the raw output, the error type and every attempt. Nothing raises.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.debuglog import DebugEvent, DebugSink
from core.jsonrepair import parse_json_locally
from core.llm.base import JSONSchemaSpec, LLMClient, LLMReply, LLMRequest, Message, ProviderError, TextStream
from core.schemas import validation_errors

Validator = Callable[[Any], list[str]]

ERROR_MESSAGES = {
    "parse_error": "LLMの出力をJSONとして読み取れませんでした。",
    "schema_error": "LLMの出力が決められた形式（スキーマ）に合いませんでした。",
    "truncated": "LLMの出力が途中で切れました（出力トークンの上限）。",
    "refusal": "LLMが回答を拒否しました。",
    "empty_output": "LLMの出力が空でした。",
    "provider_error": "LLMの呼び出しに失敗しました。",
}
# Error types worth a repair call: the content was wrong, so asking again can fix it.
REPAIRABLE = {"parse_error", "schema_error", "truncated", "empty_output"}


@dataclass
class Attempt:
    """One LLM call inside a guarded call."""

    number: int
    kind: str  # initial | repair
    raw: str = ""
    finish_reason: str = ""
    fixes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    error_type: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class GuardResult:
    ok: bool
    data: Any = None
    raw: str = ""
    error_type: str | None = None
    errors: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    message: str = ""  # Japanese text for a staff member when not ok

    @property
    def text(self) -> str:
        """The reply text (free-text calls)."""
        return self.data if isinstance(self.data, str) else self.raw


def build_repair_instruction(
    raw: str,
    error: str,
    error_type: str,
    field_names: Sequence[str] = ("control", "state", "assistant_message", "knowledge_json"),
) -> str:
    """Spec 01 §6.2's repair prompt, with the raw output, error type and error detail."""
    fields = ", ".join(field_names)
    return "\n".join(
        [
            "以下は、あなたが直前に出力した JSON 文字列です。",
            "",
            "---",
            raw,
            "---",
            "",
            "この JSON をパースおよびスキーマバリデーションしたところ、エラーが発生しました。",
            "",
            f"エラー種別: {error_type}",
            f"エラー内容: {error}",
            "",
            "元の意味内容はできるだけ維持したまま、指定されているスキーマに完全に準拠する JSON オブジェクトのみを出力してください。",
            "",
            "制約:",
            "- JSON 以外の文字を一切出力しないでください。",
            f"- フィールド構造は {fields} の {len(field_names)} つのみを使用してください。",
        ]
    )


def _message(error_type: str, errors: Sequence[str]) -> str:
    base = ERROR_MESSAGES.get(error_type, "LLMの呼び出しに失敗しました。")
    return f"{base} {errors[0]}" if error_type == "provider_error" and errors else base


def _emit(sink: DebugSink | None, event: DebugEvent) -> None:
    if sink is not None:
        sink.emit(event)


def _call(client: LLMClient, request: LLMRequest) -> tuple[LLMReply | None, ProviderError | None, float]:
    start = time.perf_counter()
    try:
        reply = client.complete(request)
        return reply, None, reply.latency_ms or (time.perf_counter() - start) * 1000
    except ProviderError as exc:
        return None, exc, (time.perf_counter() - start) * 1000


def _check(reply: LLMReply, schema: dict[str, Any], validators: Sequence[Validator]) -> tuple[Any, Attempt]:
    attempt = Attempt(
        0,
        "",
        raw=reply.text,
        finish_reason=reply.finish_reason,
        notes=list(reply.notes),
        usage={"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens},
    )
    if reply.finish_reason == "refusal":
        attempt.error_type, attempt.errors = "refusal", [reply.text or "refusal"]
        return None, attempt
    if not reply.text.strip():
        attempt.error_type, attempt.errors = "empty_output", ["出力が空です"]
        return None, attempt
    parsed = parse_json_locally(reply.text)
    attempt.fixes = parsed.fixes
    if not parsed.ok:
        truncated = reply.finish_reason == "length" or parsed.truncated
        attempt.error_type = "truncated" if truncated else "parse_error"
        attempt.errors = [parsed.error]
        return None, attempt
    errors = validation_errors(schema, parsed.value)
    if not errors:
        for validator in validators:
            errors.extend(validator(parsed.value))
    if errors:
        attempt.error_type, attempt.errors = "schema_error", errors
        return parsed.value, attempt
    return parsed.value, attempt


def guarded_json(
    client: LLMClient,
    messages: list[Message],
    schema: dict[str, Any],
    *,
    name: str,
    max_repairs: int = 2,
    validators: Sequence[Validator] = (),
    sink: DebugSink | None = None,
    tags: dict[str, str] | None = None,
    max_tokens: int = 2048,
    temperature: float | None = None,
) -> GuardResult:
    """Call the model for JSON that passes `schema` and `validators`; repair up to `max_repairs` times."""
    tags = dict(tags or {})
    call_id = uuid.uuid4().hex[:12]
    flow, step = tags.get("flow", ""), tags.get("step", "")
    spec = JSONSchemaSpec(name, schema)
    field_names = list(schema.get("properties", {}))
    stack, attempts = list(messages), []
    raw, error_type, errors = "", None, []
    for number in range(1, max_repairs + 2):
        request = LLMRequest(stack, spec, max_tokens=max_tokens, temperature=temperature, tags=tags)
        reply, exc, latency = _call(client, request)
        base = dict(
            flow=flow,
            step=step,
            call_id=call_id,
            attempt=number,
            provider=client.provider,
            model=client.model,
            messages=stack,
            schema_name=name,
        )
        if exc is not None:
            attempt = Attempt(
                number,
                "initial" if number == 1 else "repair",
                finish_reason="error",
                error_type="provider_error",
                errors=[exc.user_message],
                latency_ms=latency,
                notes=[f"{exc.kind}: {exc.detail}"[:500]],
            )
            attempts.append(attempt)
            _emit(
                sink,
                DebugEvent(
                    kind="error",
                    ok=False,
                    error_type="provider_error",
                    errors=[exc.user_message, f"{exc.kind} {exc.status or ''}: {exc.detail}"[:1000]],
                    latency_ms=latency,
                    **base,
                ),
            )
            error_type, errors = "provider_error", [exc.user_message]
            break
        assert reply is not None
        value, attempt = _check(reply, schema, validators)
        attempt.number, attempt.kind, attempt.latency_ms = (
            number,
            "initial" if number == 1 else "repair",
            latency,
        )
        attempts.append(attempt)
        raw, error_type, errors = reply.text, attempt.error_type, attempt.errors
        _emit(
            sink,
            DebugEvent(
                kind="call",
                raw=reply.text,
                parsed=value,
                ok=error_type is None,
                error_type=error_type,
                errors=errors,
                fixes=attempt.fixes,
                notes=attempt.notes,
                usage=attempt.usage,
                latency_ms=latency,
                **base,
            ),
        )
        if error_type is None:
            _emit(sink, DebugEvent(kind="result", ok=True, parsed=value, **base))
            return GuardResult(True, value, raw, None, [], attempts)
        if error_type not in REPAIRABLE or number > max_repairs:
            break
        repair = build_repair_instruction(raw, "\n".join(errors), error_type, field_names)
        stack = [*stack, {"role": "assistant", "content": raw}, {"role": "user", "content": repair}]
        _emit(
            sink,
            DebugEvent(
                kind="repair", error_type=error_type, errors=errors, **{**base, "messages": stack[-2:]}
            ),
        )
    _emit(
        sink,
        DebugEvent(
            kind="result",
            flow=flow,
            step=step,
            call_id=call_id,
            attempt=len(attempts),
            provider=client.provider,
            model=client.model,
            schema_name=name,
            raw=raw,
            ok=False,
            error_type=error_type,
            errors=errors,
        ),
    )
    return GuardResult(False, None, raw, error_type, errors, attempts, _message(error_type or "", errors))


class GuardedStream:
    """Iterate for text deltas; `result` is a GuardResult once the stream ends (never raises)."""

    def __init__(self, client: LLMClient, request: LLMRequest, sink: DebugSink | None):
        self._client, self._request, self._sink = client, request, sink
        self.result: GuardResult | None = None

    def __iter__(self) -> Iterator[str]:
        start = time.perf_counter()
        parts: list[str] = []
        reply: LLMReply | None = None
        try:
            stream: TextStream = self._client.stream(self._request)
            for delta in stream:
                parts.append(delta)
                yield delta
            reply = stream.reply
        except ProviderError as exc:
            self.result = _text_failure(
                self._client,
                self._request,
                "".join(parts),
                exc,
                (time.perf_counter() - start) * 1000,
                self._sink,
            )
            return
        text = "".join(parts)
        latency = (time.perf_counter() - start) * 1000
        if reply is None:
            reply = LLMReply(text, provider=self._client.provider, model=self._client.model)
        reply.text, reply.latency_ms = text, reply.latency_ms or latency
        self.result = _text_result(self._client, self._request, reply, self._sink)


def _text_failure(
    client: LLMClient,
    request: LLMRequest,
    partial: str,
    exc: ProviderError,
    latency: float,
    sink: DebugSink | None,
) -> GuardResult:
    attempt = Attempt(
        1,
        "initial",
        raw=partial,
        finish_reason="error",
        error_type="provider_error",
        errors=[exc.user_message],
        latency_ms=latency,
        notes=[f"{exc.kind}: {exc.detail}"[:500]],
    )
    _emit(
        sink,
        DebugEvent(
            flow=request.tags.get("flow", ""),
            step=request.tags.get("step", ""),
            kind="error",
            call_id=uuid.uuid4().hex[:12],
            attempt=1,
            provider=client.provider,
            model=client.model,
            messages=request.messages,
            raw=partial,
            ok=False,
            error_type="provider_error",
            errors=[exc.user_message, f"{exc.kind} {exc.status or ''}: {exc.detail}"[:1000]],
            latency_ms=latency,
        ),
    )
    return GuardResult(
        False,
        None,
        partial,
        "provider_error",
        [exc.user_message],
        [attempt],
        _message("provider_error", [exc.user_message]),
    )


def _text_result(
    client: LLMClient, request: LLMRequest, reply: LLMReply, sink: DebugSink | None
) -> GuardResult:
    error_type, errors = None, []
    if reply.finish_reason == "refusal":
        error_type, errors = "refusal", [reply.text or "refusal"]
    elif not reply.text.strip():
        error_type, errors = "empty_output", ["出力が空です"]
    notes = list(reply.notes) + (["出力トークンの上限で途中まで"] if reply.finish_reason == "length" else [])
    usage = {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens}
    attempt = Attempt(
        1,
        "initial",
        raw=reply.text,
        finish_reason=reply.finish_reason,
        errors=errors,
        error_type=error_type,
        usage=usage,
        latency_ms=reply.latency_ms,
        notes=notes,
    )
    _emit(
        sink,
        DebugEvent(
            flow=request.tags.get("flow", ""),
            step=request.tags.get("step", ""),
            kind="call",
            call_id=uuid.uuid4().hex[:12],
            attempt=1,
            provider=client.provider,
            model=client.model,
            messages=request.messages,
            raw=reply.text,
            ok=error_type is None,
            error_type=error_type,
            errors=errors,
            notes=notes,
            usage=usage,
            latency_ms=reply.latency_ms,
        ),
    )
    if error_type:
        return GuardResult(
            False, None, reply.text, error_type, errors, [attempt], _message(error_type, errors)
        )
    return GuardResult(True, reply.text, reply.text, None, [], [attempt])


def guarded_text(
    client: LLMClient,
    messages: list[Message],
    *,
    sink: DebugSink | None = None,
    tags: dict[str, str] | None = None,
    stream: bool = False,
    max_tokens: int = 2048,
    temperature: float | None = None,
) -> GuardResult | GuardedStream:
    """Free-text call through the guard (review chat, summaries, memory chat); `stream=True` gives a GuardedStream."""
    request = LLMRequest(
        list(messages), None, max_tokens=max_tokens, temperature=temperature, tags=dict(tags or {})
    )
    if stream:
        return GuardedStream(client, request, sink)
    reply, exc, latency = _call(client, request)
    if exc is not None:
        return _text_failure(client, request, "", exc, latency, sink)
    assert reply is not None
    reply.latency_ms = reply.latency_ms or latency
    return _text_result(client, request, reply, sink)
