"""Collaborators of `process_step` (ARCHITECTURE.md rule 3: no module globals)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Engine

from core.clock import Clock, utc_now
from core.debuglog import DebugSink
from core.llm.base import LLMClient
from core.store.diagnosis import DiagnosisRepository


class BookingStore(Protocol):
    """Where confirmed bookings go (core.store.diagnosis.DiagnosisRepository)."""

    def save_booking(self, booking: dict[str, Any]) -> int: ...


@dataclass
class DiagnosisDeps:
    """client: the LLM; rag: RAGService or None (no manual search); store: bookings; clock: UTC epoch now."""

    client: LLMClient
    rag: Any = None
    store: BookingStore | None = None
    clock: Clock = utc_now
    sink: DebugSink | None = None


def open_deps(
    client: LLMClient,
    engine: Engine,
    *,
    rag: Any = None,
    sink: DebugSink | None = None,
    clock: Clock = utc_now,
) -> DiagnosisDeps:
    """Deps over the shared engine: bookings go to DiagnosisRepository(engine, clock), on the same clock."""
    return DiagnosisDeps(
        client=client, rag=rag, store=DiagnosisRepository(engine, clock), clock=clock, sink=sink
    )
