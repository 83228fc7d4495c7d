"""Small helpers shared by the step handlers: applying urgency, entering RESERVATION, RAG access."""

from __future__ import annotations

import logging
from typing import Any

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatResponse, ChatStep, PromptInfo, SessionState
from core.flows.diagnosis.responses import NO_DRIVE_NOTE, respond, urgency_banner
from core.flows.diagnosis.urgency import UrgencyResult, urgency_rank, visit_rank

log = logging.getLogger(__name__)

RESERVATION_CHOICES = {
    "visit": {"value": "visit", "label": "🚗 来店予約をする"},
    "dispatch": {"value": "dispatch", "label": "🛻 出張・ロードサービスを手配する"},
    "skip": {"value": "skip", "label": "今回は予約しない"},
}


def raise_urgency(session: SessionState, result: UrgencyResult) -> None:
    """Adopt `result` where it is more urgent than the session (never lowers); reasons are merged."""
    if urgency_rank(result.level) > urgency_rank(session.urgency_level):
        session.urgency_level = result.level
    if visit_rank(result.visit_urgency) > visit_rank(session.visit_urgency):
        session.visit_urgency = result.visit_urgency
    if not result.can_drive:
        session.can_drive = False
    session.urgency_reasons = list(dict.fromkeys([*session.urgency_reasons, *result.reasons]))


def reservation_prompt(session: SessionState, prefix: str = "") -> PromptInfo:
    """spec 04 §7: the banner by visit_urgency; visit is offered only when the car can be driven."""
    parts = [p for p in (prefix, urgency_banner(session.can_drive, session.visit_urgency)) if p]
    if not session.can_drive:
        parts.append(NO_DRIVE_NOTE)
    keys = ("visit", "dispatch", "skip") if session.can_drive else ("dispatch", "skip")
    return PromptInfo(
        type="reservation_choice",
        message="\n\n".join(parts) + "\n\nご予約の方法を選んでください。",
        choices=[dict(RESERVATION_CHOICES[k]) for k in keys],
        action="reservation",
    )


def enter_reservation(session: SessionState, prefix: str = "", **kwargs: Any) -> ChatResponse:
    """Move to RESERVATION and show its choice (spec 04 §2 arrows into RESERVATION)."""
    session.current_step = ChatStep.RESERVATION
    return respond(session, reservation_prompt(session, prefix), **kwargs)


def rag_search(session: SessionState, query: str, deps: DiagnosisDeps) -> list[dict[str, Any]]:
    """Search the session's vehicle manual; no RAG or a failing store gives no sources."""
    if deps.rag is None or not session.vehicle_id:
        return []
    try:
        return list(deps.rag.search(query, session.vehicle_id))
    except Exception:  # noqa: BLE001 - a broken index must not end the interview
        log.exception("diagnosis RAG search failed")
        return []
