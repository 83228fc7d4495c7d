"""The client for a provider that was chosen but has no API key: every call is a clear provider error.

The person keeps the provider they configured (never a silent switch to the demo model); each call
fails with 「APIキーが設定されていません…」 until they add a key or pick the demo model themselves.
"""

from __future__ import annotations

from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream


class MissingKeyClient:
    """`LLMClient` whose calls raise ProviderError("missing_key") without touching the network."""

    sdk: str | None = None  # nothing is ever sent
    base_host: str | None = None

    def __init__(self, provider: str, model: str):
        self.provider = provider
        self.model = model

    def complete(self, request: LLMRequest) -> LLMReply:
        raise ProviderError("missing_key", f"no API key configured for {self.provider}")

    def stream(self, request: LLMRequest) -> TextStream:
        raise ProviderError("missing_key", f"no API key configured for {self.provider}")
