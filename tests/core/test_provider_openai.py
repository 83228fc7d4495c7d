"""OpenAIClient (real openai SDK) against the local wire server."""

from __future__ import annotations

import traceback
from collections.abc import Iterator

import pytest

from core.contracts.strict_copies import openai_strict_schema
from core.llm.base import JSONSchemaSpec, LLMClient, LLMRequest, ProviderError
from core.llm.openai_client import OpenAIClient
from core.llm.server_profiles import downgrade_note, forget_forms
from core.llm.token_estimate import ESTIMATOR
from tests.core.wire_server import Scripted, WireServer, closed_port

KEY = "sk-test-SECRET123"
MESSAGES = [
    {"role": "system", "content": "あなたは分析アシスタントです。"},
    {"role": "user", "content": "要約して"},
    {"role": "assistant", "content": "はい"},
    {"role": "user", "content": "続けて"},
]
SCHEMA = {
    "type": "object",
    "required": ["title"],
    "properties": {"title": {"type": "string", "maxLength": 40}, "score": {"type": "number", "minimum": 0}},
}
FREE_FORM = {"type": "object", "properties": {"data": {"type": ["object", "null"]}}, "required": ["data"]}
DOWNGRADE_NOTE = downgrade_note("json_schema", "json_object+schema")


@pytest.fixture(autouse=True)
def _fresh_process_state() -> Iterator[None]:
    """Remembered forms and token calibrations are per process: start and end each test clean."""
    forget_forms()
    ESTIMATOR.reset()
    yield
    forget_forms()
    ESTIMATOR.reset()


def make(server: WireServer, **kw: object) -> OpenAIClient:
    return OpenAIClient("gpt-test", api_key=KEY, base_url=server.openai_base_url, **kw)  # type: ignore[arg-type]


def test_is_llm_client(wire_server: WireServer) -> None:
    client = make(wire_server)
    assert isinstance(client, LLMClient)
    assert client.provider == "openai" and client.model == "gpt-test"


def test_plain_request_body_and_reply(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.text_reply("こんにちは", input_tokens=21, output_tokens=5))
    reply = make(wire_server).complete(LLMRequest(MESSAGES, max_tokens=300))
    req = wire_server.last
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body == {"model": "gpt-test", "messages": MESSAGES, "max_tokens": 300}
    assert reply.text == "こんにちは"
    assert reply.finish_reason == "stop"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (21, 5)
    assert reply.provider == "openai" and reply.model == "gpt-test"
    assert reply.latency_ms > 0 and reply.notes == []
    assert reply.wire.response_format is None and reply.ttft_ms is None and not reply.usage.estimated


def test_temperature_only_when_set(wire_server: WireServer) -> None:
    client = make(wire_server)
    client.complete(LLMRequest(MESSAGES, temperature=0.0))
    assert wire_server.last.body["temperature"] == 0.0
    client.complete(LLMRequest(MESSAGES))
    assert "temperature" not in wire_server.last.body


def test_max_completion_tokens_without_base_url() -> None:
    client = OpenAIClient("gpt-test", api_key=KEY)
    params = client._params(LLMRequest(MESSAGES, max_tokens=123), None)
    assert params["max_completion_tokens"] == 123 and "max_tokens" not in params


def test_json_schema_strict_copy(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.text_reply('{"title": "t", "score": null}'))
    reply = make(wire_server).complete(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("summary", SCHEMA)))
    assert wire_server.last.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "summary", "schema": openai_strict_schema(SCHEMA), "strict": True},
    }
    assert wire_server.last.body["response_format"]["json_schema"]["schema"]["properties"]["score"] == {
        "type": ["number", "null"]
    }
    assert reply.text == '{"title": "t", "score": null}'
    assert reply.wire.response_format == "json_schema strict"


def test_free_form_schema_sent_non_strict(wire_server: WireServer) -> None:
    reply = make(wire_server).complete(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("raw", FREE_FORM)))
    assert wire_server.last.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "raw", "schema": FREE_FORM, "strict": False},
    }
    assert reply.wire.response_format == "json_schema non-strict"


def test_downgrade_to_json_object_with_schema_after_400(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.response_format_rejected(), Scripted.text_reply('{"title": "x"}'))
    client = make(wire_server)
    request = LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("summary", SCHEMA))
    reply = client.complete(request)
    assert [r.body["response_format"]["type"] for r in wire_server.requests] == ["json_schema", "json_object"]
    assert wire_server.last.body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert reply.text == '{"title": "x"}'
    assert reply.notes == [DOWNGRADE_NOTE] and reply.wire.response_format == "json_object+schema"
    # remembered: the next call goes straight to json_object (with the schema), still noting it
    reply2 = client.complete(request)
    assert len(wire_server.requests) == 3
    assert wire_server.last.body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert reply2.notes == [DOWNGRADE_NOTE] and not client.json_schema_supported
    # requests without a schema are unaffected
    plain = client.complete(LLMRequest(MESSAGES))
    assert "response_format" not in wire_server.last.body and plain.notes == []


