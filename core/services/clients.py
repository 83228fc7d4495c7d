"""The client factory: the model client for a `Settings`, from the provider's descriptor (core.llm.providers),
optionally wrapped in the demo's fault injection. Adding a provider changes nothing here."""

from __future__ import annotations

from collections.abc import Mapping

from core.llm.base import LLMClient
from core.llm.demo import Persona
from core.llm.descriptor import ClientConfig
from core.llm.faulty import CORRUPTIONS, PROVIDER_ERRORS, FaultyClient
from core.llm.missing_key import MissingKeyClient
from core.llm.providers import DESCRIPTORS
from core.settings import Settings

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
    config = ClientConfig(
        credentials=settings.provider_values,
        deadlines=settings.deadlines,
        timeout_s=settings.timeout_s,
        server=settings.server,
        personas=personas or {},
    )
    client = DESCRIPTORS[settings.provider].client(settings.model, config)
    if fault_rate > 0:
        damage = fault_rate * (1 - PROVIDER_ERROR_SHARE) / len(CORRUPTIONS)
        errors = fault_rate * PROVIDER_ERROR_SHARE / len(PROVIDER_ERRORS)
        rates = {**dict.fromkeys(CORRUPTIONS, damage), **dict.fromkeys(PROVIDER_ERRORS, errors)}
        client = FaultyClient(client, seed=seed, rates=rates)
    return client
