"""Bedrock (Converse and Claude), Gemini and watsonx.ai: the real SDKs (boto3, anthropic[bedrock], google-genai;
httpx2 for watsonx's REST API) against tests/core/cloud_wire.py on 127.0.0.1. Each: the request path, the
credential headers (a SigV4 signature for Bedrock), the exact body with the schema as sent; a valid turn, a
repair, a refusal, a 429 and a timeout through the guard; and no credential in any debug event."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from anthropic.lib.bedrock._client import ANTHROPIC_API_VERSION as BEDROCK_API_VERSION

from core.contracts.strict_copies import strict_copy
from core.debuglog.events import DebugEvent
from core.guard.json_guard import guarded_json, guarded_text
from core.llm.anthropic_client import anthropic_output_schema
from core.llm.base import LLMClient, ProviderError
from core.llm.bedrock_client import build_bedrock
from core.llm.deadline import Deadlines
from core.llm.descriptor import ClientConfig, MissingExtraClient
from core.llm.gemini_client import GeminiClient
from core.llm.providers import DESCRIPTORS
from core.llm.watsonx_client import API_VERSION, WatsonxClient
from core.services.clients import build_client
from core.settings import load_settings
from tests.core.cloud_wire import CloudWire
from tests.core.wire_server import Scripted

pytest.importorskip("boto3")
pytest.importorskip("google.genai")

KEY = "test-key-7Qm2Zx9Lw4"  # what must never reach an event
ACCESS_KEY = "AKIDTESTKATACHI01"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["answer", "score"],
    "additionalProperties": False,
}
VALID = json.dumps({"answer": "はい", "score": 3}, ensure_ascii=False)
INVALID = json.dumps({"answer": "はい"}, ensure_ascii=False)  # score missing: a schema error
MESSAGES = [{"role": "system", "content": "JSONで答えてください。"}, {"role": "user", "content": "質問"}]
FAST = Deadlines(connect=2.0, first_byte=0.6, total=2.0)


def bedrock_credentials(wire: CloudWire) -> dict[str, str]:
    return {
        "AWS_REGION": "ap-northeast-1",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": KEY,
        "KATACHI_BEDROCK_ENDPOINT_URL": wire.url,
    }


def converse(wire: CloudWire) -> LLMClient:
    return build_bedrock("amazon.nova-pro-v1:0", bedrock_credentials(wire), FAST)


def claude(wire: CloudWire) -> LLMClient:
    return build_bedrock("jp.anthropic.claude-sonnet-4-5-20250929-v1:0", bedrock_credentials(wire), FAST)


def gemini(wire: CloudWire) -> LLMClient:
    return GeminiClient("gemini-test", {"GEMINI_API_KEY": KEY, "KATACHI_GEMINI_BASE_URL": wire.url}, FAST)


def watsonx(wire: CloudWire) -> LLMClient:
    creds = {
        "WATSONX_APIKEY": KEY,
        "WATSONX_URL": wire.url,
        "WATSONX_IAM_URL": wire.url,
        "WATSONX_PROJECT_ID": "proj-1",
    }
    return WatsonxClient("ibm/granite-test", creds, FAST)


def converse_body(schema_sent: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": [{"text": "質問"}]}],
        "inferenceConfig": {"maxTokens": 300, "temperature": 0.2},
        "system": [{"text": "JSONで答えてください。"}],
    }
    if schema_sent:
        schema = json.dumps(strict_copy(SCHEMA), ensure_ascii=False)
        structure = {"jsonSchema": {"name": "Answer", "schema": schema}}
        body["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": structure}}
    return body


def claude_body() -> dict[str, Any]:
    return {
        "max_tokens": 300,
        "messages": [{"role": "user", "content": "質問"}],
        "system": "JSONで答えてください。",
        "output_config": {"format": {"type": "json_schema", "schema": anthropic_output_schema(SCHEMA)}},
        "temperature": 0.2,
        "anthropic_version": BEDROCK_API_VERSION,  # set by the SDK's Bedrock client
    }


def gemini_body() -> dict[str, Any]:
    return {
        "contents": [{"parts": [{"text": "質問"}], "role": "user"}],
        "systemInstruction": {"parts": [{"text": "JSONで答えてください。"}], "role": "user"},
        "generationConfig": {
            "maxOutputTokens": 300,
            "temperature": 0.2,
            "responseMimeType": "application/json",
            "responseJsonSchema": SCHEMA,
        },
    }


def watsonx_body() -> dict[str, Any]:
    return {
        "model_id": "ibm/granite-test",
        "messages": MESSAGES,
        "max_tokens": 300,
        "project_id": "proj-1",
        "temperature": 0.2,
        "response_format": {"type": "json_schema", "json_schema": {"name": "Answer", "schema": SCHEMA}},
    }


def sigv4(headers: dict[str, str]) -> None:
    auth = headers["authorization"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")
    assert "/ap-northeast-1/bedrock/aws4_request" in auth and "Signature=" in auth
    assert "x-amz-date" in headers and KEY not in json.dumps(headers)


CASES: dict[str, tuple[Callable[[CloudWire], LLMClient], str, Callable[[], dict[str, Any]]]] = {
    "bedrock-converse": (converse, "/model/amazon.nova-pro-v1%3A0/converse", lambda: converse_body(True)),
    "bedrock-claude": (claude, "/model/jp.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke", claude_body),
    "gemini": (gemini, "/v1/models/gemini-test:generateContent", gemini_body),
    "watsonx": (watsonx, f"/ml/v1/text/chat?version={API_VERSION}", watsonx_body),
}


def check_headers(case: str, wire: CloudWire, headers: dict[str, str]) -> None:
    if case.startswith("bedrock"):
        sigv4(headers)
    elif case == "gemini":
        assert headers["x-goog-api-key"] == KEY
    else:
        assert headers["authorization"] == f"Bearer {wire.iam_token}"
        (token,) = wire.token_requests
        assert token.body == {"grant_type": "urn:ibm:params:oauth:grant-type:apikey", "apikey": KEY}


class Sink:
    def __init__(self) -> None:
        self.events: list[DebugEvent] = []

    def emit(self, event: DebugEvent) -> None:
        self.events.append(event)

    def no_credentials(self) -> None:
        text = json.dumps([e.to_dict() for e in self.events], ensure_ascii=False, default=str)
        assert KEY not in text and "iam-bearer-token" not in text


@pytest.fixture
def wire() -> Iterator[CloudWire]:
    with CloudWire() as server:
        yield server


@pytest.mark.parametrize("case", CASES)
def test_a_valid_turn_sends_the_schema_exactly_and_the_reply_passes(case: str, wire: CloudWire) -> None:
    make, path, body = CASES[case]
    wire.enqueue(Scripted.text_reply(VALID, input_tokens=21, output_tokens=9))
    sink = Sink()
    client = make(wire)
    result = guarded_json(client, MESSAGES, SCHEMA, name="Answer", sink=sink, temperature=0.2, max_tokens=300)
    assert result.ok and result.data == {"answer": "はい", "score": 3}
    (request,) = wire.requests
    assert request.path == path
    check_headers(case, wire, request.headers)
    assert request.body == body()
    (call,) = [e for e in sink.events if e.kind == "call"]
    assert call.usage == {"input_tokens": 21, "output_tokens": 9, "cached_input_tokens": 0}
    assert call.provider == client.provider and call.base_host == wire.url.removeprefix("http://")
    assert call.wire_schema is not None and call.sdk
    sink.no_credentials()


@pytest.mark.parametrize("case", CASES)
def test_a_reply_that_breaks_the_schema_is_repaired_on_the_same_stack(case: str, wire: CloudWire) -> None:
    make = CASES[case][0]
    wire.enqueue(Scripted.text_reply(INVALID), Scripted.text_reply(VALID))
    result = guarded_json(make(wire), MESSAGES, SCHEMA, name="Answer", max_repairs=1)
    assert result.ok and len(result.attempts) == 2 and result.attempts[0].error_type == "schema_error"
    second = json.dumps(wire.requests[1].body, ensure_ascii=False)
    assert INVALID.replace('"', '\\"') in second  # the broken reply went back as the assistant's turn
    assert "score" in second and len(wire.requests) == 2


@pytest.mark.parametrize("case", CASES)
def test_a_refusal_is_reported_as_a_refusal(case: str, wire: CloudWire) -> None:
    wire.enqueue(Scripted.refusal("お答えできません。"))
    result = guarded_json(CASES[case][0](wire), MESSAGES, SCHEMA, name="Answer", max_repairs=0)
    assert not result.ok and result.error_type == "refusal"


@pytest.mark.parametrize("case", CASES)
def test_a_429_is_a_rate_limit_result_sent_once(case: str, wire: CloudWire) -> None:
    wire.enqueue(Scripted.error(429, "Too many requests, please wait."))
    sink = Sink()
    result = guarded_text(CASES[case][0](wire), MESSAGES, sink=sink)
    assert not result.ok and result.error_type == "provider_error"
    assert result.attempts[0].errors == [ProviderError.MESSAGES["rate_limit"]]
    assert len(wire.requests) == 1  # the SDK does not retry: that is the guard's job
    sink.no_credentials()


@pytest.mark.parametrize("case", CASES)
def test_a_slow_server_is_a_timeout_result(case: str, wire: CloudWire) -> None:
    wire.enqueue(Scripted.text_reply(VALID, delay=2.5))
    result = guarded_text(CASES[case][0](wire), MESSAGES)
    assert not result.ok and result.attempts[0].errors == [ProviderError.MESSAGES["timeout"]]


def test_converse_falls_back_to_a_forced_tool_when_the_model_has_no_structured_output(
    wire: CloudWire,
) -> None:
    wire.enqueue(
        Scripted.error(400, "This model doesn't support the outputConfig field."), Scripted.text_reply(VALID)
    )
    client = converse(wire)
    result = guarded_json(client, MESSAGES, SCHEMA, name="Answer")
    assert result.ok and result.data == {"answer": "はい", "score": 3}
    first, second = wire.requests
    assert "outputConfig" in first.body and "outputConfig" not in second.body
    assert second.body["toolConfig"] == {
        "tools": [{"toolSpec": {"name": "Answer", "inputSchema": {"json": SCHEMA}}}],
        "toolChoice": {"tool": {"name": "Answer"}},
    }
    assert result.attempts[0].wire.response_format == "forced tool"


def test_settings_choose_the_cloud_providers_by_name_and_keep_their_keys_secret() -> None:
    env = {"KATACHI_PROVIDER": "bedrock", "AWS_REGION": "ap-northeast-1", "AWS_SECRET_ACCESS_KEY": KEY}
    s = load_settings(env=env)
    assert s.provider == "bedrock" and s.has_key and KEY in s.secrets and KEY not in repr(s)
    assert s.model == DESCRIPTORS["bedrock"].default_model
    assert load_settings(env={"AWS_REGION": "us-east-1"}).provider == "demo"  # never picked without the name
    assert not load_settings(env={"KATACHI_PROVIDER": "gemini"}).has_key
    gemini_s = load_settings(env={"KATACHI_PROVIDER": "gemini"}, secrets={"GEMINI_API_KEY": KEY})
    assert gemini_s.has_key and KEY in gemini_s.secrets
    vertex = {"KATACHI_PROVIDER": "gemini", "GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}
    assert load_settings(env=vertex).has_key
    wx = {
        "KATACHI_PROVIDER": "watsonx",
        "WATSONX_APIKEY": KEY,
        "WATSONX_URL": "https://jp-tok.ml.cloud.ibm.com",
    }
    assert not load_settings(env=wx).has_key  # a project or space id is still missing
    wx_s = load_settings(env={**wx, "WATSONX_PROJECT_ID": "p"})
    assert wx_s.has_key and KEY in wx_s.secrets
    assert build_client(wx_s).provider == "watsonx"
    missing = DESCRIPTORS["gemini"].__class__(
        **{**DESCRIPTORS["gemini"].__dict__, "modules": ("no_such_sdk_xyz",)}
    )
    client = missing.client("gemini-x", ClientConfig({}, FAST))
    assert isinstance(client, MissingExtraClient) and missing.missing_modules() == ["no_such_sdk_xyz"]
    result = guarded_text(client, MESSAGES)
    assert result.attempts[0].errors == [ProviderError.MESSAGES["missing_extra"]]
