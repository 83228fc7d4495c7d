"""PHOTO_CONFIRM (spec 04 §2): confirm the vehicle by its photo."""

from __future__ import annotations

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, PromptInfo, SessionState
from core.flows.diagnosis.responses import respond
from core.flows.diagnosis.step_shared import PHOTO_CHOICES, SYMPTOM_QUESTION, vehicle_prompt


def handle_photo_confirm(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """yes -> FREE_TEXT (ask for the symptom); no -> back to VEHICLE_ID."""
    answer = request.action_value if request.action == "photo_confirm" else None
    if answer == "yes":
        session.current_step = ChatStep.FREE_TEXT
        return respond(session, PromptInfo(type="text", message=SYMPTOM_QUESTION))
    if answer == "no":
        session.vehicle_id, session.make, session.model, session.year = "", "", "", 0
        session.current_step = ChatStep.VEHICLE_ID
        return respond(session, vehicle_prompt(), record=False)
    prompt = PromptInfo(
        type="single_choice",
        message="写真のお車でお間違いないか、ボタンで選んでください。",
        choices=[dict(c) for c in PHOTO_CHOICES],
        action="photo_confirm",
    )
    return respond(session, prompt, record=False)
