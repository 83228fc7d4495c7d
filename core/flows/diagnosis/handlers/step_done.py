"""DONE (spec 04 §2): the interview is over; only a restart begins a new one."""

from __future__ import annotations

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, PromptInfo, SessionState
from core.flows.diagnosis.responses import respond

DONE_NOTICE = "この問診は完了しています。新しい症状は「最初からやり直す」から入力してください。"


def handle_done(session: SessionState, request: ChatRequest, deps: DiagnosisDeps) -> ChatResponse:
    return respond(session, PromptInfo(type="text", message=DONE_NOTICE), record=False)
