"""What several step handlers share (no handler imports another): fixed prompts, urgency, RESERVATION, RAG.

Handlers live one per module under `handlers/`; anything two of them need lives here, so the state
machine is the only module that knows every handler (spec 04 §1 state_machine.py).
"""

from __future__ import annotations

import logging
from typing import Any

from core.flows.diagnosis.catalog import load_vehicles
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatResponse, ChatStep, PromptInfo, SessionState
from core.flows.diagnosis.responses import NO_DRIVE_NOTE, respond, session_banner
from core.flows.diagnosis.urgency import FRAME_CAP, UrgencyResult, urgency_rank, visit_rank
from core.flows.diagnosis.urgency_reasons import MEANING_REASON, without_cap_note

log = logging.getLogger(__name__)

PHOTO_CHOICES = [
    {"value": "yes", "label": "はい、この車両です"},
    {"value": "no", "label": "いいえ、選び直す"},
]
SYMPTOM_QUESTION = (
    "どのような症状がありますか？いつ・どんなときに起きるかも含めて、できるだけ具体的に教えてください。"
    "（例: エンジンをかけるとキュルキュル音がする、メーターにオレンジのランプが点いた）"
)
SPEC_CHOICES = [
    {"value": "resolved", "label": "これで解決しました"},
    {"value": "not_resolved", "label": "解決しません"},
    {"value": "already_tried", "label": "すでに試しました"},
]
RESERVATION_CHOICES = {
    "visit": {"value": "visit", "label": "来店予約をする"},
    "dispatch": {"value": "dispatch", "label": "出張・ロードサービスを手配する"},
    "skip": {"value": "skip", "label": "今回は予約しない"},
}


def vehicle_prompt(message: str = "お車を選んでください（メーカー・車種・年式）。") -> PromptInfo:
    """VEHICLE_ID's choice of every sample vehicle (spec 04 §2)."""
    choices = [{"value": v.vehicle_id, "label": v.label} for v in load_vehicles()]
    return PromptInfo(type="single_choice", message=message, choices=choices, action="select_vehicle")


def spec_prompt(message: str) -> PromptInfo:
    """SPEC_CHECK's explanation with its three answers (spec 04 §5)."""
    return PromptInfo(
        type="single_choice", message=message, choices=[dict(c) for c in SPEC_CHOICES], action="spec_check"
    )


def raise_urgency(session: SessionState, result: UrgencyResult) -> None:
    """Adopt `result` where it is more urgent than the session (never lowers); reasons are merged. Above medium, a
    reason keeps no note of a cap at medium (「…この判定では緊急度は中まで」): the level shown came from another
    judgement, and a 今すぐ banner saying 「中まで」 would read as a contradiction."""
    if urgency_rank(result.level) > urgency_rank(session.urgency_level):
        session.urgency_level = result.level
    if visit_rank(result.visit_urgency) > visit_rank(session.visit_urgency):
        session.visit_urgency = result.visit_urgency
    if not result.can_drive:
        session.can_drive = False
    reasons = [*session.urgency_reasons, *result.reasons]
    if urgency_rank(session.urgency_level) > urgency_rank(FRAME_CAP):
        reasons = [without_cap_note(reason) for reason in reasons]
    session.urgency_reasons = list(dict.fromkeys(reasons))


def danger_notice(result: UrgencyResult) -> str:
    """The sentence before the reservation choice when the fast path found the symptom critical: the rules'
    reasons by name; judged by meaning alone, it says so without quoting another owner's words as if they were
    this owner's (the banner's 判定理由 shows the example)."""
    named = [r for r in result.reasons if not r.startswith(MEANING_REASON)]
    if named:
        # each reason in 「」: a reason holds brackets of its own (「発煙（煙が出ている）」)
        return "お伺いした症状" + "".join(f"「{r}」" for r in named) + "は走行に危険がある可能性があります。"
    return "お伺いした症状は、走行に危険がある症状によく似ています。"


def reservation_prompt(session: SessionState, prefix: str = "") -> PromptInfo:
    """spec 04 §7: the banner by the session's real visit urgency; visit is offered only when the car can be
    driven."""
    parts = [p for p in (prefix, session_banner(session)) if p]
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
    except Exception:  # any failure of the index (Chroma, disk) must not end the interview
        log.exception("diagnosis RAG search failed")
        return []
