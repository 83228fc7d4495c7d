"""A client wrapper for background-work tests: records every call's step when it starts, and holds calls of
the gated steps until `release()` (so a test can look at the page or the store while a job is running)."""

from __future__ import annotations

import threading

from core.llm.base import LLMClient, LLMReply, LLMRequest, TextStream


class GatedClient:
    def __init__(
        self, inner: LLMClient, gated: set[str] | frozenset[str] = frozenset(), timeout: float = 20.0
    ):
        self.inner = inner
        self.provider, self.model = inner.provider, inner.model
        self.gated = set(gated)
        self.timeout = timeout
        self.gate = threading.Event()
        self.steps: list[str] = []
        self.threads: list[str] = []
        self._lock = threading.Lock()

    def _enter(self, request: LLMRequest) -> None:
        step = request.tags.get("step", "")
        with self._lock:
            self.steps.append(step)
            self.threads.append(threading.current_thread().name)
        if step in self.gated and not self.gate.wait(self.timeout):
            raise AssertionError(f"the gate for {step!r} was never released")

    def complete(self, request: LLMRequest) -> LLMReply:
        self._enter(request)
        return self.inner.complete(request)

    def stream(self, request: LLMRequest) -> TextStream:
        self._enter(request)
        return self.inner.stream(request)

    def release(self) -> None:
        self.gate.set()
