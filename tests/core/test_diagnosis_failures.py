"""Every LLM call of the flow goes through the guard; what each failure falls back to (spec 04 §5, §6, §10, §12)."""

from __future__ import annotations

import pytest

from core.flows.diagnosis.constants import FALLBACK_MESSAGE
from core.flows.diagnosis.handlers.step_urgency import ADVICE_FALLBACK
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.state_machine import process_step
from core.llm.base import ProviderError
from core.search.vectors import open_chroma
from tests.core.diagnosis_fixtures import FakeRag, diag, make_deps, make_session, src

TIMEOUT = ProviderError("timeout")


def test_diagnostic_schema_violation_is_repaired_then_used() -> None:
    deps = make_deps(['{"action": "ask_question"}', diag(message="いつですか？")])
    s = make_session()
    r = process_step(s, ChatRequest("s1", message="ときどき"), deps)
    assert r.prompt.message == "いつですか？" and len(deps.client.requests) == 2  # type: ignore[attr-defined]


def test_diagnostic_validator_rejects_a_question_without_choices() -> None:
    deps = make_deps([diag(choices=None), diag(choices=None), diag(choices=None)])
    s = make_session()
    r = process_step(s, ChatRequest("s1", message="ときどき"), deps)
    assert r.prompt.message == FALLBACK_MESSAGE and r.prompt.type == "text"
    assert s.collected_symptoms == ["ときどき"]  # the answer is kept for the next turn


@pytest.mark.parametrize(
    ("symptom", "step", "level"),
    [("ラジオの音が小さい", ChatStep.DONE, "low"), ("警告灯が点灯した", ChatStep.RESERVATION, "high")],
)
def test_urgency_llm_failure_falls_back_to_the_keyword_result(
    symptom: str, step: ChatStep, level: str
) -> None:
    deps = make_deps([TIMEOUT])
    s = make_session(ChatStep.URGENCY_CHECK, symptom_text=symptom)
    r = process_step(s, ChatRequest("s1"), deps)
    assert s.current_step == step and s.urgency_level == level
    assert deps.client.requests[0].json_schema.name == "urgency"  # type: ignore[attr-defined]
    if step == ChatStep.DONE:
        assert ADVICE_FALLBACK in r.prompt.message


def test_spec_classification_failure_falls_through_to_diagnosing() -> None:
    rag = FakeRag([src("セレクトレバーの操作", "procedure", 0.7), src("シフトロック解除", "procedure", 0.4)])
    deps = make_deps([TIMEOUT, diag()], rag=rag)
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message="セレクトレバーが動かない"), deps)
    assert s.current_step == ChatStep.DIAGNOSING and r.prompt.action == "choice" and not s.spec_check_shown
    names = [q.json_schema.name for q in deps.client.requests]  # type: ignore[attr-defined]
    assert names == ["spec_classification", "diagnostic_response"]


def test_summary_failure_keeps_the_old_summary() -> None:
    deps = make_deps([TIMEOUT, diag()])
    s = make_session(diagnostic_turn=2, conversation_summary="前回の要約")
    r = process_step(s, ChatRequest("s1", message="まだ鳴る"), deps)
    assert s.conversation_summary == "前回の要約" and r.prompt.action == "choice"
    assert [q.tags["step"] for q in deps.client.requests] == ["summary", "diagnosing"]  # type: ignore[attr-defined]


def test_rag_answer_failure_keeps_the_excerpts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rag = RAGService(open_chroma(tmp_path))
    rag.index_manuals()
    deps = make_deps([TIMEOUT, diag()], rag=rag)
    s = make_session(symptom_text="ブレーキを踏むとキーキー音がする")
    process_step(s, ChatRequest("s1", message="走行中"), deps)
    requests = deps.client.requests  # type: ignore[attr-defined]
    assert [q.tags["step"] for q in requests] == ["rag_answer", "diagnosing"]
    assert "「ブレーキ時にキーキー音がする」" in requests[1].messages[1]["content"]
    assert s.last_rag_sources and s.last_rag_sources[0]["section"] == "ブレーキ時にキーキー音がする"
