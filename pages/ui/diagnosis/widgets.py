"""Widgets of the diagnosis page: step indicator, conversation, banners, sources, booking form and list."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

import streamlit as st

from core.clock import format_local
from core.flows.chat_item import ChatItem
from core.flows.diagnosis import (
    COVERAGE_NOTES,
    FREE_INPUT_VALUE,
    BookingRow,
    ChatStep,
    PromptInfo,
    SessionState,
    banner_severity,
    get_vehicle,
    joined_reasons,
    manual_sources,
    sample_path,
    urgency_info,
    validate_booking,
)
from core.flows.feedback import reply_turns
from pages.ui.shell import feedback
from pages.ui.shell.render import llm_alert, llm_label, llm_markdown

STEP_LABELS = [
    (ChatStep.VEHICLE_ID, "車両"),
    (ChatStep.PHOTO_CONFIRM, "写真確認"),
    (ChatStep.FREE_TEXT, "症状"),
    (ChatStep.SPEC_CHECK, "仕様確認"),
    (ChatStep.DIAGNOSING, "問診"),
    (ChatStep.URGENCY_CHECK, "緊急度"),
    (ChatStep.RESERVATION, "予約"),
    (ChatStep.BOOKING_INFO, "入力"),
    (ChatStep.BOOKING_CONFIRM, "確認"),
    (ChatStep.DONE, "完了"),
]


CONTENT_TYPE_LABELS = {
    "procedure": "手順",
    "specification": "仕様",
    "general": "一般",
    "warning": "警告",
    "danger": "危険",
}
# Icons from Streamlit's Material set (this machine may have no emoji font: an emoji would be a box).
BANNER_ICONS = {"error": ":material/report:", "warning": ":material/warning:"}
CHOICE_ICONS = {
    "visit": ":material/directions_car:",
    "dispatch": ":material/local_shipping:",
    FREE_INPUT_VALUE: ":material/edit:",
}
VISIT_TIMES = [f"{h:02d}:{m:02d}" for h in range(9, 18) for m in (0, 30)] + ["18:00"]  # opening hours
DEFAULT_VISIT_TIME = "10:00"
BOOKING_DAYS_AHEAD = 90
URGENCY_LABELS = {"critical": "緊急", "high": "高", "medium": "中", "low": "低", "none": "なし", "": "なし"}


def step_indicator(session: SessionState) -> None:
    """Every state of the machine in one line: the current one highlighted, passed ones checked, skipped ones struck out."""
    order = [s for s, _ in STEP_LABELS]
    index = order.index(session.current_step)
    visited = set(session.visited_steps)
    if urgency_info(session) is not None:  # urgency was judged on the way (a banner is on screen)
        visited.add(ChatStep.URGENCY_CHECK)
    parts = []
    skipped = False
    for i, (step, label) in enumerate(STEP_LABELS):
        if i == index:
            parts.append(f"**:blue-background[{i + 1}. {label}]**")
        elif i < index and step in visited:
            parts.append(f":gray[:material/check: {label}]")
        elif i < index:
            parts.append(f":gray[~~{label}~~]")
            skipped = True
        else:
            parts.append(f":gray[{i + 1}. {label}]")
    st.markdown(" → ".join(parts))
    if skipped:
        st.caption("取り消し線の段階は、今回の問診では通っていません。")


def vehicle_card(session: SessionState, *, width: int = 320) -> None:
    vehicle = get_vehicle(session.vehicle_id)
    if vehicle is None:
        return
    st.image(str(sample_path(vehicle.photo)), width=width, caption=f"{vehicle.label} ／ {vehicle.body}")


def conversation(items: Sequence[ChatItem], session_id: str) -> None:
    """The interview so far (core.flows.chat_item items of the session's history), the advisor with a car icon; each
    message of the advisor can be rated (numbered by its position among the advisor's messages)."""
    rated = reply_turns("diagnosis", items)
    for index, item in enumerate(items):
        avatar = ":material/car_repair:" if item["role"] == "assistant" else None
        with st.chat_message(item["role"], avatar=avatar):
            llm_markdown(item["content"], key=f"diagnosis_full_{index}")
            if index in rated:
                feedback.render("diagnosis", session_id, rated[index])


def urgency_banner(session: SessionState) -> None:
    """spec 04 §7: an error banner (can't drive / at once) or a warning, with a Material icon; reasons underneath."""
    info = urgency_info(session)
    if info is None:
        return
    reasons = f"\n\n判定理由: {joined_reasons(info.reasons)}" if info.reasons else ""
    severity = banner_severity(info)
    llm_alert(severity, info.message + reasons, icon=BANNER_ICONS[severity])


def coverage_note(session: SessionState) -> None:
    note = COVERAGE_NOTES.get(session.manual_coverage)
    if note and session.manual_coverage == "not_covered":
        st.warning(note, icon=":material/warning:")
    elif note:
        st.info(note, icon=":material/info:")


def sources_expander(session: SessionState) -> None:
    sources = manual_sources(session)
    with st.expander(f"参照した取扱説明書（{len(sources)}件）", expanded=False):
        if not sources:
            st.caption("関連する記載は見つかりませんでした（関連度 0.3 以下は表示しません）。")
            return
        st.dataframe(
            [
                {
                    "ページ": s.page,
                    "項目": s.section,
                    "種類": CONTENT_TYPE_LABELS.get(s.content_type, s.content_type),
                    "警告": "あり" if s.has_warning else "",
                    "関連度": round(s.score, 3),
                }
                for s in sources
            ],
            hide_index=True,
            width="stretch",
        )
        for s in sources:
            st.markdown(f"**p.{s.page} {s.section}**")
            st.text(s.content)


def choice_buttons(prompt: PromptInfo, key: str) -> dict[str, str] | None:
    """One button per choice (with its warning-light icon when present); returns the pressed choice."""
    pressed = None
    for i, choice in enumerate(prompt.choices):
        icon = choice.get("icon")
        if icon:
            left, right = st.columns([1, 11], vertical_alignment="center")
            left.image(str(sample_path(icon)), width=36)
            target = right
        else:
            target = st.container()
        icon_name = CHOICE_ICONS.get(choice.get("value", ""))
        if target.button(llm_label(choice["label"]), key=f"{key}_{i}", width="stretch", icon=icon_name):
            pressed = choice
    return pressed


def booking_form(session: SessionState, prompt: PromptInfo, now: datetime) -> str | None:
    """The booking form; returns the entered values as JSON once they validate (errors shown per field).

    `now` is the local (Japan) time the picked visit time must come after (booking.local_now()).
    """
    values: dict[str, str] = {}
    with st.form("diagnosis_booking_form"):
        for f in prompt.booking_fields:
            label = f["label"] + ("（必須）" if f["required"] else "")
            key = f"diagnosis_field_{f['name']}"
            if f["type"] == "textarea":
                values[f["name"]] = st.text_area(
                    label, value=f.get("value", ""), placeholder=f["placeholder"], key=key
                )
            elif f["type"] == "datetime":
                values[f["name"]] = visit_time_picker(f, key, now)
            else:
                values[f["name"]] = st.text_input(
                    label, value=f.get("value", ""), placeholder=f["placeholder"], key=key
                )
        submitted = st.form_submit_button("入力内容を確認する", type="primary")
    if not submitted:
        return None
    errors = validate_booking(session.booking_type, values, now)
    if errors:
        for message in errors.values():
            st.error(message)
        return None
    return json.dumps(values, ensure_ascii=False)


def visit_time_picker(field: dict[str, Any], key: str, now: datetime) -> str:
    """The visit date from a calendar (年/月/日) and the time from the opening hours; 「YYYY-MM-DD HH:MM」."""
    chosen = parse_visit(field.get("value", ""))
    today = now.date()
    day = chosen[0] if chosen and chosen[0] >= today else today + timedelta(days=1)
    time = chosen[1] if chosen and chosen[1] in VISIT_TIMES else DEFAULT_VISIT_TIME
    name = field["label"].removesuffix("日時")
    left, right = st.columns(2)
    picked = left.date_input(
        f"{name}日（必須）",
        value=day,
        min_value=today,
        max_value=today + timedelta(days=BOOKING_DAYS_AHEAD),
        format="YYYY/MM/DD",
        key=f"{key}_date",
    )
    slot = right.selectbox(
        f"{name}時刻（必須）", VISIT_TIMES, index=VISIT_TIMES.index(time), key=f"{key}_time"
    )
    return f"{picked:%Y-%m-%d} {slot}" if isinstance(picked, date) else ""


def parse_visit(text: str) -> tuple[date, str] | None:
    """A stored 「YYYY-MM-DD HH:MM」 back into the picker's date and time (None when it is not one)."""
    try:
        when = datetime.strptime(str(text or "").strip(), "%Y-%m-%d %H:%M")
    except ValueError:
        return None
    return when.date(), when.strftime("%H:%M")


def booking_summary_table(prompt: PromptInfo) -> None:
    st.table([{"項目": k, "内容": v} for k, v in prompt.booking_summary.items()])


COVERAGE_LABELS = {"covered": "あり", "partially_covered": "一部", "not_covered": "なし"}


def bookings_table(rows: list[BookingRow], taken_by: dict[str, str] | None = None) -> None:
    """Bookings as a table; with `taken_by` (owner id -> name: the admins' team view) a 受付者 column."""
    if not rows:
        st.caption("まだ予約はありません。")
        return
    st.dataframe(
        [
            {
                **({"受付者": taken_by.get(r.owner_id, r.owner_id)} if taken_by is not None else {}),
                "受付番号": f"D-{r.id:06d}",
                "種別": "出張手配" if r.booking_type == "dispatch" else "来店予約",
                "緊急度": URGENCY_LABELS.get(r.urgency_level, r.urgency_level),
                "お名前": r.name,
                "電話番号": r.phone,
                "希望日時・場所": r.preferred_time or r.address,
                "症状": r.symptom,
                "問診の回答": "／".join(a.answer for a in r.answers),
                "説明書の記載": COVERAGE_LABELS.get(r.manual_coverage, ""),
                "車両": r.vehicle_label,
                "受付日時": format_local(r.created_at),
            }
            for r in rows
        ],
        hide_index=True,
        width="stretch",
    )


_FOCUS_CHAT_INPUT = """<script>
(() => {
  let tries = 0;
  const focus = () => {
    const box = document.querySelector('[data-testid="stChatInputTextArea"]');
    if (box) { box.focus(); return; }
    if (tries++ < 40) setTimeout(focus, 50);
  };
  focus();
})();
</script>"""


def focus_chat_input() -> None:
    """Put the keyboard focus in the chat input (「自由入力」); a fixed script, no model text in it."""
    st.html(_FOCUS_CHAT_INPUT, unsafe_allow_javascript=True)
