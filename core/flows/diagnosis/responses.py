"""Building ChatResponses: urgency banners (spec 04 §7 table), coverage notes, default prompts."""

from __future__ import annotations

from typing import Any

from core.flows.chat_item import assistant_item, user_item
from core.flows.diagnosis.models import ChatResponse, PromptInfo, SessionState, UrgencyInfo
from core.flows.diagnosis.urgency import urgency_rank

# spec 04 §7: message per visit_urgency (can_drive=false has its own row).
RESERVATION_MESSAGES = {
    "no_drive": "今すぐロードサービスまたは来場が必要です",
    "immediate": "今すぐ来場またはロードサービスが必要です",
    "today": "本日中の来場をおすすめします",
    "this_week": "今週中の来場をおすすめします",
    "when_convenient": "ご都合のよいときに点検をおすすめします",
}
# spec 04 §4 provide_answer: notes appended by manual_coverage.
COVERAGE_NOTES = {
    "not_covered": "取扱説明書に該当する記載がないため、ディーラーでの点検を推奨します。",
    "partially_covered": "取扱説明書の記載に一部、一般的な知識に基づく回答を含みます。",
}
NO_DRIVE_NOTE = "自走は控えてください。ロードサービス（出張手配）をご利用ください。"
DRIVE_NOTE = "早急な点検をおすすめします。来店予約または出張手配をご利用ください。"


# The visit urgency a level implies when the session has none of its own (spec 04 §6 table; low and none:
# whenever convenient).
LEVEL_VISIT_URGENCY = {
    "critical": "immediate",
    "high": "today",
    "medium": "this_week",
    "low": "when_convenient",
    "none": "when_convenient",
}


def urgency_banner(can_drive: bool, visit_urgency: str) -> str:
    """The §7 table: can_drive=false first, then by visit_urgency (none given: whenever convenient)."""
    if not can_drive:
        return RESERVATION_MESSAGES["no_drive"]
    return RESERVATION_MESSAGES.get(visit_urgency or "", RESERVATION_MESSAGES["when_convenient"])


def session_visit_urgency(session: SessionState) -> str:
    """The visit urgency the session really has: its own, else what its urgency level implies (a
    low-urgency booking is not told to come today)."""
    return session.visit_urgency or LEVEL_VISIT_URGENCY.get(session.urgency_level, "when_convenient")


def session_banner(session: SessionState) -> str:
    """urgency_banner for the session's real urgency."""
    return urgency_banner(session.can_drive, session_visit_urgency(session))


def urgency_info(session: SessionState) -> UrgencyInfo | None:
    """The session's urgency as a banner, or None when nothing is urgent (none / low)."""
    if urgency_rank(session.urgency_level) < urgency_rank("medium"):
        return None
    return UrgencyInfo(
        level=session.urgency_level,
        can_drive=session.can_drive,
        visit_urgency=session.visit_urgency,
        reasons=list(session.urgency_reasons),
        message=session_banner(session),
    )


def banner_severity(info: UrgencyInfo) -> str:
    """How loud the banner is (the page picks its colour and icon): "error" for the §7 rows that send the car
    to a road service or in at once, else "warning"."""
    urgent = (RESERVATION_MESSAGES["no_drive"], RESERVATION_MESSAGES["immediate"])
    return "error" if info.message in urgent else "warning"


def respond(
    session: SessionState,
    prompt: PromptInfo,
    *,
    rag_sources: list[dict[str, Any]] | None = None,
    rewound_to_turn: int | None = None,
    record: bool = True,
) -> ChatResponse:
    """Record the prompt as the last one shown (and in the history), and wrap it in a ChatResponse."""
    session.last_prompt = prompt.to_dict()
    if rag_sources is not None:
        session.last_rag_sources = list(rag_sources)
    if record and prompt.message:
        session.conversation_history.append(
            assistant_item(
                prompt.message,
                turn=session.diagnostic_turn or None,
                step=str(session.current_step),
                prompt_type=prompt.type,
                choices=[c["label"] for c in prompt.choices],
            )
        )
    return ChatResponse(
        session_id=session.session_id,
        current_step=str(session.current_step),
        prompt=prompt,
        urgency=urgency_info(session),
        rag_sources=list(session.last_rag_sources),
        manual_coverage=session.manual_coverage or None,
        diagnostic_turn=session.diagnostic_turn,
        rewound_to_turn=rewound_to_turn,
    )


def record_user(session: SessionState, text: str) -> None:
    """Append a user message to the conversation history (a core.flows.chat_item item, done: its reply follows now)."""
    if text:
        session.conversation_history.append(
            user_item(text, turn=session.diagnostic_turn or None, status="done")
        )
