"""OpenTelemetry export of the debug log: an ExportTraceServiceRequest as OTLP/JSON or OTLP protobuf, with
OpenTelemetry's GenAI attributes (`gen_ai.*`, input and output messages) and the OpenInference attributes
Arize Phoenix and Langfuse read (`openinference.span.kind`, `input.value`, `llm.input_messages.*`, ...).

One trace per conversation (traceId from flow + conversation id). A turn is a CHAIN span (the root, with
`session.id` = the conversation); under it each guarded call is a CHAIN span (hanging under its parent call
when it has one) and each model request (attempt) an LLM span. Token counts sit on the LLM spans only, so a
tool that sums LLM spans counts each token once. Ids are hex in OTLP/JSON and bytes in protobuf; times are
unix nanoseconds. Every string is redacted like the JSONL export. Nothing is sent from here (see
core.otel_send for the opt-in live send).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from core.debuglog.events import DebugEvent, redact_text
from core.workbench.tree import CallNode, ConversationNode, TurnNode, build_tree

SCOPE = "katachi.debuglog"
SERVICE = "katachi"
SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
KIND = "openinference.span.kind"


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


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _attempt_attributes(event: DebugEvent, session: str, secrets: Sequence[str]) -> list[dict[str, Any]]:
    """One model request: an LLM span (OpenInference) and a GenAI client span (semconv), prompts and reply."""
    attrs = _Attributes(secrets)
    attrs.add(KIND, "LLM")
    attrs.add("session.id", session)
    attrs.add("llm.system", event.provider)
    attrs.add("llm.provider", event.provider)
    attrs.add("llm.model_name", event.model)
    attrs.add("input.value", _json(event.messages))
    attrs.add("input.mime_type", "application/json")
    attrs.add("output.value", event.raw)
    attrs.add("output.mime_type", "application/json" if event.schema_name else "text/plain")
    for i, message in enumerate(event.messages):
        attrs.add(f"llm.input_messages.{i}.message.role", message.get("role"))
        attrs.add(f"llm.input_messages.{i}.message.content", message.get("content"))
    if event.raw is not None:
        attrs.add("llm.output_messages.0.message.role", "assistant")
        attrs.add("llm.output_messages.0.message.content", event.raw)
    params = {"temperature": event.temperature, "max_tokens": event.max_tokens}
    attrs.add("llm.invocation_parameters", _json({k: v for k, v in params.items() if v is not None}))
    attrs.add("gen_ai.input.messages", _json(event.messages))
    if event.raw is not None:
        attrs.add("gen_ai.output.messages", _json([{"role": "assistant", "content": event.raw}]))
    attrs.add("gen_ai.provider.name", event.provider)
    attrs.add("gen_ai.system", event.provider)
    attrs.add("gen_ai.operation.name", "chat")
    attrs.add("gen_ai.request.model", event.model)
    attrs.add("gen_ai.response.model", event.model)
    attrs.add("gen_ai.request.temperature", event.temperature)
    attrs.add("gen_ai.request.max_tokens", event.max_tokens)
    attrs.add("gen_ai.response.id", event.request_id)
    attrs.add("gen_ai.output.type", "json" if event.schema_name else "text")
    if event.usage:
        tokens_in = int(event.usage.get("input_tokens", 0) or 0)
        tokens_out = int(event.usage.get("output_tokens", 0) or 0)
        attrs.add("gen_ai.usage.input_tokens", tokens_in)
        attrs.add("gen_ai.usage.output_tokens", tokens_out)
        attrs.add("llm.token_count.prompt", tokens_in)
        attrs.add("llm.token_count.completion", tokens_out)
        attrs.add("llm.token_count.total", tokens_in + tokens_out)
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


def _call_spans(
    trace: str, node: CallNode, parent: str, session: str, secrets: Sequence[str]
) -> list[dict[str, Any]]:
    """The guarded call as a CHAIN span (its input, its final output; no token counts) and its attempts."""
    ident = span_id(node.call_id)
    first = node.first
    last = node.attempts[-1] if node.attempts else None
    attrs = _Attributes(secrets)
    for key, value in (
        (KIND, "CHAIN"),
        ("session.id", session),
        ("input.value", _json(first.messages) if first and first.messages else None),
        ("input.mime_type", "application/json" if first and first.messages else None),
        ("output.value", last.raw if last else None),
        ("katachi.provider", first.provider if first else ""),
        ("katachi.model", first.model if first else ""),
        ("katachi.usage.input_tokens", node.usage("input_tokens")),
        ("katachi.usage.output_tokens", node.usage("output_tokens")),
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
                attributes=_attempt_attributes(attempt, session, secrets),
                events=[_note(attempt.ts, note, secrets) for note in attempt.notes],
                status=_status(attempt.ok, attempt.error_type),
            )
        )
    for child in node.children:
        spans.extend(_call_spans(trace, child, ident, session, secrets))
    return spans


def _turn_spans(
    conversation: ConversationNode, turn: TurnNode, secrets: Sequence[str]
) -> list[dict[str, Any]]:
    trace = trace_id(conversation)
    ident = span_id("turn", conversation.flow, conversation.conversation_id, turn.turn)
    calls = turn.all_calls()
    session = conversation.conversation_id or conversation.session_id
    first = next((c.first for c in turn.calls if c.first), None)
    last = next((a for c in reversed(turn.calls) for a in reversed(c.attempts) if a.raw is not None), None)
    user = (
        next((m.get("content") for m in reversed(first.messages) if m.get("role") == "user"), None)
        if first
        else None
    )
    attrs = _Attributes(secrets)
    attrs.add(KIND, "CHAIN")
    attrs.add("session.id", session)
    attrs.add("input.value", (first.user_input if first and first.user_input else None) or user)
    attrs.add("output.value", last.raw if last else None)
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
        spans.extend(_call_spans(trace, call, ident, session, secrets))
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
    """OTLP/JSON text of the debug log (for a download button; ids in hex as OTLP/JSON requires)."""
    return json.dumps(otlp_request(events, secrets), ensure_ascii=False)


def otlp_proto(events: Sequence[DebugEvent], secrets: Iterable[str] = ()) -> ExportTraceServiceRequest:
    """The export as an ExportTraceServiceRequest message (ids as bytes)."""
    data = otlp_request(events, secrets)
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:  # proto3 JSON reads bytes as base64; OTLP/JSON writes them as hex
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    message = ExportTraceServiceRequest()
    ParseDict(data, message)
    return message


def events_to_otlp_protobuf(events: Sequence[DebugEvent], secrets: Iterable[str] = ()) -> bytes:
    """OTLP protobuf bytes of the debug log: what an OTLP/HTTP receiver (`/v1/traces`) takes as is."""
    data: bytes = otlp_proto(events, secrets).SerializeToString()
    return data
