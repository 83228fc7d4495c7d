"""Server profiles, form downgrades, remembered forms, estimated usage and ttft: real openai SDK on the wire."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from core.contracts.strict_copies import strict_copy
from core.debuglog.events import DebugEvent, ListSink
from core.guard.json_guard import guarded_json, guarded_stream
from core.llm.base import JSONSchemaSpec, LLMRequest, ProviderError
from core.llm.openai_client import OpenAIClient
from core.llm.server_profiles import PROFILES, downgrade_note, forget_forms, remembered_forms
from core.llm.token_estimate import ESTIMATOR
from tests.core.wire_server import Scripted, WireServer

KEY = "sk-test-SECRET123"
MESSAGES = [{"role": "system", "content": "要約アシスタントです。"}, {"role": "user", "content": "要約して"}]
SCHEMA = {
    "type": "object",
    "required": ["title"],
    "properties": {"title": {"type": "string", "maxLength": 40}, "score": {"type": "number", "minimum": 0}},
}
VALID = '{"title": "月次報告"}'
LLAMACPP_DOWNGRADE = downgrade_note("json_schema", "json_object+schema")


@pytest.fixture(autouse=True)
def _fresh_process_state() -> Iterator[None]:
    forget_forms()
    ESTIMATOR.reset()
    yield
    forget_forms()
    ESTIMATOR.reset()


def make(server: WireServer, profile: str = "auto") -> OpenAIClient:
    return OpenAIClient("local-model", api_key=KEY, base_url=server.openai_base_url, server=profile)


def forms_sent(server: WireServer) -> list[str | None]:
    return [_form(r.body) for r in server.requests]


def _form(body: dict[str, Any]) -> str | None:
    fmt = body.get("response_format")
    if fmt is None:
        return None
    return "json_object+schema" if fmt["type"] == "json_object" and "schema" in fmt else fmt["type"]


STRICT = {
    "type": "json_schema",
    "json_schema": {"name": "summary", "schema": strict_copy(SCHEMA), "strict": True},
}


@pytest.mark.parametrize(
    ("profile", "token_param", "response_format", "label"),
    [
        ("auto", "max_tokens", STRICT, "json_schema strict"),
        ("openai", "max_completion_tokens", STRICT, "json_schema strict"),
        ("vllm", "max_tokens", STRICT, "json_schema strict"),
        ("lmstudio", "max_tokens", STRICT, "json_schema strict"),
        ("azure", "max_completion_tokens", STRICT, "json_schema strict"),
        (
            "ollama",
            "max_tokens",
            {"type": "json_schema", "json_schema": {"name": "summary", "schema": SCHEMA}},
            "ollama format",
        ),
        ("llamacpp", "max_tokens", {"type": "json_object", "schema": SCHEMA}, "json_object+schema"),
    ],
)
def test_exact_request_body_per_profile(
    wire_server: WireServer, profile: str, token_param: str, response_format: dict[str, Any], label: str
) -> None:
    wire_server.enqueue(Scripted.text_reply(VALID))
    reply = make(wire_server, profile).complete(
        LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("summary", SCHEMA), max_tokens=300)
    )
    assert wire_server.last.body == {
        "model": "local-model",
        "messages": MESSAGES,
        token_param: 300,
        "response_format": response_format,
    }
    assert reply.wire.response_format == label and reply.notes == []


def test_every_profile_is_known_to_the_tests() -> None:
    assert set(PROFILES) == {"auto", "openai", "vllm", "ollama", "llamacpp", "lmstudio", "azure"}


def test_unknown_profile_name_is_auto(wire_server: WireServer) -> None:
    assert make(wire_server, "mystery").profile.name == "auto"


def test_llamacpp_500_downgrades_to_json_object_with_schema_in_one_extra_request(
    wire_server: WireServer,
) -> None:
    wire_server.reject("json_schema", Scripted.llamacpp_response_format_error())
    wire_server.enqueue(Scripted.text_reply(VALID, send_usage=False))
    events: list[DebugEvent] = []
    client = make(wire_server)
    result = guarded_json(client, MESSAGES, SCHEMA, name="summary", sink=ListSink(events), tags={"flow": "t"})
    assert result.ok and result.value == {"title": "月次報告"}
    assert forms_sent(wire_server) == ["json_schema", "json_object+schema"]
    assert wire_server.last.body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    (attempt,) = result.attempts
    assert attempt.wire.response_format == "json_object+schema" and attempt.notes == [LLAMACPP_DOWNGRADE]
    # the DebugEvent carries the form sent and the estimated usage (the reply had none)
    call = next(e for e in events if e.kind == "call")
    assert call.response_format == "json_object+schema" and call.notes == [LLAMACPP_DOWNGRADE]
    assert call.usage_estimated and call.usage["input_tokens"] > 0 and call.usage["output_tokens"] > 0
    assert remembered_forms() == {client.server_url: "json_object+schema"}


def test_server_rejecting_both_schema_forms_falls_back_to_bare_json_object(wire_server: WireServer) -> None:
    wire_server.reject("json_schema", Scripted.response_format_rejected())
    wire_server.reject("json_object+schema", Scripted.schema_field_rejected())
    wire_server.enqueue(Scripted.text_reply(VALID))
    result = guarded_json(make(wire_server), MESSAGES, SCHEMA, name="summary")
    assert result.ok
    assert forms_sent(wire_server) == ["json_schema", "json_object+schema", "json_object"]
    assert wire_server.last.body["response_format"] == {"type": "json_object"}
    assert result.attempts[0].wire.response_format == "json_object"
    assert result.attempts[0].notes == [downgrade_note("json_schema", "json_object")]


def test_remembered_form_is_reused_by_a_new_client_for_the_same_url(wire_server: WireServer) -> None:
    wire_server.reject("json_schema", Scripted.llamacpp_response_format_error())
    request = LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("summary", SCHEMA))
    make(wire_server).complete(request)
    assert len(wire_server.requests) == 2
    fresh = make(wire_server)
    assert fresh.form == "json_object+schema" and not fresh.json_schema_supported
    reply = fresh.complete(request)
    assert len(wire_server.requests) == 3, "no new rejection: the new client starts at the working form"
    assert forms_sent(wire_server)[-1] == "json_object+schema"
    assert reply.wire.response_format == "json_object+schema" and reply.notes == [LLAMACPP_DOWNGRADE]
    # streams use the remembered form too; another base URL is not affected
    stream = fresh.stream(request)
    assert "".join(stream) == "ok" and forms_sent(wire_server)[-1] == "json_object+schema"
    with WireServer() as other:
        assert make(other).form == "json_schema"


def test_a_500_that_does_not_name_response_format_is_a_server_error(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.error(500, "The server had an error"))
    with pytest.raises(ProviderError) as info:
        make(wire_server).complete(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("s", SCHEMA)))
    assert info.value.kind == "server_error" and len(wire_server.requests) == 1
    assert remembered_forms() == {}


def test_a_profile_with_no_lower_form_surfaces_the_rejection(wire_server: WireServer) -> None:
    wire_server.reject("json_schema", Scripted.response_format_rejected())
    with pytest.raises(ProviderError) as info:
        make(wire_server, "lmstudio").complete(LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("s", SCHEMA)))
    assert info.value.kind == "bad_request" and len(wire_server.requests) == 1


def test_llamacpp_profile_falls_back_to_bare_json_object(wire_server: WireServer) -> None:
    wire_server.reject("json_object+schema", Scripted.schema_field_rejected())
    reply = make(wire_server, "llamacpp").complete(
        LLMRequest(MESSAGES, json_schema=JSONSchemaSpec("s", SCHEMA))
    )
    assert forms_sent(wire_server) == ["json_object+schema", "json_object"]
    assert reply.notes == [downgrade_note("json_object+schema", "json_object")]


def test_stream_without_usage_chunk_gets_an_estimated_labelled_count_and_ttft(
    wire_server: WireServer,
) -> None:
    wire_server.enqueue(Scripted.text_reply("ストリーミングの応答です。", chunk_chars=3, send_usage=False))
    stream = make(wire_server).stream(LLMRequest(MESSAGES))
    assert "".join(stream) == "ストリーミングの応答です。"
    assert wire_server.last.body["stream_options"] == {"include_usage": True}
    reply = stream.reply
    assert reply is not None and reply.usage.estimated
    assert reply.usage.output_tokens == len("ストリーミングの応答です。")  # uncalibrated: one per CJK char
    assert reply.usage.input_tokens > 0
    assert reply.ttft_ms is not None and 0 < reply.ttft_ms <= reply.latency_ms


def test_estimates_are_calibrated_by_replies_that_carried_usage(wire_server: WireServer) -> None:
    text = "calibrate " * 8  # 80 ASCII characters: 20 tokens before calibration
    client = make(wire_server)
    wire_server.enqueue(Scripted.text_reply(text, output_tokens=30))
    assert not client.complete(LLMRequest(MESSAGES)).usage.estimated
    wire_server.enqueue(Scripted.text_reply(text, send_usage=False))
    stream = client.stream(LLMRequest(MESSAGES))
    "".join(stream)
    assert stream.reply is not None and stream.reply.usage.estimated
    assert stream.reply.usage.output_tokens == 30  # scaled by the model's learned ratio 30/20


def test_guarded_stream_event_carries_estimated_usage_and_ttft(wire_server: WireServer) -> None:
    wire_server.enqueue(Scripted.text_reply("了解しました。", send_usage=False))
    events: list[DebugEvent] = []
    stream = guarded_stream(make(wire_server), MESSAGES, sink=ListSink(events), tags={"flow": "review"})
    assert "".join(stream) == "了解しました。"
    assert stream.result is not None and stream.result.ok
    (attempt,) = stream.result.attempts
    assert attempt.usage_estimated and attempt.ttft_ms is not None and attempt.wire.response_format is None
    call = events[0]
    assert call.kind == "call" and call.usage_estimated and call.ttft_ms == attempt.ttft_ms
    assert json.loads(json.dumps(call.to_dict()))["usage_estimated"] is True


def test_a_remembered_form_is_tried_upward_again_after_a_while() -> None:
    from core.llm.server_profiles import RETRY_UPWARD_AFTER_S, remember_form, remembered_form  # noqa: PLC0415

    url = "http://127.0.0.1:9/v1"
    remember_form(url, "json_object", now=1_000.0)
    assert remembered_form(url, now=1_000.0 + RETRY_UPWARD_AFTER_S - 1) == "json_object"
    assert (
        remembered_form(url, now=1_000.0 + RETRY_UPWARD_AFTER_S) is None
    )  # the preferred form is tried again
    assert remembered_forms()[url] == "json_object"  # the sidebar still says what last worked
