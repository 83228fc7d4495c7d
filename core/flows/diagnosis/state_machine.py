"""The diagnosis state machine (spec 04 §1-2): ChatStep -> handler, `process_step` dispatches."""

from __future__ import annotations

from collections.abc import Callable

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.handlers.step1_vehicle_id import handle_vehicle_id
from core.flows.diagnosis.handlers.step2_photo_confirm import handle_photo_confirm
from core.flows.diagnosis.handlers.step3_free_text import handle_free_text
from core.flows.diagnosis.handlers.step_diagnosing import handle_diagnosing
from core.flows.diagnosis.handlers.step_done import handle_done
from core.flows.diagnosis.handlers.step_reservation import (
    handle_booking_confirm,
    handle_booking_info,
    handle_reservation,
)
from core.flows.diagnosis.handlers.step_spec_check import handle_spec_check
from core.flows.diagnosis.handlers.step_urgency import handle_urgency_check
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, SessionState

Handler = Callable[[SessionState, ChatRequest, DiagnosisDeps], ChatResponse]

STEP_HANDLERS: dict[ChatStep, Handler] = {
    ChatStep.VEHICLE_ID: handle_vehicle_id,
    ChatStep.PHOTO_CONFIRM: handle_photo_confirm,
    ChatStep.FREE_TEXT: handle_free_text,
    ChatStep.SPEC_CHECK: handle_spec_check,
    ChatStep.DIAGNOSING: handle_diagnosing,
    ChatStep.URGENCY_CHECK: handle_urgency_check,
    ChatStep.RESERVATION: handle_reservation,
    ChatStep.BOOKING_INFO: handle_booking_info,
    ChatStep.BOOKING_CONFIRM: handle_booking_confirm,
    ChatStep.DONE: handle_done,
}


def process_step(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """spec 04 §1: run the handler of `session.current_step`.

    A rewind request goes to the DIAGNOSING handler (spec 04 §4 A) whatever the current step, so
    staff can return to an earlier question after an answer, an escalation or a booking.
    """
    if request.rewind_to_turn is not None:
        return handle_diagnosing(session, request, deps)
    return STEP_HANDLERS[session.current_step](session, request, deps)
