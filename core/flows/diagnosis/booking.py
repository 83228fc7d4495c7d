"""Bookings of the reservation step (spec 04 §7): form fields, validation, summary, the stored record and list.

The visit time a person picks is a local appointment (Japan time, as typed); it is compared with the
local "now" and stored as picked. Only `created_at` is a timestamp (UTC epoch, set by the repository).
a date without a year is the next such date (「11月25日 午前10時」); a visit later than the
session's urgency allows is confirmed with a warning; the stored booking carries the whole interview
(symptoms, answers, summary, urgency, manual coverage).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from core.clock import Clock, to_local, utc_now
from core.flows.diagnosis.models import SessionState
from core.flows.diagnosis.responses import session_visit_urgency
from core.people import Person
from core.store.diagnosis import DiagnosisRepository

BOOKING_TYPE_LABELS = {"dispatch": "出張・ロードサービス手配", "visit": "来店予約"}
# [year] month day [(weekday)] [午前|午後|am|pm] hour [minute|半]; the year may be left out.
DATETIME_PATTERN = re.compile(
    r"^(?:(\d{4})\s*[-/年]\s*)?(\d{1,2})\s*[-/月]\s*(\d{1,2})\s*日?\s*(?:\(.\)\s*)?T?\s*"
    r"(午前|午後|am|pm)?\s*(\d{1,2})\s*[:時]\s*(\d{1,2}|半)?\s*分?$"
)
# How late a visit may be for each visit urgency (when_convenient: any time); later ones are confirmed.
VISIT_WINDOWS = {"immediate": timedelta(0), "today": timedelta(0), "this_week": timedelta(days=7)}
VISIT_WINDOW_LABELS = {"immediate": "今すぐ", "today": "本日中", "this_week": "今週中（7日以内）"}
PHONE_PATTERN = re.compile(r"^0\d{1,4}-?\d{1,4}-?\d{3,4}$")

_NAME = {"name": "name", "label": "お名前", "type": "text", "required": True, "placeholder": "例: 山田 太郎"}
_PHONE = {
    "name": "phone",
    "label": "電話番号",
    "type": "tel",
    "required": True,
    "placeholder": "例: 090-1234-5678",
}
_NOTE = {
    "name": "note",
    "label": "補足（任意）",
    "type": "textarea",
    "required": False,
    "placeholder": "例: 駐車場の2階にいます",
}
BOOKING_FIELDS: dict[str, list[dict[str, Any]]] = {
    "dispatch": [
        _NAME,
        _PHONE,
        {
            "name": "address",
            "label": "車両のある場所（住所・目印）",
            "type": "text",
            "required": True,
            "placeholder": "例: 東京都港区芝浦1-2-3 ○○スーパー駐車場",
        },
        _NOTE,
    ],
    "visit": [
        _NAME,
        _PHONE,
        {
            "name": "preferred_time",
            "label": "来店希望日時",
            "type": "datetime",
            "required": True,
            "placeholder": "例: 2026-11-25 10:00",
        },
        _NOTE,
    ],
}


def booking_fields(booking_type: str) -> list[dict[str, Any]]:
    """The form fields of a booking type (spec 04 §7: 名前/電話/住所 or 希望日時)."""
    return [dict(f) for f in BOOKING_FIELDS.get(booking_type, [])]


def normalize_phone(phone: str) -> str:
    """Full-width digits and hyphen variants to ASCII; spaces removed."""
    text = unicodedata.normalize("NFKC", phone or "")
    return re.sub(r"[\s]", "", text.replace("ー", "-").replace("−", "-").replace("―", "-"))


def parse_datetime(text: str, now: datetime | None = None) -> datetime | None:
    """「2026-11-25 10:00」「2026/11/25 10:00」「2026年11月25日 10時30分」「11月25日 午前10時」「11/25(火) 午後3時半」
    (full-width too); without a year, the next such date after `now` (local). None if not a date/time."""
    match = DATETIME_PATTERN.match(unicodedata.normalize("NFKC", text or "").strip().lower())
    if match is None:
        return None
    year_text, month, day, half, hour, minute_text = match.groups()
    hour = int(hour)
    if half in ("午後", "pm") and hour < 12:
        hour += 12
    elif half in ("午前", "am") and hour == 12:
        hour = 0
    minute = 30 if minute_text == "半" else int(minute_text or 0)
    base = now or datetime.now()
    try:
        if year_text:
            return datetime(int(year_text), int(month), int(day), hour, minute)
        when = datetime(base.year, int(month), int(day), hour, minute)
        return when if when > base else datetime(base.year + 1, int(month), int(day), hour, minute)
    except ValueError:
        return None


def local_now(clock: Clock = utc_now) -> datetime:
    """The clock's now as a naive datetime in the display zone (what a picked visit time is compared with)."""
    return to_local(clock()).replace(tzinfo=None)


def validate_booking(booking_type: str, data: dict[str, str], now: datetime) -> dict[str, str]:
    """Field name -> Japanese error: required fields, phone format, a future date/time (`now`: local_now())."""
    errors: dict[str, str] = {}
    if booking_type not in BOOKING_FIELDS:
        return {"booking_type": "予約の種類を選んでください。"}
    for f in BOOKING_FIELDS[booking_type]:
        if f["required"] and not str(data.get(f["name"], "")).strip():
            errors[f["name"]] = f"{f['label']}を入力してください。"
    phone = normalize_phone(str(data.get("phone", "")))
    if "phone" not in errors:
        digits = re.sub(r"\D", "", phone)
        if not PHONE_PATTERN.match(phone) or len(digits) not in (10, 11):
            errors["phone"] = "電話番号の形式が正しくありません（例: 090-1234-5678）。"
    if booking_type == "visit" and "preferred_time" not in errors:
        when = parse_datetime(str(data.get("preferred_time", "")), now)
        if when is None:
            errors["preferred_time"] = (
                "来店希望日時は「2026-11-25 10:00」または「2026年11月25日 10時」の形式で入力してください。"
            )
        elif when <= now:
            errors["preferred_time"] = "来店希望日時は現在より後の日時を指定してください。"
    return errors


