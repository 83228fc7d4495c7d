"""VEHICLE_ID (spec 04 §2): pick the vehicle by make / model / year."""

from __future__ import annotations

from core.flows.diagnosis.catalog import Vehicle, get_vehicle, load_vehicles
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, PromptInfo, SessionState
from core.flows.diagnosis.responses import respond
from core.flows.diagnosis.step_shared import PHOTO_CHOICES, vehicle_prompt


def _match_text(text: str) -> Vehicle | None:
    hits = [v for v in load_vehicles() if v.model in text or v.vehicle_id == text.strip()]
    return hits[0] if len(hits) == 1 else None


def handle_vehicle_id(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """Select the vehicle (button value = vehicle_id, or a typed model name) and go to PHOTO_CONFIRM."""
    vehicle = None
    if request.action == "select_vehicle" and request.action_value:
        vehicle = get_vehicle(request.action_value)
    elif request.message:
        vehicle = _match_text(request.message)
    if vehicle is None:
        message = "お車を選んでください（メーカー・車種・年式）。"
        if request.action or request.message:
            message = "該当する車両が見つかりませんでした。一覧から選んでください。"
        return respond(session, vehicle_prompt(message), record=False)
    session.vehicle_id, session.make, session.model, session.year = (
        vehicle.vehicle_id,
        vehicle.make,
        vehicle.model,
        vehicle.year,
    )
    session.current_step = ChatStep.PHOTO_CONFIRM
    prompt = PromptInfo(
        type="single_choice",
        message=f"お車は「{vehicle.label}」でお間違いないですか？写真でご確認ください。",
        choices=[dict(c) for c in PHOTO_CHOICES],
        action="photo_confirm",
    )
    return respond(session, prompt, record=False)
