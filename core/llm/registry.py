"""Pick a client by provider name. Adding a provider touches one new module and one line here."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from core.llm.base import LLMClient
from core.llm.demo import DemoClient, Persona
from core.llm.descriptor import ProviderDescriptor
from core.llm.faulty import CORRUPTIONS, PROVIDER_ERRORS, FaultyClient
from core.llm.missing_key import MissingKeyClient
from core.llm.providers import DESCRIPTORS
from core.settings import Settings

Factory = Callable[[Settings, Mapping[str, Persona]], LLMClient]


def _demo(s: Settings, personas: Mapping[str, Persona]) -> LLMClient:
    return DemoClient(s.model, personas=personas)


def _openai(s: Settings, personas: Mapping[str, Persona]) -> LLMClient:
    from core.llm.openai_client import OpenAIClient  # noqa: PLC0415 - the openai SDK takes ~1 s to import; most sessions never use it

    return OpenAIClient(
        s.model,
        api_key=s.openai_api_key or "not-needed",
        base_url=s.base_url,
        timeout=s.timeout_s,
        server=s.server,
        deadlines=s.deadlines,
    )


def _anthropic(s: Settings, personas: Mapping[str, Persona]) -> LLMClient:
    from core.llm.anthropic_client import AnthropicClient  # noqa: PLC0415 - the anthropic SDK takes ~2 s to import

    return AnthropicClient(
        s.model,
        api_key=s.anthropic_api_key,
        base_url=s.anthropic_base_url,
        timeout=s.timeout_s,
        deadlines=s.deadlines,
    )


def _described(descriptor: ProviderDescriptor) -> Factory:
    def factory(s: Settings, personas: Mapping[str, Persona]) -> LLMClient:
        return descriptor.client(s.model, s.credential_map, s.deadlines)

    return factory


FACTORIES: dict[str, Factory] = {
    "demo": _demo,
    "openai": _openai,
    "anthropic": _anthropic,
    **{
        name: _described(d) for name, d in DESCRIPTORS.items()
    },  # bedrock, gemini, watsonx: core.llm.providers
}


PROVIDER_ERROR_SHARE = 0.2  # of the demo fault rate; the rest damages replies (what the guard can repair)


def build_client(
    settings: Settings,
    fault_rate: float = 0.0,
    seed: int = 0,
    personas: Mapping[str, Persona] | None = None,
) -> LLMClient:
    """The client for these settings; `fault_rate` > 0 wraps it in FaultyClient (the demo toggle).

    `personas` (flow tag -> persona, see core.flows.registry.demo_personas) is what the demo model
    plays; other providers ignore it. 80% of the fault rate damages replies (code fences, prose,
    trailing commas, missing fields, wrong enums, truncation), 20% raises provider errors (timeout,
    429, 5xx), so free-text flows see faults too.
    """
    if not settings.has_key:  # the configured provider stays; its calls explain the missing key
        return MissingKeyClient(settings.provider, settings.model)
    client = FACTORIES[settings.provider](settings, personas or {})
    if fault_rate > 0:
        damage = fault_rate * (1 - PROVIDER_ERROR_SHARE) / len(CORRUPTIONS)
        errors = fault_rate * PROVIDER_ERROR_SHARE / len(PROVIDER_ERRORS)
        rates = {**dict.fromkeys(CORRUPTIONS, damage), **dict.fromkeys(PROVIDER_ERRORS, errors)}
        client = FaultyClient(client, seed=seed, rates=rates)
    return client
