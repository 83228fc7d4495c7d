"""DIAGNOSING (spec 04 §4): rewind, resolved, empty input, and the main interview steps 1-14."""

from __future__ import annotations

import logging
import re
from typing import Any

from core.contracts.schemas import load_schema
from core.debuglog.kept_going import kept_going
from core.flows.diagnosis.catalog import vehicle_kind
from core.flows.diagnosis.constants import (
    DIAGNOSTIC_TEMPERATURE,
    DONT_KNOW,
    DONT_KNOW_VALUE,
    EMPTY_INPUT_MESSAGE,
    FALLBACK_MESSAGE,
    FLOW_TAG,
    MAX_SOLUTIONS_TRIED,
)
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.guards import (
    GENERIC_DUPLICATE_CHOICES,
    GENERIC_DUPLICATE_MESSAGE,
    _append_default_choices,
    _attach_icons,
    _is_duplicate_question,
    _is_irrelevant_topic,
    _is_waiting_message,
    raise_urgency_for_coverage,
    should_show_candidates,
    validate_diagnostic,
)
from core.flows.diagnosis.models import (
    ChatRequest,
    ChatResponse,
    ChatStep,
    Next,
    PromptInfo,
    SessionState,
    StepOutcome,
)
from core.flows.diagnosis.prompting import (
    _build_additional_instructions,
    build_diagnostic_messages,
    build_rag_context,
)
from core.flows.diagnosis.responses import (
    COVERAGE_NOTES,
    DRIVE_NOTE,
    record_user,
    respond,
)
from core.flows.diagnosis.snapshots import rewind, save_snapshot, turn_start_state
from core.flows.diagnosis.step_shared import danger_notice, enter_reservation, raise_urgency, spec_prompt
from core.flows.diagnosis.summary_job import StartedSummary, start_summary, summary_due, summary_result
from core.flows.diagnosis.tracing import main_call
from core.flows.diagnosis.urgency import UrgencyResult, urgency_rank
from core.flows.diagnosis.urgency_fast_path import fast_urgency_check
from core.guard.json_guard import GuardResult, guarded_json

log = logging.getLogger(__name__)

RESOLVED_CHOICES = [
    {"value": "yes", "label": "解決しました"},
    {"value": "no", "label": "解決していません"},
    {"value": "book", "label": "点検を予約したい"},
]
RESOLVED_LABELS = {c["value"]: c["label"] for c in RESOLVED_CHOICES}
RESOLVED_QUESTION = "この対処で解決しましたか？"
# An answer the manual does not cover, or one that only sends the car to a workshop, gives no remedy to try:
# it asks what to do next, not whether 「この対処」 worked.
WORKSHOP_ADVICE = re.compile(r"販売店|ディーラー|整備工場|点検を受け|交換を受け|修理を受け")
NO_REMEDY_QUESTION = "点検のご予約か、別の可能性の確認ができます。どちらにしますか？"
NO_REMEDY_CHOICES = [
    {"value": "book", "label": "点検を予約したい"},
    {"value": "no", "label": "別の可能性を調べる"},
]
DONE_MESSAGE = "解決してよかったです。症状が再発した場合は、お早めに販売店へご相談ください。"
RETRY_MESSAGE = "提案された対処では解決しませんでした。"
# Shown under the urgency banner when the raise came from the model, not from a keyword rule.
REASON_MODEL = "問診の内容からの判断"
REASON_NOT_COVERED = "取扱説明書に記載のない症状"
REWIND_MESSAGE = "ターン{turn}の質問に戻りました。別の回答を選んでください。"


def _llm_call(
    session: SessionState, deps: DiagnosisDeps, rag_context: str, **instructions: Any
) -> GuardResult[Any]:
    """spec 04 §4 D.7-8: build DIAGNOSTIC_PROMPT and call the model through the guard."""
    additional = _build_additional_instructions(session, **instructions)
    with main_call() as call_id:  # the first one is the step span's call (core/flows/diagnosis/tracing.py)
        return guarded_json(
            deps.client,
            build_diagnostic_messages(session, rag_context, additional),
            load_schema("diagnostic_response"),
            name="diagnostic_response",
            validators=(validate_diagnostic,),
            sink=deps.sink,
            tags={"flow": FLOW_TAG, "step": "diagnosing"},
            temperature=DIAGNOSTIC_TEMPERATURE,
            call_id=call_id,
        )


def _rag_query(session: SessionState, deps: DiagnosisDeps) -> tuple[str, list[dict[str, Any]]]:
    """spec 04 §4 D.4: rag_service.query() -> (rag_context, rag_sources)."""
    if deps.rag is None or not session.vehicle_id:
        return "", []
    query = session.rewritten_query or session.all_symptom_text
    try:
        answer = deps.rag.query(
            query,
            session.vehicle_id,
            session.make,
            session.model,
            session.year,
            client=deps.client,
            sink=deps.sink,
        )
    except Exception:  # noqa: BLE001 - any failure of the index (Chroma, disk) must not end the interview
        kept_going(log, "manual search failed; diagnosing without the manual", deps.sink, step="rag")
        return "", []
    return build_rag_context(answer.answer, answer.sources), list(answer.sources)


