"""The diagnosis state machine (spec 04 §1-2): ChatStep -> handler, `process_step` dispatches.

A handler answers with a ChatResponse (the request is done) or a `Next(step)`: the step to run now,
with the same input or the one the Next carries. Only this module knows every handler; handlers never
call or import one another.
"""

from __future__ import annotations

from collections.abc import Callable

from core.flows.diagnosis.constants import MAX_STEPS_PER_REQUEST
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
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, Next, SessionState, StepOutcome

Handler = Callable[[SessionState, ChatRequest, DiagnosisDeps], StepOutcome]

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


class StepLoopError(RuntimeError):
    """The handlers kept handing over to one another past MAX_STEPS_PER_REQUEST (a bug in a handler)."""


def process_step(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """spec 04 §1: run the handler of `session.current_step`, then every step it hands over to.

    While a handler returns `Next(step)`, `session.current_step` becomes that step and its handler runs
    (with the Next's request, else the same one), at most MAX_STEPS_PER_REQUEST handlers per request.
    A rewind request goes to the DIAGNOSING handler (spec 04 §4 A) whatever the current step, so
    staff can return to an earlier question after an answer, an escalation or a booking.
    """
    step = ChatStep.DIAGNOSING if request.rewind_to_turn is not None else session.current_step
    path = [str(step)]
    outcome = STEP_HANDLERS[step](session, request, deps)
    while isinstance(outcome, Next):
        if len(path) >= MAX_STEPS_PER_REQUEST:
            raise StepLoopError(
                f"diagnosis request ran {len(path)} handlers without a reply: {' -> '.join(path)}"
                f" -> {outcome.step}"
            )
        session.current_step = outcome.step
        request = outcome.request or request
        path.append(str(outcome.step))
        outcome = STEP_HANDLERS[outcome.step](session, request, deps)
    return outcome
