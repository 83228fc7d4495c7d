"""RESERVATION / BOOKING_INFO / BOOKING_CONFIRM (spec 04 §7)."""

from __future__ import annotations

import json

from core.flows.diagnosis.booking import (
    BOOKING_TYPE_LABELS,
    booking_fields,
    booking_record,
    booking_summary,
    clean_booking,
    late_visit_warning,
    local_now,
    validate_booking,
)
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, PromptInfo, SessionState
from core.flows.diagnosis.responses import record_user, respond
from core.flows.diagnosis.step_shared import RESERVATION_CHOICES, reservation_prompt

VISIT_REFUSED = "自走は危険なため、来店予約はお受けできません。出張・ロードサービスの手配をご利用ください。"
SKIP_MESSAGE = "承知しました。今回は予約しません。症状が続く・悪化する場合は、無理に運転せず販売店またはロードサービスにご連絡ください。"
FORM_MESSAGES = {
    "dispatch": "出張・ロードサービスの手配に必要な情報を入力してください。",
    "visit": "来店予約に必要な情報を入力してください。",
}


def booking_form_prompt(session: SessionState, message: str | None = None) -> PromptInfo:
    """The form of the session's booking type, prefilled with what was entered before."""
    fields = booking_fields(session.booking_type)
    for f in fields:
        f["value"] = session.booking_data.get(f["name"], "")
    return PromptInfo(
        type="booking_form",
        message=message or FORM_MESSAGES.get(session.booking_type, ""),
        booking_type=session.booking_type,
        booking_fields=fields,
        action="submit_booking",
    )


def handle_reservation(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """dispatch / visit -> BOOKING_INFO (visit refused when can_drive is false); skip -> DONE."""
    value = request.action_value if request.action == "reservation" else None
    if value == "skip":
        record_user(session, RESERVATION_CHOICES["skip"]["label"])
        session.current_step = ChatStep.DONE
        return respond(session, PromptInfo(type="text", message=SKIP_MESSAGE))
    if value == "visit" and not session.can_drive:
        return respond(session, reservation_prompt(session, VISIT_REFUSED), record=False)
    if value in ("dispatch", "visit"):
        record_user(session, RESERVATION_CHOICES[value]["label"])
        session.booking_type = value
        session.current_step = ChatStep.BOOKING_INFO
        return respond(session, booking_form_prompt(session), record=False)
    return respond(session, reservation_prompt(session), record=False)


def handle_booking_info(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """submit_booking (action_value = the form as JSON) -> validate -> BOOKING_CONFIRM; back -> RESERVATION."""
    if request.action == "back":
        session.current_step = ChatStep.RESERVATION
        return respond(session, reservation_prompt(session), record=False)
    if request.action != "submit_booking":
        return respond(session, booking_form_prompt(session), record=False)
    try:
        raw = json.loads(request.action_value or "{}")
    except json.JSONDecodeError:
        raw = {}
    data = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    now = local_now(deps.clock)
    errors = validate_booking(session.booking_type, data, now)
    session.booking_data = clean_booking(session.booking_type, data, now)
    if errors:
        message = "入力内容を確認してください。\n" + "\n".join(f"- {e}" for e in errors.values())
        return respond(session, booking_form_prompt(session, message), record=False)
    session.current_step = ChatStep.BOOKING_CONFIRM
    late = late_visit_warning(session, now)
    edit_label = "日時を変更する" if late else "修正する"
    prompt = PromptInfo(
        type="booking_confirm",
        message="\n\n".join(p for p in (late, "以下の内容でよろしいですか？") if p),
        booking_type=session.booking_type,
        booking_summary=booking_summary(session),
        choices=[{"value": "confirm", "label": "この内容で予約する"}, {"value": "edit", "label": edit_label}],
        action="booking_confirm",
    )
    return respond(session, prompt, record=False)


def handle_booking_confirm(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    """confirm -> save the booking -> DONE; edit -> BOOKING_INFO with the entered values."""
    value = request.action_value if request.action == "booking_confirm" else None
    if value == "edit":
        session.current_step = ChatStep.BOOKING_INFO
        return respond(session, booking_form_prompt(session, "内容を修正してください。"), record=False)
    if value != "confirm":
        return handle_booking_info(
            session,
            ChatRequest(
                session.session_id, action="submit_booking", action_value=json.dumps(session.booking_data)
            ),
            deps,
        )
    label = BOOKING_TYPE_LABELS.get(session.booking_type, "予約")
    if deps.store is not None:
        session.booking_id = deps.store.save_booking(booking_record(session))
        number = f"（受付番号 D-{session.booking_id:06d}）"
    else:
        number = "（保存先が設定されていないため、受付番号はありません）"
    session.current_step = ChatStep.DONE
    record_user(session, "この内容で予約する")
    if session.booking_type == "dispatch":
        detail = "担当者から折り返しお電話します。安全な場所でお待ちください。"
    else:
        detail = f"{session.booking_data.get('preferred_time', '')} のご来店をお待ちしております。"
    return respond(session, PromptInfo(type="text", message=f"{label}を承りました{number}。{detail}"))
