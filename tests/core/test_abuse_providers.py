"""Deadlines and malformed answers (issue #15 item 3), on the wire, for both real SDKs.

A server that trickles keep-alive bytes is cut at the overall deadline with a Japanese message;
malformed SSE, a non-JSON body and an HTML page with status 200 each become a `provider_error`
result inside the guard (json, text and stream), never an exception.
"""

from __future__ import annotations

import time

import pytest

from core.guard.json_guard import guarded_json, guarded_stream, guarded_text
from core.llm.anthropic_client import AnthropicClient
from core.llm.base import ProviderError
from core.llm.deadline import Deadlines
from core.llm.openai_client import OpenAIClient
from core.settings import load_settings
from tests.core.wire_server import Scripted, WireServer

MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "こんにちは"}]
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
FAST = Deadlines(connect=2.0, first_byte=2.0, total=1.0)


def make(sdk: str, server: WireServer, deadlines: Deadlines = FAST):
    if sdk == "openai":
        return OpenAIClient(
            "gpt-test", api_key="sk-test", base_url=server.openai_base_url, deadlines=deadlines
        )
    return AnthropicClient(
        "claude-test", api_key="sk-ant-test", base_url=server.anthropic_base_url, deadlines=deadlines
    )


def run(kind: str, client):
    if kind == "json":
        return guarded_json(client, MESSAGES, SCHEMA, name="T", max_repairs=0)
    if kind == "text":
        return guarded_text(client, MESSAGES)
    stream = guarded_stream(client, MESSAGES)
    list(stream)
    return stream.result


SDKS = ("openai", "anthropic")
KINDS = ("json", "text", "stream")


@pytest.mark.parametrize("sdk", SDKS)
@pytest.mark.parametrize("kind", KINDS)
def test_trickle_is_cut_at_the_deadline(wire_server: WireServer, sdk: str, kind: str) -> None:
    wire_server.enqueue(Scripted.trickle(6.0, text='{"a": "x"}'))
    started = time.monotonic()
    result = run(kind, make(sdk, wire_server))
    assert time.monotonic() - started < 3.0  # the deadline is 1 s; the server would trickle for 6 s
    assert not result.ok and result.error_type == "provider_error"
    assert "タイムアウト" in result.message


@pytest.mark.parametrize("sdk", SDKS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("script", ["html", "not_json", "malformed_sse"])
def test_malformed_answers_are_provider_errors(
    wire_server: WireServer, sdk: str, kind: str, script: str
) -> None:
    wire_server.enqueue(
        getattr(Scripted, {"html": "html_page", "not_json": "not_json"}.get(script, script))()
    )
    result = run(kind, make(sdk, wire_server, Deadlines()))
    assert not result.ok and result.error_type == "provider_error", result
    assert result.message.startswith("LLMの呼び出しに失敗しました。")
    assert result.attempts[-1].notes and "sk-test" not in repr(result)


@pytest.mark.parametrize("sdk", SDKS)
def test_a_normal_reply_inside_the_deadline_passes(wire_server: WireServer, sdk: str) -> None:
    wire_server.enqueue(Scripted.trickle(0.2, text='{"a": "x"}'))
    result = run("json", make(sdk, wire_server, Deadlines(total=5.0)))
    assert result.ok and result.value == {"a": "x"}


def test_only_provider_errors_are_results_a_client_bug_raises() -> None:
    """Malformed server answers are ProviderErrors at the client boundary (the test above, on the wire); an
    exception a client raises itself is a bug and is not dressed up as a provider fault."""

    class Broken:
        provider, model = "openai", "broken"

        def complete(self, request):
            raise AttributeError("'str' object has no attribute 'choices'")

        def stream(self, request):
            raise ValueError("boom")

    for kind in KINDS:
        with pytest.raises((AttributeError, ValueError)):
            run(kind, Broken())


def test_deadline_settings_from_env() -> None:
    env = {"KATACHI_TIMEOUT_CONNECT": "3", "KATACHI_TIMEOUT_FIRST_BYTE": "20", "KATACHI_TIMEOUT_TOTAL": "45"}
    assert load_settings(env=env).deadlines == Deadlines(3.0, 20.0, 45.0)
    assert load_settings(env={"KATACHI_TIMEOUT_TOTAL": "nonsense"}).deadlines == Deadlines()
    assert Deadlines().total == 120.0


def test_provider_error_kind_malformed_has_a_japanese_message() -> None:
    assert "読み取れない応答" in ProviderError("malformed").user_message
