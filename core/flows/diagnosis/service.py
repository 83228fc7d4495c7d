"""ChatService (spec 04 §1): get or create the session, run process_step, store the session."""

from __future__ import annotations

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, SessionState
from core.flows.diagnosis.session_store import SessionStore
from core.flows.diagnosis.state_machine import process_step


class ChatService:
    """One entry point for a UI: `process(request, deps)` -> (session, response)."""

    def __init__(self, store: SessionStore):
        self.store = store

    def process(self, request: ChatRequest, deps: DiagnosisDeps) -> tuple[SessionState, ChatResponse]:
        """An unknown or expired session_id starts a new session at VEHICLE_ID."""
        session = self.store.get(request.session_id) or self.store.create()
        request.session_id = session.session_id
        response = process_step(session, request, deps)
        self.store.update(session)
        return session, response
