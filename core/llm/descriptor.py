"""What the settings, the client factory and the sidebar need to know about a provider (spec 04: LLMProvider /
ProviderRegistry): its label, settings, default model, how to tell it can be called, which optional extra
installs its SDK, and how to build its client. Every provider declares one next to its client and registers
it with one line in core.llm.providers.

Kept free of any SDK import: `core.settings` reads the descriptors at start-up, and an SDK is imported only
when its client is built.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from core.llm.base import LLMClient, LLMReply, LLMRequest, ProviderError, TextStream
from core.llm.deadline import Deadlines

Credentials = Mapping[str, str]


@dataclass(frozen=True)
class ClientConfig:
    """What a descriptor's `build` gets besides the model: the provider's settings by their environment names
    (keys, regions, base URLs; `core.settings.Settings.provider_values`), the per-call deadlines, the overall
    timeout, the OpenAI-compatible server profile, and the personas the demo model plays (others ignore them).
    """

    credentials: Credentials
    deadlines: Deadlines
    timeout_s: float = 60.0
    server: str = "auto"
    personas: Mapping[str, Callable[[LLMRequest], str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderDescriptor:
    """One provider module's entry in the registry.

    `settings` are the environment / secrets names the provider reads (copied into `Settings.credentials`);
    `secret_settings` are those of them that must never be shown, logged or exported. `ready` tells from
    those values whether a call can be made (the sidebar warns otherwise); `missing_hint` says in Japanese
    what to set. `modules` are the imports the client needs, installed by `pip install 'katachi[<extra>]'`.
    """

    name: str
    label: str
    default_model: str
    settings: tuple[str, ...]
    secret_settings: tuple[str, ...]
    ready: Callable[[Credentials], bool]
    build: Callable[[str, ClientConfig], LLMClient]
    missing_hint: str
    modules: tuple[str, ...] = ()
    extra: str | None = None

    def missing_modules(self) -> list[str]:
        """The SDK modules of this provider that are not installed (empty when the extra is in)."""
        return [m for m in self.modules if not _installed(m)]

    def client(self, model: str, config: ClientConfig) -> LLMClient:
        """The provider's client, or one whose calls say which extra to install when its SDK is missing."""
        if self.missing_modules():
            return MissingExtraClient(self.name, model, self.extra or self.name)
        return self.build(model, config)


class MissingExtraClient:
    """`LLMClient` of a provider whose SDK is not installed: every call is ProviderError("missing_extra")."""

    sdk: str | None = None
    base_host: str | None = None

    def __init__(self, provider: str, model: str, extra: str):
        self.provider, self.model, self.extra = provider, model, extra

    def complete(self, request: LLMRequest) -> LLMReply:
        raise ProviderError("missing_extra", f"pip install 'katachi[{self.extra}]'")

    def stream(self, request: LLMRequest) -> TextStream:
        raise ProviderError("missing_extra", f"pip install 'katachi[{self.extra}]'")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing raises ModuleNotFoundError
        return False


def first(credentials: Credentials, *names: str) -> str | None:
    """The first of `names` that has a non-empty value."""
    for name in names:
        value = credentials.get(name)
        if value:
            return value
    return None


def flag(credentials: Credentials, name: str) -> bool:
    """An environment flag: 1 / true / yes / on."""
    return (credentials.get(name) or "").strip().lower() in ("1", "true", "yes", "on")
