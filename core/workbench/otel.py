"""OpenTelemetry export of the debug log (issue #9): OTLP/JSON (an ExportTraceServiceRequest) with the
GenAI semantic-convention attributes, so a log can be loaded into an existing observability tool.

One trace per conversation (traceId: 32 hex digits from flow + conversation id); under it one span per
turn, one span per guarded call (hanging under its parent call when it has one) and one span per attempt
(model call). Ids are hex as OTLP/JSON requires; times are unix nanoseconds as strings. Every string is
redacted like the JSONL export. Nothing is sent anywhere: this builds text for a download button.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from core.debuglog.events import DebugEvent, redact_text
from core.workbench.tree import CallNode, ConversationNode, TurnNode, build_tree

SCOPE = "katachi.debuglog"
SERVICE = "katachi"
SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2


def _hex_id(text: str, digits: int) -> str:
    value = hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]
    return value if value.strip("0") else "1".rjust(digits, "0")  # an all-zero id is invalid


def trace_id(conversation: ConversationNode) -> str:
    """32 hex digits, stable for a flow's conversation."""
    return _hex_id(f"trace:{conversation.flow}:{conversation.conversation_id}", 32)


def span_id(*parts: object) -> str:
    """16 hex digits, stable for what `parts` name (a call id, an attempt)."""
    return _hex_id("span:" + ":".join(str(p) for p in parts), 16)


def _nanos(seconds: float) -> str:
    return str(round(seconds * 1_000_000) * 1000)


class _Attributes:
    """Collects OTLP KeyValue attributes, redacting strings and skipping empty values."""

    def __init__(self, secrets: Sequence[str]):
        self.secrets = secrets
        self.items: list[dict[str, Any]] = []

    def add(self, key: str, value: Any) -> None:
        if value is None or value == "":
            return
        if isinstance(value, bool):
            typed: dict[str, Any] = {"boolValue": value}
        elif isinstance(value, int):
            typed = {"intValue": str(value)}
        elif isinstance(value, float):
            typed = {"doubleValue": value}
        elif isinstance(value, list | tuple):
            typed = {"arrayValue": {"values": [{"stringValue": self._text(v)} for v in value]}}
        else:
            typed = {"stringValue": self._text(value)}
        self.items.append({"key": key, "value": typed})

    def _text(self, value: Any) -> str:
        return redact_text(str(value), self.secrets)


def _attempt_attributes(event: DebugEvent, secrets: Sequence[str]) -> list[dict[str, Any]]:
    attrs = _Attributes(secrets)
    attrs.add("gen_ai.system", event.provider)
    attrs.add("gen_ai.operation.name", "chat")
    attrs.add("gen_ai.request.model", event.model)
    attrs.add("gen_ai.response.model", event.model)
    attrs.add("gen_ai.request.temperature", event.temperature)
    attrs.add("gen_ai.request.max_tokens", event.max_tokens)
    attrs.add("gen_ai.response.id", event.request_id)
    attrs.add("gen_ai.output.type", "json" if event.schema_name else "text")
    if event.usage:
        attrs.add("gen_ai.usage.input_tokens", int(event.usage.get("input_tokens", 0) or 0))
        attrs.add("gen_ai.usage.output_tokens", int(event.usage.get("output_tokens", 0) or 0))
        attrs.add("katachi.usage.cached_input_tokens", int(event.usage.get("cached_input_tokens", 0) or 0))
        attrs.add("katachi.usage.estimated", event.usage_estimated)
    attrs.add("server.address", event.base_host)
    attrs.add("katachi.attempt", event.attempt)
    attrs.add("katachi.ok", event.ok)
    attrs.add("katachi.error_type", event.error_type)
    attrs.add("katachi.schema_name", event.schema_name)
    attrs.add("katachi.response_format", event.response_format)
    attrs.add("katachi.strict", event.strict)
    attrs.add("katachi.sdk", event.sdk)
    attrs.add("katachi.latency_ms", event.latency_ms)
    attrs.add("katachi.ttft_ms", event.ttft_ms)
    attrs.add("katachi.fixes", event.fixes or None)
    attrs.add("katachi.errors", event.errors or None)
    return attrs.items


def _note(ts: float, text: str, secrets: Sequence[str]) -> dict[str, Any]:
    """A span event for one note (short reply, strict downgrade, dropped history, ...)."""
    value = {"stringValue": redact_text(text, secrets)}
    return {
        "timeUnixNano": _nanos(ts),
        "name": "katachi.note",
        "attributes": [{"key": "katachi.note", "value": value}],
    }


