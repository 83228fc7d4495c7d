"""Collaborators of `process_step` (ARCHITECTURE.md rule 3: no module globals)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Engine

from core.clock import Clock, utc_now
from core.debuglog.events import DebugSink
from core.flows.diagnosis.rag import RagAnswer
from core.flows.diagnosis.urgency_meaning import UrgencyJudge
from core.jobs.queue import JobQueue
from core.llm.base import LLMClient
from core.people import LOCAL_PERSON_ID, Person
from core.store.diagnosis import DiagnosisRepository


class BookingStore(Protocol):
    """Where confirmed bookings go (core.store.diagnosis.DiagnosisRepository)."""

    def save_booking(self, booking: dict[str, Any]) -> int: ...


class SessionArchive(Protocol):
    """Where session state is kept between turns (core.store.diagnosis.DiagnosisRepository): the truth every
    replica reads; a save names the version it started from and raises SessionConflict when it moved on."""

    def save_session(self, session_id: str, state: dict[str, Any], expected_version: int = 0) -> int: ...

    def session_version(self, session_id: str) -> int | None: ...

    def load_session(self, session_id: str, max_age: int | None = None) -> dict[str, Any] | None: ...

    def delete_session(self, session_id: str) -> None: ...


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


@dataclass
class DiagnosisDeps:
    """client: the LLM; rag: manual search (RAGService) or None; store: bookings; sessions: where session
    state is kept so it survives a reload (None: memory only); clock: UTC epoch now; worker: where the 3-turn
    summary runs beside the RAG answer call; owner: the id of the person whose session and bookings these are
    (`store` and `sessions` are bound to the same person)."""

    client: LLMClient
    rag: ManualSearch | None = None
    store: BookingStore | None = None
    clock: Clock = utc_now
    sink: DebugSink | None = None
    worker: JobQueue | None = None
    owner: str = LOCAL_PERSON_ID
    sessions: SessionArchive | None = None
    urgency_judge: UrgencyJudge | None = None  # urgency by meaning beside the rules (None: the rules alone)


def open_deps(
    client: LLMClient,
    engine: Engine,
    person: Person,
    *,
    rag: Any = None,
    sink: DebugSink | None = None,
    clock: Clock = utc_now,
    worker: JobQueue | None = None,
    urgency_judge: UrgencyJudge | None = None,
) -> DiagnosisDeps:
    """Deps over the shared engine for `person`: their session, and bookings and session state saved to their
    DiagnosisRepository(engine, clock), on the same clock."""
    repository = DiagnosisRepository(engine, clock, owner_id=person.id)
    return DiagnosisDeps(
        client=client,
        rag=rag,
        store=repository,
        sessions=repository,
        clock=clock,
        sink=sink,
        worker=worker,
        owner=person.id,
        urgency_judge=urgency_judge,
    )


def session_archive(engine: Engine, person: Person, clock: Clock = utc_now) -> SessionArchive:
    """Where the page loads `person`'s sessions from after a reload (the same store run_turn writes to);
    another person's session id is unknown there."""
    return DiagnosisRepository(engine, clock, owner_id=person.id)
