"""SPEC_CHECK (spec 04 §5): is it the car's normal behaviour? Explain it, then ask if that solved it."""

from __future__ import annotations

from core.contracts.schemas import load_schema
from core.flows.diagnosis.constants import FLOW_TAG
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatStep, Next, PromptInfo, SessionState, StepOutcome
from core.flows.diagnosis.prompting import build_spec_messages
from core.flows.diagnosis.rag import format_excerpts
from core.flows.diagnosis.responses import record_user, respond
from core.flows.diagnosis.step_shared import SPEC_CHOICES, rag_search, spec_prompt
from core.guard.json_guard import guarded_json

SPEC_FOLLOWUPS = {
    "not_resolved": "仕様の説明どおりに操作しましたが、解決しませんでした。",
    "already_tried": "説明された操作はすでに試しましたが、症状は変わりません。",
}
RESOLVED_MESSAGE = (
    "解決してよかったです。ほかに気になることがあれば「最初からやり直す」から新しい問診を始めてください。"
)


def handle_spec_check(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> StepOutcome:
    """spec 04 §5. Phase 1: classify with SPEC_CLASSIFICATION_SCHEMA (not a confident spec -> DIAGNOSING
    with the same input); phase 2: resolved -> DONE, else DIAGNOSING with the follow-up as the answer."""
    if not session.spec_check_shown:
        sources = session.last_rag_sources or rag_search(session, session.symptom_text, deps)
        result = guarded_json(
            deps.client,
            build_spec_messages(session, format_excerpts(sources)),
            load_schema("spec_classification"),
            name="spec_classification",
            sink=deps.sink,
            tags={"flow": FLOW_TAG, "step": "spec_check"},
        )
        data = result.data if result.ok else None
        if data and data["is_spec"] and data["confidence"] == "high":
            session.spec_check_shown = True
            record_user(session, (request.message or "").strip())
            message = data["explanation"]
            if data.get("manual_reference"):
                message += f"\n\n（取扱説明書: {data['manual_reference']}）"
            message += "\n\nこの方法で解決しましたか？"
            return respond(session, spec_prompt(message), rag_sources=sources)
        return Next(ChatStep.DIAGNOSING)

    value = request.action_value if request.action == "spec_check" else None
    if value == "resolved":
        record_user(session, SPEC_CHOICES[0]["label"])
        session.current_step = ChatStep.DONE
        return respond(session, PromptInfo(type="text", message=RESOLVED_MESSAGE))
    if value in SPEC_FOLLOWUPS:
        return Next(ChatStep.DIAGNOSING, ChatRequest(session.session_id, message=SPEC_FOLLOWUPS[value]))
    return Next(ChatStep.DIAGNOSING)
