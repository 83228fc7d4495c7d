"""core.workbench.otel: the OTLP/JSON export parses with opentelemetry-proto; span count, parent links,
GenAI attributes, hex ids, nanosecond times and redaction."""

import base64
import json
import re

from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from core.debuglog.events import DebugEvent
from core.workbench.otel import events_to_otlp, events_to_otlp_protobuf, span_id, trace_id
from core.workbench.tree import build_tree


def ev(kind, call_id, attempt=1, parent="", step="reply", ts=100.0, latency=None, ok=True, **kw):
    return DebugEvent(
        flow="review",
        step=step,
        kind=kind,
        call_id=call_id,
        attempt=attempt,
        provider="openai",
        model="gpt-4.1-mini",
        conversation_id="thread-1",
        session_id="sess-1",
        turn=1,
        parent_id=parent,
        ts=ts,
        latency_ms=latency,
        ok=ok,
        **kw,
    )


EVENTS = [
    ev(
        "call",
        "a",
        ts=101.0,
        latency=1000,
        ok=False,
        error_type="schema_error",
        usage={"input_tokens": 120, "output_tokens": 30, "cached_input_tokens": 100},
        temperature=0.2,
        max_tokens=800,
        request_id="req_123",
        base_host="api.openai.com",
        schema_name="Turn",
        notes=["strict を json_object に下げました"],
        raw="key sk-proj-abcdefghijklmnop",
    ),
    ev("repair", "a", ts=101.0),
    ev("call", "a", attempt=2, ts=102.5, latency=1500, usage={"input_tokens": 200, "output_tokens": 40}),
    ev("result", "a", attempt=2, ts=102.5),
    ev(
        "call",
        "s",
        parent="a",
        step="summary",
        ts=104.0,
        latency=800,
        usage={"input_tokens": 5, "output_tokens": 6},
    ),
    ev("note", "s", parent="a", step="summary", ts=104.0, notes=["履歴を 3 件省きました"]),
]


def attrs(span):
    out = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value"))
    return out


def test_the_export_parses_with_opentelemetry_proto():
    text = events_to_otlp(EVENTS, secrets=["req_123"])
    request = Parse(text, ExportTraceServiceRequest())
    spans = list(request.resource_spans[0].scope_spans[0].spans)
    # turn + call a + its 2 attempts + call s (child of a) + its 1 attempt
    assert [s.name for s in spans] == [
        "review turn 1",
        "review reply",
        "chat gpt-4.1-mini",
        "chat gpt-4.1-mini",
        "review summary",
        "chat gpt-4.1-mini",
    ]
    turn, call_a, a1, a2, call_s, s1 = spans
    assert len({s.trace_id for s in spans}) == 1
    assert turn.parent_span_id == b""
    assert call_a.parent_span_id == turn.span_id
    assert a1.parent_span_id == a2.parent_span_id == call_a.span_id
    assert call_s.parent_span_id == call_a.span_id  # the summary hangs under the reply that caused it
    assert s1.parent_span_id == call_s.span_id
    assert a1.start_time_unix_nano == 100_000_000_000 and a1.end_time_unix_nano == 101_000_000_000
    assert a1.kind == 3 and a1.status.code == 2 and a1.status.message == "schema_error"
    assert a2.status.code == 1 and call_a.status.code == 1
    first = attrs(a1)
    assert first["gen_ai.system"] == "openai"
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.request.model"] == "gpt-4.1-mini"
    assert first["gen_ai.request.temperature"] == 0.2
    assert first["gen_ai.request.max_tokens"] == 800
    assert first["gen_ai.usage.input_tokens"] == 120
    assert first["gen_ai.usage.output_tokens"] == 30
    assert first["katachi.usage.cached_input_tokens"] == 100
    assert first["gen_ai.response.id"] == "[REDACTED]"  # a secret value given to the export is masked
    assert first["server.address"] == "api.openai.com"
    assert first["katachi.ok"] is False and first["katachi.error_type"] == "schema_error"
    assert [e.attributes[0].value.string_value for e in a1.events] == ["strict を json_object に下げました"]
    call = attrs(call_a)
    assert call["katachi.flow"] == "review" and call["katachi.step"] == "reply"
    assert call["katachi.attempts"] == 2 and call["katachi.usage.input_tokens"] == 320
    assert "gen_ai.usage.input_tokens" not in call  # tokens only on the LLM spans: counted once
    assert [e.attributes[0].value.string_value for e in call_s.events] == ["履歴を 3 件省きました"]
    assert attrs(turn)["katachi.conversation_id"] == "thread-1"
    assert "sk-proj" not in text


