"""AnthropicClient (real anthropic SDK) against the local wire server."""

from __future__ import annotations

import traceback

import pytest

from core.contracts.strict_copies import openai_strict_schema
from core.llm.anthropic_client import CONVERSATION_START, AnthropicClient, split_messages
from core.llm.base import JSONSchemaSpec, LLMClient, LLMRequest, ProviderError
from tests.core.wire_server import Scripted, WireServer, closed_port

KEY = "sk-test-SECRET123"
SCHEMA = {
    "type": "object",
    "required": ["title"],
    "properties": {
        "title": {"type": "string", "maxLength": 40},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
FREE_FORM = {"type": "object", "properties": {"data": {"type": ["object", "null"]}}, "required": ["data"]}
SIMPLE = [{"role": "user", "content": "こんにちは"}]


def make(server: WireServer, **kw: object) -> AnthropicClient:
    return AnthropicClient("claude-test", api_key=KEY, base_url=server.anthropic_base_url, **kw)  # type: ignore[arg-type]


def test_is_llm_client(wire_server: WireServer) -> None:
    client = make(wire_server)
    assert isinstance(client, LLMClient)
    assert client.provider == "anthropic" and client.model == "claude-test"


def test_system_separated_and_roles_merged(wire_server: WireServer) -> None:
    messages = [
        {"role": "system", "content": "ルール1"},
        {"role": "system", "content": "ルール2"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "c"},
        {"role": "assistant", "content": "d"},
        {"role": "user", "content": "e"},
    ]
    wire_server.enqueue(Scripted.text_reply("了解", input_tokens=30, output_tokens=2))
    reply = make(wire_server).complete(LLMRequest(messages, max_tokens=256))
    req = wire_server.last
    assert req.path == "/v1/messages"
    assert KEY in (req.headers.get("x-api-key", "") + req.headers.get("authorization", ""))
    assert req.body == {
        "model": "claude-test",
        "max_tokens": 256,
        "system": "ルール1\n\nルール2",
        "messages": [
            {"role": "user", "content": "a\n\nb"},
            {"role": "assistant", "content": "c\n\nd"},
            {"role": "user", "content": "e"},
        ],
    }
    assert reply.text == "了解" and reply.finish_reason == "stop"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (30, 2)
    assert reply.provider == "anthropic" and reply.model == "claude-test" and reply.latency_ms > 0
    assert reply.ttft_ms is None and not reply.usage.estimated  # not streamed; counted by the server


def test_assistant_first_gets_user_opener() -> None:
    system, turns = split_messages(
        [{"role": "system", "content": "s"}, {"role": "assistant", "content": "ようこそ"}]
    )
    assert system == "s"
    assert turns == [
        {"role": "user", "content": CONVERSATION_START},
        {"role": "assistant", "content": "ようこそ"},
    ]


def test_no_system_key_without_system_message(wire_server: WireServer) -> None:
    make(wire_server).complete(LLMRequest(SIMPLE))
    assert "system" not in wire_server.last.body


def test_temperature_in_body_only_when_set(wire_server: WireServer) -> None:
    client = make(wire_server)
    client.complete(LLMRequest(SIMPLE, temperature=0.7))
    assert wire_server.last.body["temperature"] == 0.7
    client.complete(LLMRequest(SIMPLE))
    assert "temperature" not in wire_server.last.body


def test_output_config_strict_schema(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.text_reply('{"title": "t", "tags": null}'))
    reply = make(wire_server).complete(LLMRequest(SIMPLE, json_schema=JSONSchemaSpec("summary", SCHEMA)))
    body = wire_server.last.body
    assert body["output_config"] == {
        "format": {"type": "json_schema", "schema": openai_strict_schema(SCHEMA)}
    }
    assert body["output_config"]["format"]["schema"]["additionalProperties"] is False
    assert "maxLength" not in body["output_config"]["format"]["schema"]["properties"]["title"]
    assert reply.text == '{"title": "t", "tags": null}'


def test_output_config_free_form_sends_original(wire_server: WireServer) -> None:
    make(wire_server).complete(LLMRequest(SIMPLE, json_schema=JSONSchemaSpec("raw", FREE_FORM)))
    assert wire_server.last.body["output_config"] == {"format": {"type": "json_schema", "schema": FREE_FORM}}


@pytest.mark.parametrize(
    ("finish", "expected"), [("stop", "stop"), ("length", "length"), ("refusal", "refusal")]
)
def test_finish_reasons(wire_server: WireServer, finish: str, expected: str) -> None:
    wire_server.enqueue(Scripted.text_reply("partial", finish=finish))
    reply = make(wire_server).complete(LLMRequest(SIMPLE))
    assert reply.finish_reason == expected and reply.text == "partial"


def test_stop_sequence_maps_to_stop_and_an_unknown_reason_is_other(wire_server: WireServer) -> None:
    wire_server.enqueue(
        Scripted.text_reply("x", finish="stop_sequence"), Scripted.text_reply("y", finish="pause_turn")
    )
    client = make(wire_server)
    assert client.complete(LLMRequest(SIMPLE)).finish_reason == "stop"
    assert client.complete(LLMRequest(SIMPLE)).finish_reason == "other"  # pause_turn: not in our vocabulary


def test_refusal(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.refusal("お答えできません。"))
    reply = make(wire_server).complete(LLMRequest(SIMPLE))
    assert reply.finish_reason == "refusal" and reply.text == "お答えできません。"


def test_stream_deltas_and_final_reply(wire_server: WireServer) -> None:
    messages = [{"role": "system", "content": "sys"}, *SIMPLE]
    wire_server.enqueue(
        Scripted.text_reply("ストリーミング応答", chunk_chars=3, input_tokens=12, output_tokens=6)
    )
    stream = make(wire_server).stream(
        LLMRequest(messages, temperature=0.2, json_schema=JSONSchemaSpec("s", SCHEMA))
    )
    deltas = list(stream)
    body = wire_server.last.body
    assert body["stream"] is True and body["system"] == "sys" and body["temperature"] == 0.2
    assert body["messages"] == SIMPLE
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert deltas == ["ストリ", "ーミン", "グ応答"]
    assert stream.reply is not None
    assert stream.reply.text == "ストリーミング応答" and stream.reply.finish_reason == "stop"
    assert (stream.reply.usage.input_tokens, stream.reply.usage.output_tokens) == (12, 6)
    assert not stream.reply.usage.estimated
    assert stream.reply.ttft_ms is not None and 0 < stream.reply.ttft_ms <= stream.reply.latency_ms


@pytest.mark.parametrize(("finish", "expected"), [("length", "length"), ("refusal", "refusal")])
def test_stream_finish_reasons(wire_server: WireServer, finish: str, expected: str) -> None:
    wire_server.enqueue(Scripted.text_reply('{"a": 1', finish=finish))
    stream = make(wire_server).stream(LLMRequest(SIMPLE))
    assert stream.reply is None
    assert "".join(stream) == '{"a": 1'
    assert stream.reply is not None and stream.reply.finish_reason == expected


def _assert_no_key(err: ProviderError) -> None:
    assert KEY not in str(err) and KEY not in err.detail and KEY not in repr(err.args)
    # the SDK exception is not chained, so a printed traceback cannot show it either
    assert err.__cause__ is None and err.__suppress_context__
    assert KEY not in "".join(traceback.format_exception(err))


@pytest.mark.parametrize(
    ("script", "kind", "status"),
    [
        (Scripted.error(429, "rate limited", retry_after=1), "rate_limit", 429),
        (Scripted.error(500, "internal"), "server_error", 500),
        (Scripted.error(529, "Overloaded"), "server_error", 529),
        (Scripted.error(401, f"invalid x-api-key {KEY}"), "auth", 401),
        (Scripted.error(403, "permission"), "auth", 403),
        (Scripted.error(400, "messages: field required"), "bad_request", 400),
    ],
)
def test_status_errors(wire_server: WireServer, script: Scripted, kind: str, status: int) -> None:
    wire_server.enqueue(script)
    with pytest.raises(ProviderError) as info:
        make(wire_server).complete(LLMRequest(SIMPLE))
    assert info.value.kind == kind and info.value.status == status
    assert len(wire_server.requests) == 1, "max_retries=0: no SDK retry"
    _assert_no_key(info.value)


def test_stream_status_error_raises_at_call(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.error(529, "Overloaded"))
    with pytest.raises(ProviderError) as info:
        make(wire_server).stream(LLMRequest(SIMPLE))
    assert info.value.kind == "server_error" and info.value.status == 529


def test_timeout(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted(delay=2.0))
    with pytest.raises(ProviderError) as info:
        make(wire_server, timeout=0.5).complete(LLMRequest(SIMPLE))
    assert info.value.kind == "timeout"
    _assert_no_key(info.value)


def test_connection_refused() -> None:
    client = AnthropicClient(
        "claude-test", api_key=KEY, base_url=f"http://127.0.0.1:{closed_port()}", timeout=2
    )
    with pytest.raises(ProviderError) as info:
        client.complete(LLMRequest(SIMPLE))
    assert info.value.kind == "connection"
    _assert_no_key(info.value)
