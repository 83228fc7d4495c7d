"""Collaborators of `process_step` (ARCHITECTURE.md rule 3: no module globals)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from core.debuglog import DebugSink
from core.flows.diagnosis.rag import RagAnswer
from core.llm.base import LLMClient


class BookingStore(Protocol):
    """Where confirmed bookings go (core.store.diagnosis.BookingRepository)."""

    def save_booking(self, booking: dict[str, Any]) -> int: ...


class ManualSearch(Protocol):
    """Search over the owner's manuals, as the handlers use it (spec 04 §10; core.flows.diagnosis.rag.RAGService)."""

    def search(self, query: str, vehicle_id: str, n_results: int = ...) -> list[dict[str, Any]]:
        """The vehicle's best chunks for `query` (score > 0.3, best first)."""
        ...

    def query(
        self,
        symptom: str,
        vehicle_id: str,
        make: str,
        model: str,
        year: int,
        *,
        client: LLMClient,
        sink: DebugSink | None = None,
    ) -> RagAnswer:
        """Search, then answer from the hits (or without them) through the guard."""
        ...


def _now() -> datetime:
    return datetime.now().replace(microsecond=0)


@dataclass
class DiagnosisDeps:
    """client: the LLM; rag: manual search (RAGService) or None; store: bookings; clock: local now."""

    client: LLMClient
    rag: ManualSearch | None = None
    store: BookingStore | None = None
    clock: Callable[[], datetime] = field(default=_now)
    sink: DebugSink | None = None