@pytest.mark.parametrize("status", [404, 422])
def test_downgrade_on_404_422_mentioning_json_schema(wire_server: WireServer, status: int) -> None:
    wire_server.enqueue(Scripted.error(status, "unknown field json_schema"), Scripted.text_reply("{}"))
    reply = make(wire_server).complete(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("s", SCHEMA)))
    assert reply.notes == [DOWNGRADE_NOTE]
    assert wire_server.last.body["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_other_400_is_bad_request_without_downgrade(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.error(400, "model not found", error_type="invalid_request_error"))
    client = make(wire_server)
    with pytest.raises(ProviderError) as info:
        client.complete(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("s", SCHEMA)))
    assert info.value.kind == "bad_request" and info.value.status == 400
    assert len(wire_server.requests) == 1 and client.json_schema_supported


@pytest.mark.parametrize(("finish", "expected"), [("length", "length"), ("content_filter", "content_filter")])
def test_finish_reasons(wire_server: WireServer, finish: str, expected: str) -> None:
    wire_server.enqueue(Scripted.text_reply('{"title": "tru', finish=finish))
    reply = make(wire_server).complete(LLMRequest(MESSAGES))
    assert reply.finish_reason == expected and reply.text == '{"title": "tru'


def test_refusal(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.refusal("お手伝いできません。"))
    reply = make(wire_server).complete(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("s", SCHEMA)))
    assert reply.text == "お手伝いできません。" and reply.finish_reason == "refusal"


def test_stream_deltas_and_final_reply(wire_server: WireServer) -> None:
    wire_server.enqueue(
        Scripted.text_reply("ストリーミングの応答です", chunk_chars=3, input_tokens=9, output_tokens=4)
    )
    stream = make(wire_server).stream(LLMRequest(MESSAGES, temperature=0.3))
    deltas = list(stream)
    body = wire_server.last.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.3 and body["messages"] == MESSAGES
    assert deltas == ["ストリ", "ーミン", "グの応", "答です"]
    assert stream.reply is not None
    assert stream.reply.text == "ストリーミングの応答です"
    assert stream.reply.finish_reason == "stop"
    assert (stream.reply.usage.input_tokens, stream.reply.usage.output_tokens) == (9, 4)
    assert not stream.reply.usage.estimated
    assert stream.reply.provider == "openai"
    assert stream.reply.ttft_ms is not None and 0 < stream.reply.ttft_ms <= stream.reply.latency_ms


def test_stream_length_and_refusal(wire_server: WireServer) -> None:
    client = make(wire_server)
    wire_server.enqueue(Scripted.text_reply("abcdef", finish="length"), Scripted.refusal("no"))
    s1 = client.stream(LLMRequest(MESSAGES))
    assert "".join(s1) == "abcdef" and s1.reply is not None and s1.reply.finish_reason == "length"
    s2 = client.stream(LLMRequest(MESSAGES))
    assert "".join(s2) == "no" and s2.reply is not None and s2.reply.finish_reason == "refusal"


def test_stream_downgrade_note(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.response_format_rejected(), Scripted.text_reply("{}"))
    stream = make(wire_server).stream(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("s", SCHEMA)))
    assert "".join(stream) == "{}"
    assert stream.reply is not None and stream.reply.notes == [DOWNGRADE_NOTE]


def _assert_no_key(err: ProviderError) -> None:
    assert KEY not in str(err) and KEY not in err.detail and KEY not in repr(err.args)
    # the SDK exception is not chained, so a printed traceback cannot show it either
    assert err.__cause__ is None and err.__suppress_context__
    assert KEY not in "".join(traceback.format_exception(err))


@pytest.mark.parametrize(
    ("script", "kind", "status"),
    [
        (
            Scripted.error(429, "Rate limit reached", retry_after=1, error_type="rate_limit_exceeded"),
            "rate_limit",
            429,
        ),
        (Scripted.error(500, "The server had an error"), "server_error", 500),
        (Scripted.error(503, "overloaded"), "server_error", 503),
        (Scripted.error(401, f"Incorrect API key provided: {KEY}"), "auth", 401),
        (Scripted.error(403, "forbidden"), "auth", 403),
    ],
)
def test_status_errors(wire_server: WireServer, script: Scripted, kind: str, status: int) -> None:
    wire_server.enqueue(script)
    with pytest.raises(ProviderError) as info:
        make(wire_server).complete(LLMRequest(MESSAGES))
    assert info.value.kind == kind and info.value.status == status
    assert len(wire_server.requests) == 1, "max_retries=0: no SDK retry"
    _assert_no_key(info.value)
    assert info.value.user_message


def test_stream_status_error_raises_at_call(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.error(429, "slow down", retry_after=1))
    with pytest.raises(ProviderError) as info:
        make(wire_server).stream(LLMRequest(MESSAGES))
    assert info.value.kind == "rate_limit"
    _assert_no_key(info.value)


def test_timeout(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted(delay=2.0))
    with pytest.raises(ProviderError) as info:
        make(wire_server, timeout=0.5).complete(LLMRequest(MESSAGES))
    assert info.value.kind == "timeout" and info.value.status is None
    _assert_no_key(info.value)


def test_connection_refused() -> None:
    client = OpenAIClient("gpt-test", api_key=KEY, base_url=f"http://127.0.0.1:{closed_port()}/v1", timeout=2)
    with pytest.raises(ProviderError) as info:
        client.complete(LLMRequest(MESSAGES))
    assert info.value.kind == "connection"
    _assert_no_key(info.value)


def test_missing_key_is_auth_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(ProviderError) as info:
        OpenAIClient("gpt-test")
    assert info.value.kind == "auth"
