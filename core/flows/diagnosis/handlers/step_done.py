"""DONE (spec 04 §2): the interview is over; only a restart begins a new one."""

from __future__ import annotations

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, PromptInfo, SessionState
from core.flows.diagnosis.responses import respond

DONE_NOTICE = "この問診は完了しています。新しい症状は「最初からやり直す」から入力してください。"
BOOKED_ALREADY = (
    "この予約はすでに承っています（受付番号 {number}）。同じ予約が二重に登録されることはありません。"
)


def handle_done(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """The interview is over; a booking confirmed again (another replica stored it first, or the button was
    pressed twice) is told that it is booked already, with its number."""
    again = request.action == "booking_confirm" and request.action_value == "confirm"
    if again and session.booking_id is not None:
        message = BOOKED_ALREADY.format(number=f"D-{session.booking_id:06d}")
        return respond(session, PromptInfo(type="text", message=message), record=False)
    return respond(session, PromptInfo(type="text", message=DONE_NOTICE), record=False)
