"""One diagnosis turn, owned by core (spec 04 §1 ChatService.process): prepare -> call -> finish.

The page hands a ChatRequest to `run_turn` and draws what comes back: the live SessionState (its
`conversation_history` is the page's chat list) and the ChatResponse. Confirmed bookings are saved by
the BOOKING_CONFIRM step inside the call, through `deps.store`.
"""

from __future__ import annotations

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, SessionState
from core.flows.diagnosis.session_store import SessionStore
from core.flows.diagnosis.state_machine import process_step


class ChatService:
    """The sessions of one server (spec 04 §1 services/chat_service.py) over the in-memory TTL store."""

    def __init__(self, store: SessionStore | None = None):
        self.store = store if store is not None else SessionStore()

    def session(self, session_id: str | None, owner_id: str) -> SessionState:
        """The live session of `session_id` if it is `owner_id`'s; an unknown, expired or other person's id
        gets a new session of `owner_id` at VEHICLE_ID (issue #14)."""
        return self.store.get(session_id, owner_id) or self.store.create(owner_id)

    def restart(self, session_id: str | None, owner_id: str) -> SessionState:
        """Forget `session_id` (「最初からやり直す」) and start a new session of `owner_id`."""
        if session_id:
            self.store.delete(session_id, owner_id)
        return self.store.create(owner_id)

    def process(self, request: ChatRequest, deps: DiagnosisDeps) -> tuple[SessionState, ChatResponse]:
        """spec 04 §1 ChatService.process(): the same as `run_turn(self, request, deps)`."""
        return run_turn(self, request, deps)


def prepare_turn(service: ChatService, request: ChatRequest, owner_id: str) -> SessionState:
    """spec 04 §1: SessionStore.get() or .create() for the person; the request is bound to the session it
    runs in."""
    session = service.session(request.session_id, owner_id)
    request.session_id = session.session_id
    return session


def call_turn(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """spec 04 §1 process_step(session, request): every step the request runs, model calls included."""
    return process_step(session, request, deps)


def finish_turn(service: ChatService, session: SessionState) -> None:
    """spec 04 §1: store the session again (refreshes its TTL)."""
    service.store.update(session)


def run_turn(
    service: ChatService, request: ChatRequest, deps: DiagnosisDeps
) -> tuple[SessionState, ChatResponse]:
    """One request of the diagnosis page: prepare, call, finish; returns the live session and the reply.
    The session is the person's of `deps` (deps.owner)."""
    session = prepare_turn(service, request, deps.owner)
    response = call_turn(session, request, deps)
    finish_turn(service, session)
    return session, response
