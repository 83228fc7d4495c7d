"""The one door to an LLM: call -> local repair -> validate -> repair call -> log (ARCHITECTURE.md).

Implements spec 00 リトライと修復 and spec 01 §5-6: every reply becomes validated data or an
`ok=False` result carrying the raw output, the error type and every attempt. Nothing raises.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from core.contracts.schemas import validation_errors
from core.debuglog.events import DebugEvent, DebugSink, ErrorType
from core.guard.clamps import clamp_numbers
from core.guard.local_repair import parse_json_locally
from core.guard.reply_limits import cap_strings, limits_for
from core.guard.results import (
    ERROR_MESSAGES,
    REPAIRABLE,
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
from core.guard.text_guard import GuardedStream, guarded_stream, guarded_text
from core.llm.base import JSONSchemaSpec, LLMClient, LLMReply, LLMRequest, Message

__all__ = [
    "ERROR_MESSAGES",
    "Attempt",
    "GuardResult",
    "GuardedStream",
    "build_repair_instruction",
    "guarded_json",
    "guarded_stream",
    "guarded_text",
]

Validator = Callable[[Any], list[str]]


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


def _check(
    reply: LLMReply, schema: dict[str, Any], validators: Sequence[Validator], clamp: bool = False
) -> tuple[Any, Attempt]:
    attempt = Attempt(
        0,
        "",
        raw=reply.text,
        finish_reason=reply.finish_reason,
        notes=list(reply.notes),
        **reply_fields(reply),
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
    value = parsed.value
    if clamp:  # out-of-range numbers are brought into range with a note, not sent back
        value, notes = clamp_numbers(value, schema)
        attempt.notes.extend(notes)
    errors = validation_errors(schema, value)
    if not errors:
        for validator in validators:
            errors.extend(validator(value))
    if errors:
        attempt.error_type, attempt.errors = "schema_error", errors
        return value, attempt
    return value, attempt


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
    max_tokens: int | None = None,
    temperature: float | None = None,
    wire_schema: dict[str, Any] | None = None,
    clamp: bool = False,
    call_id: str | None = None,
) -> GuardResult[Any]:
    """Call the model for JSON that passes `schema` and `validators`; repair up to `max_repairs` times.

    `clamp=True` brings numbers outside their schema's minimum / maximum into range before validation,
    each change noted on the attempt (core.guard.clamps), instead of spending a repair call on them.

    `wire_schema` (default: `schema`) is what the provider is asked to follow, e.g. the knowledge turn
    with its entry schema inlined so OpenAI strict mode can enforce it; replies are still validated
    against `schema` and `validators`. `max_tokens` defaults to the flow's (core.guard.reply_limits); strings
    of the validated data longer than the flow's character cap are cut with a notice (`raw` is whole).

    Every event is stamped with the trace context (core.debuglog.trace) and the request settings; `call_id`
    (default: a fresh one) lets a flow name the call before it is made (a step span other calls hang under).
    """
    tags = dict(tags or {})
    limits = limits_for(tags)
    max_tokens = limits.max_tokens if max_tokens is None else max_tokens
    call_id = call_id or uuid.uuid4().hex[:12]
    where = trace_fields(tags)  # flow, step and the trace context, fixed for every attempt
    spec = JSONSchemaSpec(name, wire_schema if wire_schema is not None else schema)
    field_names = list(schema.get("properties", {}))
    stack, attempts = list(messages), []
    raw = ""
    error_type: ErrorType | None = None
    errors: list[str] = []
    for number in range(1, max_repairs + 2):
        request = LLMRequest(stack, spec, max_tokens=max_tokens, temperature=temperature, tags=tags)
        reply, exc, latency = call_client(client, request)
        base: dict[str, Any] = {
            **where,
            **request_fields(request),
            "call_id": call_id,
            "attempt": number,
            "provider": client.provider,
            "model": client.model,
            "messages": stack,
            "schema_name": name,
        }
        if exc is not None:
            attempt = Attempt(
                number,
                "initial" if number == 1 else "repair",
                finish_reason="error",
                error_type="provider_error",
                errors=[exc.user_message],
                latency_ms=latency,
                notes=[f"{exc.kind}: {exc.detail}"[:500]],
                **error_fields(client, exc),
            )
            attempts.append(attempt)
            emit(
                sink,
                DebugEvent(
                    kind="error",
                    ok=False,
                    error_type="provider_error",
                    errors=[exc.user_message, f"{exc.kind} {exc.status or ''}: {exc.detail}"[:1000]],
                    **{**attempt.event_fields(), "notes": []},
                    **base,
                ),
            )
            error_type, errors = "provider_error", [exc.user_message]
            break
        assert reply is not None
        value, attempt = _check(reply, schema, validators, clamp)
        attempt.number, attempt.kind, attempt.latency_ms = (
            number,
            "initial" if number == 1 else "repair",
            latency,
        )
        attempts.append(attempt)
        raw, error_type, errors = reply.text, attempt.error_type, attempt.errors
        emit(
            sink,
            DebugEvent(
                kind="call",
                raw=reply.text,
                parsed=value,
                ok=error_type is None,
                error_type=error_type,
                errors=errors,
                fixes=attempt.fixes,
                **attempt.event_fields(),
                **base,
            ),
        )
        if error_type is None:
            value, capped = cap_strings(value, limits.max_chars)
            if capped:
                attempt.notes.append(f"{limits.max_chars:,} 文字を超える文字列を切り詰め")
            emit(sink, DebugEvent(kind="result", ok=True, parsed=value, **{**base, "messages": []}))
            return GuardResult(True, value, raw, None, [], attempts, call_id=call_id)
        if error_type not in REPAIRABLE or number > max_repairs:
            break
        repair = build_repair_instruction(raw, "\n".join(errors), error_type, field_names)
        # spec 00: each repair call is the original stack + [assistant=latest raw, user=repair]
        stack = [*messages, {"role": "assistant", "content": raw}, {"role": "user", "content": repair}]
        emit(
            sink,
            DebugEvent(
                kind="repair", error_type=error_type, errors=errors, **{**base, "messages": stack[-2:]}
            ),
        )
    emit(
        sink,
        DebugEvent(
            kind="result",
            **where,
            temperature=temperature,
            max_tokens=max_tokens,
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
    message = user_message(error_type or "", errors)
    return GuardResult(False, None, raw, error_type, errors, attempts, message, call_id=call_id)