def _status(ok: bool | None, error_type: str | None) -> dict[str, Any]:
    if ok is None:
        return {"code": STATUS_UNSET}
    if ok:
        return {"code": STATUS_OK}
    return {"code": STATUS_ERROR, "message": error_type or "error"}


def _span(
    trace: str, ident: str, parent: str, name: str, start: float, end: float, **extra: Any
) -> dict[str, Any]:
    span = {
        "traceId": trace,
        "spanId": ident,
        "name": name,
        "kind": extra.pop("kind", SPAN_KIND_INTERNAL),
        "startTimeUnixNano": _nanos(start),
        "endTimeUnixNano": _nanos(max(start, end)),
        **extra,
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def _call_spans(trace: str, node: CallNode, parent: str, secrets: Sequence[str]) -> list[dict[str, Any]]:
    ident = span_id(node.call_id)
    first = node.first
    attrs = _Attributes(secrets)
    for key, value in (
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.system", first.provider if first else ""),
        ("gen_ai.request.model", first.model if first else ""),
        ("gen_ai.usage.input_tokens", node.usage("input_tokens")),
        ("gen_ai.usage.output_tokens", node.usage("output_tokens")),
        ("katachi.flow", node.flow),
        ("katachi.step", node.step),
        ("katachi.call_id", node.call_id),
        ("katachi.attempts", len(node.attempts)),
        ("katachi.ok", node.ok),
        ("katachi.error_type", node.result.error_type if node.result else None),
    ):
        attrs.add(key, value)
    events = [
        _note(note.ts, text, secrets) for note in node.notes for text in (note.notes or [note.step or "note"])
    ]
    spans = [
        _span(
            trace,
            ident,
            parent,
            f"{node.flow or '-'} {node.step or 'call'}",
            node.start,
            node.end,
            attributes=attrs.items,
            events=events,
            status=_status(node.ok, node.result.error_type if node.result else None),
        )
    ]
    for attempt in node.attempts:
        spans.append(
            _span(
                trace,
                span_id(node.call_id, "attempt", attempt.attempt),
                ident,
                f"chat {attempt.model}".strip(),
                attempt.ts - (attempt.latency_ms or 0.0) / 1000,
                attempt.ts,
                kind=SPAN_KIND_CLIENT,
                attributes=_attempt_attributes(attempt, secrets),
                events=[_note(attempt.ts, note, secrets) for note in attempt.notes],
                status=_status(attempt.ok, attempt.error_type),
            )
        )
    for child in node.children:
        spans.extend(_call_spans(trace, child, ident, secrets))
    return spans


def _turn_spans(
    conversation: ConversationNode, turn: TurnNode, secrets: Sequence[str]
) -> list[dict[str, Any]]:
    trace = trace_id(conversation)
    ident = span_id("turn", conversation.flow, conversation.conversation_id, turn.turn)
    calls = turn.all_calls()
    attrs = _Attributes(secrets)
    attrs.add("katachi.flow", conversation.flow)
    attrs.add("katachi.conversation_id", conversation.conversation_id)
    attrs.add("katachi.session_id", conversation.session_id)
    attrs.add("katachi.turn", turn.turn)
    end = max((c.end for c in calls), default=turn.start)
    turn_span = _span(
        trace,
        ident,
        "",
        f"{conversation.flow or '-'} turn {turn.turn}",
        turn.start,
        end,
        attributes=attrs.items,
    )
    spans = [turn_span]
    for call in turn.calls:
        spans.extend(_call_spans(trace, call, ident, secrets))
    return spans


def otlp_request(events: Sequence[DebugEvent], secrets: Iterable[str] = ()) -> dict[str, Any]:
    """The export as a dict in the OTLP/JSON mapping (resourceSpans → scopeSpans → spans)."""
    secret_list = [s for s in secrets if s and len(s) >= 4]
    spans = [
        span
        for conversation in build_tree(events)
        for turn in conversation.turns
        for span in _turn_spans(conversation, turn, secret_list)
    ]
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": SERVICE}}]}
    scope = {"name": SCOPE, "version": "1"}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]}


def events_to_otlp(events: Sequence[DebugEvent], secrets: Iterable[str] = ()) -> str:
    """OTLP/JSON text of the debug log (for a download button)."""
    return json.dumps(otlp_request(events, secrets), ensure_ascii=False)