def clean_booking(booking_type: str, data: dict[str, str], now: datetime | None = None) -> dict[str, str]:
    """Only the form's fields, stripped; the phone normalized; the visit time as 「YYYY-MM-DD HH:MM」."""
    cleaned = {
        f["name"]: str(data.get(f["name"], "") or "").strip() for f in BOOKING_FIELDS.get(booking_type, [])
    }
    if "phone" in cleaned:
        cleaned["phone"] = normalize_phone(cleaned["phone"])
    if cleaned.get("preferred_time"):
        when = parse_datetime(cleaned["preferred_time"], now)
        if when is not None:
            cleaned["preferred_time"] = when.strftime("%Y-%m-%d %H:%M")
    return cleaned


def booking_summary(session: SessionState) -> dict[str, str]:
    """Label -> value, what the confirmation screen shows."""
    summary = {
        "予約種別": BOOKING_TYPE_LABELS.get(session.booking_type, session.booking_type),
        "車両": f"{session.make} {session.model}（{session.year}年式）",
        "症状": session.symptom_text,
    }
    for f in BOOKING_FIELDS.get(session.booking_type, []):
        value = session.booking_data.get(f["name"], "")
        if value or f["required"]:
            summary[f["label"].replace("（任意）", "")] = value
    return summary


def late_visit_warning(session: SessionState, now: datetime) -> str:
    """A Japanese warning when the picked visit is later than the session's urgency allows ("" when not):
    today / immediate -> by the end of today, this_week -> within 7 days."""
    visit = session_visit_urgency(session)
    window = VISIT_WINDOWS.get(visit)
    when = parse_datetime(session.booking_data.get("preferred_time", ""), now)
    if session.booking_type != "visit" or window is None or when is None:
        return ""
    latest = now.replace(hour=23, minute=59, second=59, microsecond=0) + window
    if when <= latest:
        return ""
    return (
        f"症状の緊急度から、来店は{VISIT_WINDOW_LABELS[visit]}をおすすめしています。"
        f"ご希望の {when:%Y-%m-%d %H:%M} は遅めですが、この日時でよろしいですか？"
        "早めの来店や出張・ロードサービスもご検討ください。"
    )


def interview_answers(session: SessionState) -> list[dict[str, str]]:
    """Each answer the person gave after the first symptom, with the question it answered."""
    pairs: list[dict[str, str]] = []
    question = ""
    seen_symptom = False
    for item in session.conversation_history:
        if item.get("role") == "assistant":
            question = str(item.get("content") or "")
        elif item.get("role") == "user":
            answer = str(item.get("content") or "")
            if not seen_symptom and answer == session.symptom_text:
                seen_symptom = True
                continue
            if seen_symptom and answer in session.collected_symptoms:
                pairs.append({"question": question, "answer": answer})
    return pairs


def booking_record(session: SessionState) -> dict[str, Any]:
    """The row stored for a confirmed booking: type, vehicle, contact, preferred time, urgency, and what the
    interview learned (every symptom, the answers, the summary, the manual coverage); the repository adds
    created_at from its clock. `confirm_key` names the stored session version the confirmation ran on: a
    confirmation run again on that version (another replica, a second press) is the same booking."""
    data = session.booking_data
    return {
        "session_id": session.session_id,
        "confirm_key": f"{session.session_id}@{session.store_version}" if session.store_version else None,
        "booking_type": session.booking_type,
        "vehicle_id": session.vehicle_id,
        "vehicle_label": f"{session.make} {session.model}（{session.year}年式）",
        "name": data.get("name", ""),
        "phone": data.get("phone", ""),
        "address": data.get("address", ""),
        "preferred_time": data.get("preferred_time", ""),
        "note": data.get("note", ""),
        "symptom": session.symptom_text,
        "urgency_level": session.urgency_level,
        "visit_urgency": session.visit_urgency,
        "can_drive": session.can_drive,
        "reasons": list(session.urgency_reasons),
        "symptoms": [s for s in session.all_symptom_text.split("\n") if s],
        "answers": interview_answers(session),
        "summary": session.conversation_summary,
        "manual_coverage": session.manual_coverage,
    }


def list_bookings(engine: Engine, person: Person, limit: int = 100) -> list[dict[str, Any]]:
    """The bookings `person` took, newest first (created_at in UTC epoch seconds; show with
    core.clock.format_local). Bookings hold customers' names and phone numbers: never another person's."""
    return DiagnosisRepository(engine, owner_id=person.id).list_bookings(limit)


def team_bookings(engine: Engine, person: Person, limit: int = 200) -> list[dict[str, Any]] | None:
    """Every person's bookings with `owner_id`, newest first, for an admin (`[katachi] admins`: team
    analytics); None for anyone else."""
    if not person.is_admin:
        return None
    return DiagnosisRepository(engine, owner_id=person.id).team_bookings(limit)