def test_ids_are_hex_as_otlp_json_requires():
    data = json.loads(events_to_otlp(EVENTS))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert all(re.fullmatch(r"[0-9a-f]{32}", s["traceId"]) for s in spans)
    assert all(re.fullmatch(r"[0-9a-f]{16}", s["spanId"]) for s in spans)
    assert spans[1]["spanId"] == span_id("a") and spans[0]["traceId"] == trace_id(build_tree(EVENTS)[0])
    assert isinstance(spans[2]["startTimeUnixNano"], str)
    # OTLP/JSON ids are hex (a deviation from proto3 JSON, which reads bytes as base64): with the ids
    # turned into base64 first, the parsed ids are exactly 16 and 8 bytes.
    for span in spans:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    parsed = Parse(json.dumps(data), ExportTraceServiceRequest()).resource_spans[0].scope_spans[0].spans
    assert parsed[1].span_id.hex() == span_id("a") and len(parsed[0].trace_id) == 16


def test_events_without_a_conversation_still_export_and_an_empty_log_has_no_spans():
    text = events_to_otlp([DebugEvent(flow="memory", step="reply", kind="call", call_id="x", ts=5.0)])
    spans = Parse(text, ExportTraceServiceRequest()).resource_spans[0].scope_spans[0].spans
    assert [s.name for s in spans] == ["memory turn 0", "memory reply", "chat"]
    empty = Parse(events_to_otlp([]), ExportTraceServiceRequest())
    assert list(empty.resource_spans[0].scope_spans[0].spans) == []


def test_openinference_kinds_prompts_replies_tokens_once_and_the_conversation_as_session():
    events = [*EVENTS]
    events[0] = ev(
        "call",
        "a",
        ts=101.0,
        latency=1000,
        ok=False,
        error_type="schema_error",
        usage={"input_tokens": 120, "output_tokens": 30},
        messages=[
            {"role": "system", "content": "JSONで"},
            {"role": "user", "content": "契約の質問 sk-proj-abcdefghijklmnop"},
        ],
        raw='{"answer": 1}',
        schema_name="Turn",
    )
    request = ExportTraceServiceRequest.FromString(events_to_otlp_protobuf(events))
    spans = list(request.resource_spans[0].scope_spans[0].spans)
    kinds = [attrs(s)["openinference.span.kind"] for s in spans]
    assert kinds == ["CHAIN", "CHAIN", "LLM", "LLM", "CHAIN", "LLM"]
    assert {attrs(s)["session.id"] for s in spans} == {"thread-1"}
    a1 = attrs(spans[2])
    assert a1["llm.input_messages.1.message.role"] == "user"
    assert a1["llm.input_messages.1.message.content"] == "契約の質問 [REDACTED]"
    assert a1["llm.output_messages.0.message.content"] == '{"answer": 1}' == a1["output.value"]
    assert json.loads(a1["input.value"])[0] == {"role": "system", "content": "JSONで"}
    assert json.loads(a1["gen_ai.input.messages"]) == json.loads(a1["input.value"])
    assert a1["llm.model_name"] == "gpt-4.1-mini" and a1["llm.token_count.total"] == 150
    llm_tokens = sum(attrs(s).get("llm.token_count.prompt", 0) for s in spans)
    all_tokens = sum(
        attrs(s).get("llm.token_count.prompt", 0) + attrs(s).get("gen_ai.usage.input_tokens", 0)
        for s in spans
        if attrs(s)["openinference.span.kind"] != "LLM"
    )
    assert llm_tokens == 120 + 200 + 5 and all_tokens == 0
    turn = attrs(spans[0])
    assert turn["input.value"] == "契約の質問 [REDACTED]" and "output.value" in turn


def test_protobuf_ids_are_the_bytes_of_the_json_hex_ids():
    data = json.loads(events_to_otlp(EVENTS))
    json_spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    proto = ExportTraceServiceRequest.FromString(events_to_otlp_protobuf(EVENTS))
    proto_spans = proto.resource_spans[0].scope_spans[0].spans
    assert len(proto_spans) == len(json_spans) == 6
    for j, p in zip(json_spans, proto_spans, strict=True):
        assert p.trace_id.hex() == j["traceId"] and len(p.trace_id) == 16
        assert p.span_id.hex() == j["spanId"] and len(p.span_id) == 8
        assert p.parent_span_id.hex() == j.get("parentSpanId", "")
        assert p.start_time_unix_nano == int(j["startTimeUnixNano"])
