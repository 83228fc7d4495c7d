"""The OpenAI provider's descriptor: OpenAI itself and any OpenAI-compatible server (vLLM, Ollama, llama.cpp,
LM Studio, Azure OpenAI) named by OPENAI_BASE_URL. The openai SDK (about 1 s to import) is imported only when a
client is built (core.llm.openai_client)."""

from __future__ import annotations

from core.llm.base import LLMClient
from core.llm.descriptor import ClientConfig, Credentials, ProviderDescriptor


def build_openai(model: str, config: ClientConfig) -> LLMClient:
    from core.llm.openai_client import OpenAIClient  # noqa: PLC0415 - the openai SDK takes ~1 s to import; most sessions never use it

    return OpenAIClient(
        model,
        api_key=config.credentials.get("OPENAI_API_KEY") or "not-needed",  # a local server needs no key
        base_url=config.credentials.get("OPENAI_BASE_URL"),
        timeout=config.timeout_s,
        server=config.server,
        deadlines=config.deadlines,
    )


def _ready(credentials: Credentials) -> bool:
    """A key, or the base URL of a server that needs none."""
    return bool(credentials.get("OPENAI_API_KEY") or credentials.get("OPENAI_BASE_URL"))


OPENAI = ProviderDescriptor(
    name="openai",
    label="OpenAI・互換サーバー",
    default_model="gpt-4.1-mini",
    settings=("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    secret_settings=("OPENAI_API_KEY",),
    ready=_ready,
    build=build_openai,
    missing_hint="APIキーが設定されていません。OPENAI_API_KEY を設定するか、互換サーバーなら OPENAI_BASE_URL を指定してください。",
)
