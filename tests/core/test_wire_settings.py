"""Issue #9 item 2, what was really sent: the settings every debug event records equal what the local
wire server received (OpenAI and Anthropic wire formats, strict json_schema and the json_object fallback),
the request id is the one the server answered with, and no credential appears in any event field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from core.debuglog.events import DebugEvent
from core.guard.json_guard import guarded_json, guarded_stream, guarded_text
from core.llm.anthropic_client import AnthropicClient
from core.llm.openai_client import OpenAIClient
from core.llm.server_profiles import forget_forms
from tests.core.wire_server import Scripted, WireServer

KEY = "test-key-7Qm2Zx9Lw4"  # no sk- prefix: the pattern redaction would not hide it, only its absence does
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["answer", "score"],
    "additionalProperties": False,
}
REPLY = json.dumps({"answer": "はい", "score": 3}, ensure_ascii=False)
MESSAGES = [{"role": "system", "content": "JSONで答えてください。"}, {"role": "user", "content": "質問"}]
OPENAI_SDK = f"openai {openai.__version__}"
ANTHROPIC_SDK = f"anthropic {anthropic.__version__}"


class RawSink:
    """Keeps events exactly as the guard emitted them (no redaction: the guard itself must not leak)."""

    def __init__(self) -> None:
        self.events: list[DebugEvent] = []

    def emit(self, event: DebugEvent) -> None:
        self.events.append(event)

    def calls(self) -> list[DebugEvent]:
        return [e for e in self.events if e.kind in ("call", "error")]


@pytest.fixture
def server() -> Iterator[WireServer]:
    forget_forms()
    with WireServer() as wire:
        yield wire
    forget_forms()


def settings(event: DebugEvent) -> dict[str, Any]:
    return {
        "temperature": event.temperature,
        "max_tokens": event.max_tokens,
        "strict": event.strict,
        "wire_schema": event.wire_schema,
        "request_id": event.request_id,
        "base_host": event.base_host,
        "sdk": event.sdk,
        "response_format": event.response_format,
    }


def no_credentials(sink: RawSink) -> None:
    for event in sink.events:
        text = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
        assert KEY not in text and "hunter2" not in text and "userinfo" not in text


def test_openai_strict_json_schema_settings_equal_the_wire(server: WireServer) -> None:
    server.enqueue(Scripted.text_reply(REPLY, cached_tokens=5))
    sink = RawSink()
    client = OpenAIClient("gpt-test", api_key=KEY, base_url=server.openai_base_url, server="openai")
    result = guarded_json(client, MESSAGES, SCHEMA, name="Answer", sink=sink, temperature=0.2, max_tokens=300)
    assert result.ok
    (request,) = server.requests
    fmt = request.body["response_format"]
    assert request.body["temperature"] == 0.2 and request.body["max_completion_tokens"] == 300
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    (call,) = sink.calls()
    assert settings(call) == {
        "temperature": 0.2,
        "max_tokens": 300,
        "strict": True,
        "wire_schema": fmt["json_schema"]["schema"],
        "request_id": request.request_id,
        "base_host": f"127.0.0.1:{server.port}",
        "sdk": OPENAI_SDK,
        "response_format": "json_schema strict",
    }
    assert request.request_id == "req_test_0001"
    assert call.usage == {"input_tokens": 11, "output_tokens": 7, "cached_input_tokens": 5}
    assert call.call_id == result.call_id
    no_credentials(sink)


def test_openai_json_object_fallback_records_what_was_finally_sent(server: WireServer) -> None:
    server.reject("json_schema", Scripted.response_format_rejected())
    server.reject("json_object+schema", Scripted.schema_field_rejected())
    server.enqueue(Scripted.text_reply(REPLY))
    sink = RawSink()
    client = OpenAIClient("local-model", api_key=KEY, base_url=server.openai_base_url, server="auto")
    result = guarded_json(client, MESSAGES, SCHEMA, name="Answer", sink=sink, max_tokens=256)
    assert result.ok
    sent = [r.body["response_format"] for r in server.requests]
    assert [f["type"] for f in sent] == ["json_schema", "json_object", "json_object"]
    accepted = server.requests[-1]
    assert accepted.body["response_format"] == {"type": "json_object"} and "temperature" not in accepted.body
    (call,) = sink.calls()
    assert settings(call) == {
        "temperature": None,
        "max_tokens": accepted.body["max_tokens"],
        "strict": None,
        "wire_schema": None,
        "request_id": accepted.request_id,
        "base_host": f"127.0.0.1:{server.port}",
        "sdk": OPENAI_SDK,
        "response_format": "json_object",
    }
    assert accepted.request_id == "req_test_0003" and call.max_tokens == 256


def test_openai_json_object_with_schema_records_the_schema_sent(server: WireServer) -> None:
    server.enqueue(Scripted.text_reply(REPLY))
    sink = RawSink()
    client = OpenAIClient("llama", api_key=KEY, base_url=server.openai_base_url, server="llamacpp")
    assert guarded_json(client, MESSAGES, SCHEMA, name="Answer", sink=sink).ok
    (request,) = server.requests
    (call,) = sink.calls()
    assert request.body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert (call.strict, call.wire_schema, call.response_format) == (None, SCHEMA, "json_object+schema")
    assert (call.request_id, call.max_tokens) == (request.request_id, request.body["max_tokens"])


def test_openai_stream_records_ttft_request_id_and_settings(server: WireServer) -> None:
    server.enqueue(Scripted.text_reply("ストリームの返答です", chunk_chars=3))
    sink = RawSink()
    client = OpenAIClient("gpt-test", api_key=KEY, base_url=server.openai_base_url)
    stream = guarded_stream(client, MESSAGES, sink=sink, temperature=0.7, max_tokens=120)
    assert "".join(stream) == "ストリームの返答です"
    (request,) = server.requests
    assert request.body["stream"] is True and request.body["temperature"] == 0.7
    (call,) = sink.calls()
    assert call.ttft_ms is not None and 0 <= call.ttft_ms <= call.latency_ms  # type: ignore[operator]
    assert settings(call) == {
        "temperature": 0.7,
        "max_tokens": request.body["max_tokens"],
        "strict": None,
        "wire_schema": None,
        "request_id": request.request_id,
        "base_host": f"127.0.0.1:{server.port}",
        "sdk": OPENAI_SDK,
        "response_format": None,
    }
    assert call.max_tokens == 120 and stream.result is not None and stream.result.call_id == stream.call_id


def test_anthropic_settings_equal_the_wire(server: WireServer) -> None:
    server.enqueue(
        Scripted.text_reply(REPLY, cached_tokens=4), Scripted.text_reply("ストリーム", chunk_chars=2)
    )
    sink = RawSink()
    client = AnthropicClient("claude-test", api_key=KEY, base_url=server.anthropic_base_url)
    assert guarded_json(
        client, MESSAGES, SCHEMA, name="Answer", sink=sink, temperature=0.3, max_tokens=400
    ).ok
    stream = guarded_stream(client, MESSAGES, sink=sink, max_tokens=90)
    assert "".join(stream) == "ストリーム"
    first, second = server.requests
    structured, streamed = sink.calls()
    assert first.body["temperature"] == 0.3 and first.body["max_tokens"] == 400
    assert settings(structured) == {
        "temperature": 0.3,
        "max_tokens": 400,
        "strict": None,
        "wire_schema": first.body["output_config"]["format"]["schema"],
        "request_id": first.request_id,
        "base_host": f"127.0.0.1:{server.port}",
        "sdk": ANTHROPIC_SDK,
        "response_format": None,
    }
    assert structured.usage["cached_input_tokens"] == 4
    assert "temperature" not in second.body and second.body["max_tokens"] == 90
    assert (streamed.temperature, streamed.max_tokens, streamed.request_id) == (None, 90, second.request_id)
    assert streamed.ttft_ms is not None and streamed.sdk == ANTHROPIC_SDK
    no_credentials(sink)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_provider_error_records_its_request_id_and_settings(server: WireServer, wire: str) -> None:
    server.enqueue(Scripted.error(429, "slow down"))
    sink = RawSink()
    url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    host_url = url.replace("http://", "http://userinfo:hunter2@")
    client: Any = (
        OpenAIClient("gpt-test", api_key=KEY, base_url=host_url)
        if wire == "openai"
        else AnthropicClient("claude-test", api_key=KEY, base_url=host_url)
    )
    result = guarded_text(client, MESSAGES, sink=sink, temperature=0.5, max_tokens=64)
    assert not result.ok and result.error_type == "provider_error"
    (request,) = server.requests
    (error,) = sink.calls()
    assert error.kind == "error" and error.request_id == request.request_id == "req_test_0001"
    assert (error.temperature, error.max_tokens) == (0.5, 64)
    assert error.base_host == f"127.0.0.1:{server.port}"
    assert error.sdk == (OPENAI_SDK if wire == "openai" else ANTHROPIC_SDK)
    assert result.attempts[0].wire.request_id == request.request_id
    no_credentials(sink)
