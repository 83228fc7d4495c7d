"""URGENCY_CHECK (spec 04 §6): assess (keyword + LLM, higher wins); high/critical -> RESERVATION, else advice -> DONE."""

from __future__ import annotations

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, PromptInfo, SessionState
from core.flows.diagnosis.responses import respond, urgency_banner
from core.flows.diagnosis.step_shared import enter_reservation, raise_urgency
from core.flows.diagnosis.urgency import urgency_rank
from core.flows.diagnosis.urgency_assessor import assess_urgency
from core.flows.diagnosis.urgency_reasons import joined_reasons

ADVICE_FALLBACK = "現時点で緊急性は高くありませんが、症状が続く場合は販売店で点検を受けてください。"


def handle_urgency_check(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """spec 04 §6: merge the assessment into the session, then branch on the level."""
    assessment = assess_urgency(session, deps)
    result = assessment.result
    raise_urgency(session, result)
    reasons = joined_reasons(result.reasons)
    intro = "これまでのお話から緊急度を判定しました。" + (f"（判定理由: {reasons}）" if reasons else "")
    if urgency_rank(session.urgency_level) >= urgency_rank("high"):
        return enter_reservation(session, "\n\n".join(p for p in (intro, assessment.recommendation) if p))
    session.current_step = ChatStep.DONE
    advice = assessment.recommendation or ADVICE_FALLBACK
    banner = urgency_banner(session.can_drive, session.visit_urgency or result.visit_urgency)
    return respond(session, PromptInfo(type="text", message="\n\n".join([intro, advice, banner])))
