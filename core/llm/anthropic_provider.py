"""The Anthropic provider's descriptor. The anthropic SDK (about 2 s to import) is imported only when a client
is built (core.llm.anthropic_client)."""

from __future__ import annotations

from core.llm.base import LLMClient
from core.llm.descriptor import ClientConfig, Credentials, ProviderDescriptor


def build_anthropic(model: str, config: ClientConfig) -> LLMClient:
    from core.llm.anthropic_client import AnthropicClient  # noqa: PLC0415 - the anthropic SDK takes ~2 s to import

    return AnthropicClient(
        model,
        api_key=config.credentials.get("ANTHROPIC_API_KEY"),
        base_url=config.credentials.get("ANTHROPIC_BASE_URL"),  # a proxy or gateway in front of the API
        timeout=config.timeout_s,
        deadlines=config.deadlines,
    )


def _ready(credentials: Credentials) -> bool:
    return bool(credentials.get("ANTHROPIC_API_KEY"))


ANTHROPIC = ProviderDescriptor(
    name="anthropic",
    label="Anthropic",
    default_model="claude-sonnet-4-5",
    settings=("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    secret_settings=("ANTHROPIC_API_KEY",),
    ready=_ready,
    build=build_anthropic,
    missing_hint="APIキーが設定されていません。ANTHROPIC_API_KEY を設定してください。",
)
