"""Collaborators of `process_step` (ARCHITECTURE.md rule 3: no module globals)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from core.debuglog import DebugSink
from core.llm.base import LLMClient


class BookingStore(Protocol):
    """Where confirmed bookings go (core.store.diagnosis.BookingRepository)."""

    def save_booking(self, booking: dict[str, Any]) -> int: ...


def _now() -> datetime:
    return datetime.now().replace(microsecond=0)


@dataclass
class DiagnosisDeps:
    """client: the LLM; rag: RAGService or None (no manual search); store: bookings; clock: local now."""

    client: LLMClient
    rag: Any = None
    store: BookingStore | None = None
    clock: Callable[[], datetime] = field(default=_now)
    sink: DebugSink | None = None
