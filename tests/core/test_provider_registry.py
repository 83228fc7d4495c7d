"""Adding a provider is one module and one registry line: a throwaway provider written here is chosen by
settings, labelled, kept secret, built by the client factory and offered to the re-run, with nothing else
changed."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from core.llm.base import LLMRequest
from core.llm.missing_key import MissingKeyClient
from core.llm.providers import DESCRIPTORS
from core.services.clients import build_client
from core.settings import load_settings, provider_label, provider_names
from core.workbench.rerun import configured_providers

ECHO_MODULE = """
from core.llm.base import LLMReply, LLMRequest, TextStream, Usage, stream_from_reply
from core.llm.descriptor import ClientConfig, ProviderDescriptor


class EchoClient:
    provider = "echo"
    sdk = None
    base_host = "echo.invalid"

    def __init__(self, model: str, key: str):
        self.model, self.key = model, key

    def complete(self, request: LLMRequest) -> LLMReply:
        text = request.messages[-1]["content"]
        return LLMReply(text=text, model=self.model, usage=Usage(1, 1))

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


ECHO = ProviderDescriptor(
    name="echo",
    label="エコー",
    default_model="echo-1",
    settings=("ECHO_KEY", "ECHO_REGION"),
    secret_settings=("ECHO_KEY",),
    ready=lambda c: bool(c.get("ECHO_KEY")),
    build=lambda model, config: EchoClient(model, config.credentials["ECHO_KEY"]),
    missing_hint="ECHO_KEY を設定してください。",
)
"""


@pytest.fixture
def echo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "echo_provider.py").write_text(textwrap.dedent(ECHO_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("echo_provider")
    monkeypatch.setitem(DESCRIPTORS, "echo", module.ECHO)  # the one registry line
    yield module
    sys.modules.pop("echo_provider", None)


def test_a_new_provider_module_and_one_registry_line_are_all_it_takes(echo) -> None:
    settings = load_settings(env={"KATACHI_PROVIDER": "echo", "ECHO_KEY": "k-123", "ECHO_REGION": "jp"})
    assert (settings.provider, settings.model, settings.has_key) == ("echo", "echo-1", True)
    assert "echo" in provider_names() and provider_label("echo") == "エコー"
    assert settings.secrets == ["k-123"]  # the key, not the region
    assert "k-123" not in repr(settings)
    client = build_client(settings)
    assert isinstance(client, echo.EchoClient) and client.key == "k-123"
    reply = client.complete(LLMRequest(messages=[{"role": "user", "content": "こんにちは"}]))
    assert reply.text == "こんにちは"
    assert configured_providers(settings)[-1] == "echo"


def test_a_new_provider_without_its_key_explains_itself_instead_of_calling(echo) -> None:
    settings = load_settings(env={"KATACHI_PROVIDER": "echo"})
    assert (settings.provider, settings.has_key) == ("echo", False)
    assert isinstance(build_client(settings), MissingKeyClient)
    assert "echo" not in configured_providers(settings)


def test_without_the_registry_line_the_provider_does_not_exist() -> None:
    settings = load_settings(env={"KATACHI_PROVIDER": "echo", "ECHO_KEY": "k-123"})
    assert settings.provider == "demo" and "echo" not in provider_names()
