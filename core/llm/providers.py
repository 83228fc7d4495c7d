"""Every provider, one registration line each (spec 04: ProviderRegistry). Adding a provider is its module
(a client and a `ProviderDescriptor` beside it) and one line here; `core.settings` and the client factory
(core.services.clients) read this table. No SDK is imported here.
"""

from __future__ import annotations

from core.llm.anthropic_provider import ANTHROPIC
from core.llm.bedrock_client import BEDROCK
from core.llm.demo import DEMO
from core.llm.descriptor import ProviderDescriptor
from core.llm.gemini_client import GEMINI
from core.llm.openai_provider import OPENAI
from core.llm.watsonx_client import WATSONX

# Order: the sidebar's order; without KATACHI_PROVIDER the first of openai / anthropic with a key is chosen.
DESCRIPTORS: dict[str, ProviderDescriptor] = {
    DEMO.name: DEMO,
    OPENAI.name: OPENAI,
    ANTHROPIC.name: ANTHROPIC,
    BEDROCK.name: BEDROCK,
    GEMINI.name: GEMINI,
    WATSONX.name: WATSONX,
}