def _maybe_summarize(
    session: SessionState, deps: DiagnosisDeps, started: StartedSummary | None = None
) -> None:
    """spec 04 §4 D.5: every 3 turns, refresh conversation_summary (a failed call keeps the old one).

    With a worker the call was started before D.4 (`start_summary`, beside the RAG answer call) and is
    awaited here; the prompt of D.7 gets the same summary either way."""
    if not summary_due(session):
        return
    result = summary_result(session, deps, started)
    if result is not None and result.ok:
        session.conversation_summary = result.value.strip()


def _handle_rewind(session: SessionState, turn: int) -> ChatResponse:
    """spec 04 §4 A: restore the snapshot, drop later ones, answer with rewound_to_turn."""
    if not rewind(session, turn):
        prompt = PromptInfo(type="text", message=f"ターン{turn}には戻れません（記録がありません）。")
        return ChatResponse(
            session.session_id, str(session.current_step), prompt, diagnostic_turn=session.diagnostic_turn
        )
    prompt = (
        PromptInfo.from_dict(session.last_prompt)
        if session.last_prompt
        else PromptInfo(message=REWIND_MESSAGE.format(turn=turn))
    )
    return respond(session, prompt, rewound_to_turn=turn, record=False)


def _handle_resolved(session: SessionState, value: str | None, deps: DiagnosisDeps) -> StepOutcome:
    """spec 04 §4 B: yes -> DONE; no -> solutions_tried++ (over 3 -> URGENCY_CHECK, else ask again); book -> RESERVATION."""
    if value == "yes":
        record_user(session, RESOLVED_LABELS["yes"])
        session.current_step = ChatStep.DONE
        return respond(session, PromptInfo(type="text", message=DONE_MESSAGE))
    if value == "book":
        record_user(session, RESOLVED_LABELS["book"])
        return enter_reservation(session, "点検のご予約を承ります。")
    if value == "no":
        session.solutions_tried += 1
        if session.solutions_tried > MAX_SOLUTIONS_TRIED:
            record_user(session, RESOLVED_LABELS["no"])
            return Next(ChatStep.URGENCY_CHECK, ChatRequest(session.session_id))
        return _interview(session, RETRY_MESSAGE, deps)
    prompt = PromptInfo(
        type="single_choice",
        message="解決したかどうか、ボタンで選んでください。",
        choices=[dict(c) for c in RESOLVED_CHOICES],
        action="resolved",
    )
    return respond(session, prompt, record=False)


