"""Replay client: returns recorded raw outputs in order and records every request (tests, debug exports)."""

from __future__ import annotations

from collections.abc import Iterable

from core.debuglog.events import WireFacts, events_from_jsonl
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream, stream_from_reply


class ReplayExhausted(RuntimeError):
    """More calls were made than outputs were recorded."""


class ReplayClient:
    """`ReplayClient(["raw 1", "raw 2"])`; items may also be LLMReply objects or ProviderError to raise."""

    provider = "replay"
    sdk = "replay"
    base_host: str | None = None  # no network

    def __init__(self, raw_outputs: Iterable[str | LLMReply | ProviderError], model: str = "replay"):
        self.outputs = list(raw_outputs)
        self.model = model
        self.requests: list[LLMRequest] = []

    def _next(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        index = len(self.requests) - 1
        if index >= len(self.outputs):
            raise ReplayExhausted(f"call {index + 1} but only {len(self.outputs)} outputs were recorded")
        item = self.outputs[index]
        if isinstance(item, ProviderError):
            raise item
        if isinstance(item, LLMReply):
            return item
        schema = request.json_schema.schema if request.json_schema is not None else None
        return LLMReply(
            text=item,
            provider=self.provider,
            model=self.model,
            wire=WireFacts(sdk=self.sdk, wire_schema=schema),
        )

    def complete(self, request: LLMRequest) -> LLMReply:
        return self._next(request)

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self._next(request))

    @property
    def remaining(self) -> int:
        return len(self.outputs) - len(self.requests)

    @classmethod
    def from_debug_export(cls, jsonl_text: str) -> ReplayClient:
        """Replay the raw outputs of every model call in a debug-log JSONL export, in order."""
        raws: list[str | LLMReply | ProviderError] = []
        for event in events_from_jsonl(jsonl_text):
            if event.kind == "call":
                raws.append(event.raw or "")
            elif event.kind == "error":
                raws.append(ProviderError("server_error", "replayed provider error"))
        return cls(raws)
