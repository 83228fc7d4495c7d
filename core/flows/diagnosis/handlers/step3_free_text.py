"""FREE_TEXT (spec 04 §3): take the symptom, keyword fast path, RAG, spec-check routing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.flows.diagnosis.catalog import vehicle_kind
from core.flows.diagnosis.constants import (
    DANGER_CONTENT_TYPES,
    EMPTY_INPUT_MESSAGE,
    SPEC_CONTENT_TYPES,
    SPEC_HINT_SCORE,
    SPEC_MIN_COUNT,
    SPEC_SCORE_MIN,
    SPEC_SHARE_MIN,
)
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatStep, Next, PromptInfo, SessionState, StepOutcome
from core.flows.diagnosis.responses import record_user, respond
from core.flows.diagnosis.step_shared import danger_notice, enter_reservation, rag_search, raise_urgency
from core.flows.diagnosis.urgency import UrgencyResult
from core.flows.diagnosis.urgency_fast_path import fast_urgency_check


def _rag_search(session: SessionState, symptom: str, deps: DiagnosisDeps) -> list[dict[str, Any]]:
    """spec 04 §3 step 3: manual search for the symptom (no LLM call)."""
    return rag_search(session, symptom, deps)


def _should_route_to_spec_check(keyword: UrgencyResult, sources: Sequence[dict[str, Any]]) -> bool:
    """spec 04 §3: safety gates first (any one blocks), then every spec-path condition must hold."""
    spec = [s for s in sources if s["content_type"] in SPEC_CONTENT_TYPES]
    danger = [s for s in sources if s["content_type"] in DANGER_CONTENT_TYPES]
    if keyword.level in ("critical", "high"):
        return False
    if any(s.get("has_warning") for s in sources):
        return False
    if len(danger) > len(spec):
        return False
    if not sources or not any(s["score"] >= SPEC_SCORE_MIN for s in sources):
        return False
    return len(spec) >= SPEC_MIN_COUNT and len(spec) / len(sources) >= SPEC_SHARE_MIN


def _should_hint_spec(sources: Sequence[dict[str, Any]]) -> bool:
    """spec 04 §3 step 5 (soft threshold): the best hit is a spec-type chunk with score >= 0.40."""
    return (
        bool(sources)
        and sources[0]["content_type"] in SPEC_CONTENT_TYPES
        and sources[0]["score"] >= SPEC_HINT_SCORE
    )


def handle_free_text(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> StepOutcome:
    """spec 04 §3 steps 1-6: critical -> RESERVATION; else SPEC_CHECK or DIAGNOSING runs on with this input."""
    symptom = (request.message or "").strip()
    if not symptom:
        return respond(session, PromptInfo(type="text", message=EMPTY_INPUT_MESSAGE), record=False)
    session.symptom_text = symptom
    keyword = fast_urgency_check(symptom, deps.urgency_judge, vehicle_kind(session.vehicle_id))
    if keyword.level == "critical":
        record_user(session, symptom)
        session.collected_symptoms.append(symptom)
        raise_urgency(session, keyword)
        return enter_reservation(session, "ご不便をおかけしています。" + danger_notice(keyword))
    sources = _rag_search(session, symptom, deps)
    session.last_rag_sources = sources
    if _should_route_to_spec_check(keyword, sources):
        return Next(ChatStep.SPEC_CHECK)
    session.spec_hint = _should_hint_spec(sources)
    return Next(ChatStep.DIAGNOSING)
