"""The providers that live in their own modules, one registration line each (spec 04: ProviderRegistry).

`core.settings` lists them beside demo / openai / anthropic and `core.llm.registry` builds their clients from
these descriptors. No SDK is imported here.
"""

from __future__ import annotations

from core.llm.bedrock_client import BEDROCK
from core.llm.descriptor import ProviderDescriptor
from core.llm.gemini_client import GEMINI
from core.llm.watsonx_client import WATSONX

DESCRIPTORS: dict[str, ProviderDescriptor] = {
    BEDROCK.name: BEDROCK,
    GEMINI.name: GEMINI,
    WATSONX.name: WATSONX,
}