def handle_diagnosing(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> StepOutcome:
    """spec 04 §4: A rewind, B resolved, C empty input, D the interview."""
    if request.rewind_to_turn is not None:
        return _handle_rewind(session, request.rewind_to_turn)
    if request.action == "resolved":
        return _handle_resolved(session, request.action_value, deps)
    text = (request.message or "").strip()
    if request.action == "choice" and request.action_value:
        text = DONT_KNOW if request.action_value == DONT_KNOW_VALUE else request.action_value
    if not text:
        prompt = PromptInfo(type="text", message=EMPTY_INPUT_MESSAGE)
        return ChatResponse(
            session.session_id, str(session.current_step), prompt, diagnostic_turn=session.diagnostic_turn
        )
    return _interview(session, text, deps)


def _interview(session: SessionState, text: str, deps: DiagnosisDeps) -> StepOutcome:
    """spec 04 §4 D steps 1-14 (past max_diagnostic_turns: URGENCY_CHECK runs on)."""
    before = turn_start_state(session)
    # 1. save the input, count the turn
    session.collected_symptoms.append(text)
    session.diagnostic_turn += 1
    record_user(session, text)
    # 2. snapshot for rewind
    save_snapshot(session, session.diagnostic_turn, before)
    if session.diagnostic_turn > session.max_diagnostic_turns:
        return Next(ChatStep.URGENCY_CHECK, ChatRequest(session.session_id))
    # 3. keyword fast path
    keyword = fast_urgency_check(
        session.all_symptom_text, deps.urgency_judge, vehicle_kind(session.vehicle_id)
    )
    if keyword.level == "critical":
        raise_urgency(session, keyword)
        return enter_reservation(session, danger_notice(keyword))
    if keyword.reasons:
        raise_urgency(session, keyword)
    # 4. RAG, 5. summary (started first on a worker: both calls only read the session), 6. candidates
    started = start_summary(session, deps)
    rag_context, sources = _rag_query(session, deps)
    session.last_rag_sources = sources
    _maybe_summarize(session, deps, started)
    if should_show_candidates(session.last_confidence, session.diagnostic_turn):
        session.candidates_shown = True
    # 7-9. prompt, call, parse
    result = _llm_call(session, deps, rag_context)
    if not result.ok:
        return respond(session, PromptInfo(type="text", message=FALLBACK_MESSAGE), rag_sources=sources)
    data = dict(result.value)
    # 10. topic guard, 11. waiting-message guard (one retry each; a failed retry keeps the first answer)
    if _is_irrelevant_topic(data["question_topic"], session.symptom_text, session.conversation_history):
        retry = _llm_call(session, deps, rag_context, topic_restriction=data["question_topic"])
        data = dict(retry.value) if retry.ok else data
    if _is_waiting_message(data["message"]):
        retry = _llm_call(session, deps, rag_context, force_answer=True)
        data = dict(retry.value) if retry.ok else data
    if data["action"] in ("ask_question", "clarify_term") and _is_duplicate_question(
        data["message"], session.asked_questions
    ):
        data["message"], data["choices"] = GENERIC_DUPLICATE_MESSAGE, list(GENERIC_DUPLICATE_CHOICES)
        data["question_topic"] = "発生状況"
    _store_result(session, data)
    # 12. manual_coverage raise, 13. urgency_flag
    flag = _apply_urgency_flag(session, data)
    if flag == "critical":
        return enter_reservation(session, data["message"], rag_sources=sources)
    # 14. by action
    return _by_action(session, data, flag, sources)


def _apply_urgency_flag(session: SessionState, data: dict[str, Any]) -> str:
    """spec 04 §4 D.12-13: raise not_covered to medium (F3), adopt medium and above with a reason; the flag."""
    flag = raise_urgency_for_coverage(data["urgency_flag"], data["manual_coverage"])
    if urgency_rank(flag) < urgency_rank("medium"):
        return flag
    reason = REASON_NOT_COVERED if flag != data["urgency_flag"] else REASON_MODEL
    defaults = {"critical": (False, "immediate"), "high": (True, "today"), "medium": (True, "this_week")}
    default_drive, default_visit = defaults[flag]
    can_drive = data["can_drive"] if data["can_drive"] is not None else default_drive
    raise_urgency(session, UrgencyResult(flag, can_drive, data["visit_urgency"] or default_visit, [reason]))
    return flag


def _store_result(session: SessionState, data: dict[str, Any]) -> None:
    session.last_confidence = float(data["confidence_to_answer"])
    session.rewritten_query = data["rewritten_query"] or session.rewritten_query
    session.manual_coverage = data["manual_coverage"]
    if data["visit_urgency"]:
        session.visit_urgency = session.visit_urgency or data["visit_urgency"]


def _by_action(
    session: SessionState, data: dict[str, Any], flag: str, sources: list[dict[str, Any]]
) -> ChatResponse:
    """spec 04 §4 action table; provide_answer branches on this answer's urgency_flag (after the F3 raise)."""
    action, message = data["action"], data["message"]
    if action == "escalate":
        if urgency_rank(session.urgency_level) < urgency_rank("high"):
            visit = data["visit_urgency"] or "today"
            can_drive = data["can_drive"] if data["can_drive"] is not None else session.can_drive
            raise_urgency(session, UrgencyResult("high", can_drive, visit, [REASON_MODEL]))
        return enter_reservation(session, message, rag_sources=sources)
    if action == "spec_answer":
        session.current_step = ChatStep.SPEC_CHECK
        session.spec_check_shown = True
        return respond(session, spec_prompt(message + "\n\nこの方法で解決しましたか？"), rag_sources=sources)
    if action == "provide_answer":
        note = COVERAGE_NOTES.get(data["manual_coverage"])
        text = message + (f"\n\n{note}" if note else "")
        if urgency_rank(flag) >= urgency_rank("high"):
            # reservation_prompt adds the no-drive note itself when can_drive is false
            prefix = text + (f"\n\n{DRIVE_NOTE}" if session.can_drive else "")
            return enter_reservation(session, prefix, rag_sources=sources)
        remedy = data["manual_coverage"] != "not_covered" and not WORKSHOP_ADVICE.search(message)
        prompt = PromptInfo(
            type="single_choice",
            message=text + "\n\n" + (RESOLVED_QUESTION if remedy else NO_REMEDY_QUESTION),
            choices=[dict(c) for c in (RESOLVED_CHOICES if remedy else NO_REMEDY_CHOICES)],
            action="resolved",
        )
        return respond(session, prompt, rag_sources=sources)
    # ask_question / clarify_term
    choices = _attach_icons(_append_default_choices(data["choices"]), data["question_topic"])
    session.asked_questions.append(message)
    prompt = PromptInfo(type="single_choice", message=message, choices=choices, action="choice")
    return respond(session, prompt, rag_sources=sources)
