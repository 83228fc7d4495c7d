"""LLM clients behind one protocol (see base.py)."""

from core.llm.base import JSONSchemaSpec, LLMClient, LLMReply, LLMRequest, ProviderError, TextStream, Usage

__all__ = ["JSONSchemaSpec", "LLMClient", "LLMReply", "LLMRequest", "ProviderError", "TextStream", "Usage"]
