"""Message stacks of every diagnosis LLM call (spec 04 §4 D.7, §12 step 2, step 4).

Each stack is [system, user]: the shared system prompt, then the filled template from prompts/.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.contracts.prompts import fill, load_prompt
from core.flows.diagnosis.constants import RECENT_TURN_ITEMS
from core.flows.diagnosis.models import SessionState
from core.flows.diagnosis.rag import format_excerpts, vehicle_text
from core.flows.diagnosis.urgency import UrgencyResult

ROLE_LABELS = {"user": "お客様", "assistant": "アドバイザー"}

TOPIC_RESTRICTION = (
    "前回の質問トピック「{topic}」はお客様の症状と関係がありませんでした。"
    "お客様が伝えた症状（{symptom}）に直接関係することだけを質問してください。"
)
FORCE_ANSWER = (
    "「まとめます」「お待ちください」のような予告だけの文は使わず、今ある情報で action を provide_answer にして、"
    "原因の候補と対処を message に書いてください。"
)
CANDIDATES_INSTRUCTION = "十分な情報が集まりつつあります。考えられる原因の候補を2〜3個に絞り、確信度が0.7以上なら provide_answer で回答してください。"
SPEC_HINT_INSTRUCTION = "取扱説明書に、この症状が仕様（正常な動作）である可能性を示す記載があります。仕様で説明できる場合は spec_answer を検討してください。"
LAST_TURN_INSTRUCTION = (
    "問診ターンの上限です。これ以上質問せず、provide_answer または escalate で締めくくってください。"
)
RETRY_INSTRUCTION = (
    "お客様は提案された対処を試しましたが解決しませんでした（{tried}回目）。別の原因を検討してください。"
)


def system_prompt() -> str:
    return load_prompt("diagnosis_system_prompt")


def _messages(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system_prompt()}, {"role": "user", "content": user}]


def _build_recent_turns(session: SessionState) -> str:
    """spec 04 §4 D.7: the last 4 conversation items as 「お客様: ...」 lines."""
    recent = session.conversation_history[-RECENT_TURN_ITEMS:]
    if not recent:
        return "（まだありません）"
    return "\n".join(f"{ROLE_LABELS.get(m['role'], m['role'])}: {m['content']}" for m in recent)


def _build_additional_instructions(
    session: SessionState, *, topic_restriction: str | None = None, force_answer: bool = False
) -> str:
    """spec 04 §4 D.7: instructions that depend on the state (candidates, spec hint, last turn, guards)."""
    lines = []
    if session.candidates_shown:
        lines.append(CANDIDATES_INSTRUCTION)
    if session.spec_hint:
        lines.append(SPEC_HINT_INSTRUCTION)
    if session.solutions_tried:
        lines.append(RETRY_INSTRUCTION.format(tried=session.solutions_tried))
    if session.diagnostic_turn >= session.max_diagnostic_turns:
        lines.append(LAST_TURN_INSTRUCTION)
    if topic_restriction is not None:
        lines.append(TOPIC_RESTRICTION.format(topic=topic_restriction, symptom=session.symptom_text))
    if force_answer:
        lines.append(FORCE_ANSWER)
    return "\n".join(f"- {line}" for line in lines) if lines else "（なし）"


def build_diagnostic_messages(
    session: SessionState, rag_context: str, additional: str
) -> list[dict[str, str]]:
    """DIAGNOSTIC_PROMPT with every parameter filled (spec 04 §4 D.7)."""
    user = fill(
        load_prompt("diagnostic_prompt"),
        VEHICLE=vehicle_text(session.make, session.model, session.year),
        SYMPTOM=session.symptom_text or "（未入力）",
        COLLECTED_SYMPTOMS="\n".join(f"- {s}" for s in session.collected_symptoms) or "（なし）",
        SUMMARY=session.conversation_summary or "（まだありません）",
        RECENT_TURNS=_build_recent_turns(session),
        RAG_CONTEXT=rag_context or "（該当なし）",
        ASKED_QUESTIONS="\n".join(f"- {q}" for q in session.asked_questions) or "（なし）",
        DIAGNOSTIC_TURN=str(session.diagnostic_turn),
        MAX_TURNS=str(session.max_diagnostic_turns),
        LAST_CONFIDENCE=f"{session.last_confidence:.2f}",
        ADDITIONAL_INSTRUCTIONS=additional,
    )
    return _messages(user)


def build_rag_context(answer: str, sources: Sequence[dict[str, Any]]) -> str:
    """What DIAGNOSTIC_PROMPT gets from RAG: the answer summary, then the excerpts with page numbers."""
    parts = []
    if answer:
        parts.append(f"要約: {answer}")
    parts.append(format_excerpts(sources))
    return "\n".join(parts)


def build_summary_messages(session: SessionState) -> list[dict[str, str]]:
    """The 3-turn summary call (spec 04 §4 D.5)."""
    conversation = "\n".join(
        f"{ROLE_LABELS.get(m['role'], m['role'])}: {m['content']}" for m in session.conversation_history
    )
    user = fill(
        load_prompt("diagnosis_summary_prompt"),
        VEHICLE=vehicle_text(session.make, session.model, session.year),
        SUMMARY=session.conversation_summary or "（まだありません）",
        CONVERSATION=conversation or "（なし）",
    )
    return _messages(user)


def build_urgency_messages(
    session: SessionState, keyword: UrgencyResult, rag_warnings: Sequence[dict[str, Any]]
) -> list[dict[str, str]]:
    """URGENCY_ASSESSMENT_PROMPT with the RAG warnings and the keyword result (spec 04 §6)."""
    keyword_text = (
        f"level={keyword.level}, can_drive={keyword.can_drive}, visit_urgency={keyword.visit_urgency}"
    )
    if keyword.reasons:
        keyword_text += "（理由: " + "、".join(keyword.reasons) + "）"
    user = fill(
        load_prompt("urgency_assessment_prompt"),
        VEHICLE=vehicle_text(session.make, session.model, session.year),
        SYMPTOMS=session.all_symptom_text or "（なし）",
        RAG_WARNINGS=format_excerpts(rag_warnings),
        KEYWORD_RESULT=keyword_text,
    )
    return _messages(user)


def build_spec_messages(session: SessionState, rag_context: str) -> list[dict[str, str]]:
    """SPEC_CLASSIFICATION_PROMPT (spec 04 §5)."""
    user = fill(
        load_prompt("spec_classification_prompt"),
        VEHICLE=vehicle_text(session.make, session.model, session.year),
        SYMPTOM=session.all_symptom_text or "（なし）",
        RAG_CONTEXT=rag_context or "（該当なし）",
    )
    return _messages(user)
