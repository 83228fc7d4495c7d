"""One diagnosis turn, owned by core (spec 04 §1 ChatService.process): prepare -> call -> finish.

The page hands a ChatRequest to `run_turn` and draws what comes back: the live SessionState (its
`conversation_history` is the page's chat list) and the ChatResponse. Confirmed bookings are saved by
the BOOKING_CONFIRM step inside the call, through `deps.store`. After every turn the session's state is
also written to `deps.sessions` (the store), and a session the memory store no longer has is loaded from
there, so a browser reload or a server restart resumes the interview.

The stored session is the truth and the in-process copy a cache: when the store holds a newer version (a
turn served by another replica), the copy is replaced by the stored one before the turn runs, and a save
that finds the row moved on meanwhile (SessionConflict) reloads the stored session and applies the same
request to it again, so neither replica's turn is lost.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.flows.diagnosis.constants import SESSION_TTL_SECONDS
from core.flows.diagnosis.deps import DiagnosisDeps, SessionArchive
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, SessionState
from core.flows.diagnosis.session_store import SessionStore
from core.flows.diagnosis.state_machine import process_step
from core.flows.diagnosis.tracing import request_trace
from core.store.diagnosis import SessionConflict

# Ours: how often one request is applied to a freshly reloaded session before the conflict is reported; two
# replicas racing on one session settle in one retry.
SAVE_ATTEMPTS = 3


class ChatService:
    """The sessions of one server (spec 04 §1 services/chat_service.py) over the in-memory TTL store."""

    def __init__(self, store: SessionStore | None = None):
        self.store = store if store is not None else SessionStore()

    def session(
        self, session_id: str | None, owner_id: str, archive: SessionArchive | None = None
    ) -> SessionState:
        """The session of `session_id` if it is `owner_id`'s: the in-process copy while the store (`archive`,
        the person's own, session_archive) holds the same version, else the stored one kept within the TTL;
        an unknown, expired, deleted or other person's id gets a new session of `owner_id` at VEHICLE_ID."""
        live = self.store.get(session_id, owner_id)
        if archive is None or not session_id:
            return live if live is not None else self.store.create(owner_id)
        if live is not None:
            stored = archive.session_version(session_id)
            if stored == live.store_version or (stored is None and live.store_version == 0):
                return live  # the cache is current (or the session was never saved yet)
        return self.reload(session_id, owner_id, archive)

    def reload(self, session_id: str, owner_id: str, archive: SessionArchive) -> SessionState:
        """The stored copy of `session_id` replaces the in-process one; when the store no longer has it (or it
        is another person's), a new session of `owner_id`."""
        state = archive.load_session(session_id, SESSION_TTL_SECONDS)
        if state is None or state.get("owner_id", owner_id) != owner_id:
            self.store.delete(session_id, owner_id)
            return self.store.create(owner_id)
        session = session_from_state(state)
        session.owner_id = owner_id
        self.store.update(session)
        return session

    def restart(
        self, session_id: str | None, owner_id: str, archive: SessionArchive | None = None
    ) -> SessionState:
        """Forget `session_id` (「最初からやり直す」) if it is `owner_id`'s, in memory and in `archive`, and start
        a new session of `owner_id`."""
        if session_id:
            self.store.delete(session_id, owner_id)
            if archive is not None:
                archive.delete_session(session_id)
        return self.store.create(owner_id)

    def process(self, request: ChatRequest, deps: DiagnosisDeps) -> tuple[SessionState, ChatResponse]:
        """spec 04 §1 ChatService.process(): the same as `run_turn(self, request, deps)`."""
        return run_turn(self, request, deps)


def session_state(session: SessionState) -> dict[str, Any]:
    """Everything of a session as JSON-ready data (its dump, owner included, plus the rewind snapshots)."""
    return {**session.dump(), "state_snapshots": session.state_snapshots}


def session_from_state(state: dict[str, Any]) -> SessionState:
    """The SessionState `session_state` wrote (at the store's `store_version` when loaded from the store)."""
    session = SessionState(session_id=str(state["session_id"]), current_step=ChatStep(state["current_step"]))
    session.restore(state)
    session.state_snapshots = list(state.get("state_snapshots") or [])
    session.store_version = int(state.get("store_version") or 0)
    return session


def prepare_turn(
    service: ChatService, request: ChatRequest, owner_id: str, archive: SessionArchive | None = None
) -> SessionState:
    """spec 04 §1: SessionStore.get() (or the person's stored session in `archive`) or .create() for the
    person; the request is bound to the session it runs in."""
    session = service.session(request.session_id, owner_id, archive)
    request.session_id = session.session_id
    return session


def call_turn(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """spec 04 §1 process_step(session, request): every step the request runs, model calls included,
    logged under the session, the turn and the request's step span (core/flows/diagnosis/tracing.py)."""
    with request_trace(session, request, deps.sink) as (_span, sink):
        return process_step(session, request, replace(deps, sink=sink))


def finish_turn(service: ChatService, session: SessionState, deps: DiagnosisDeps | None = None) -> None:
    """spec 04 §1: store the session again (refreshes its TTL), and its state in `deps.sessions` if the stored
    row is still at the version this copy started from (SessionConflict, nothing written, when not)."""
    if deps is not None and deps.sessions is not None:
        session.store_version = deps.sessions.save_session(
            session.session_id, session_state(session), session.store_version
        )
    service.store.update(session)


def run_turn(
    service: ChatService, request: ChatRequest, deps: DiagnosisDeps
) -> tuple[SessionState, ChatResponse]:
    """One request of the diagnosis page: prepare, call, finish; returns the live session and the reply.
    The session is the person's of `deps` (deps.owner; deps.sessions is bound to the same person). When
    another replica saved the session during the call, the request runs again on the stored session (up
    to SAVE_ATTEMPTS times; then SessionConflict)."""
    session = prepare_turn(service, request, deps.owner, deps.sessions)
    attempt = 1
    while True:
        response = call_turn(session, request, deps)
        try:
            finish_turn(service, session, deps)
        except SessionConflict:
            if deps.sessions is None or attempt >= SAVE_ATTEMPTS:
                raise
            attempt += 1
            session = service.reload(session.session_id, deps.owner, deps.sessions)
            request.session_id = session.session_id
            continue
        return session, response
