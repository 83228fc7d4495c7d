"""Shared builders for the diagnosis flow tests: sessions at a given step, replies, a fake RAG."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from core.clock import from_local
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatStep, SessionState
from core.flows.diagnosis.rag import RagAnswer
from core.llm.replay import ReplayClient

NOW = datetime(2026, 11, 21, 10, 0)  # Japan time, as a person reads the clock
NOW_TS = from_local(NOW)  # the same instant as the flow's clock gives it (UTC epoch seconds)


def src(
    section: str, content_type: str = "procedure", score: float = 0.6, warning: bool = False, page: int = 30
) -> dict[str, Any]:
    return {
        "chunk_id": f"c-{section}",
        "vehicle_id": "minato-soleil-2022",
        "content": f"{section}の説明です。",
        "page": page,
        "section": section,
        "content_type": content_type,
        "has_warning": warning,
        "score": score,
    }


class FakeRag:
    """search() returns fixed sources; query() returns them with a fixed answer and no LLM call."""

    def __init__(self, sources: list[dict[str, Any]] | None = None, answer: str = "マニュアル要約"):
        self.sources = sources or []
        self.answer = answer
        self.queries: list[str] = []

    def search(self, query: str, vehicle_id: str, n_results: int = 5) -> list[dict[str, Any]]:
        self.queries.append(query)
        return list(self.sources)

    def query(self, symptom: str, vehicle_id: str, make: str, model: str, year: int, **_: Any) -> RagAnswer:
        self.queries.append(symptom)
        return RagAnswer(self.answer, list(self.sources))


class FakeStore:
    def __init__(self) -> None:
        self.saved: list[dict[str, Any]] = []

    def save_booking(self, booking: dict[str, Any]) -> int:
        self.saved.append(booking)
        return len(self.saved)


def diag(**overrides: Any) -> str:
    """A valid diagnostic_response JSON (ask_question by default)."""
    data: dict[str, Any] = {
        "action": "ask_question",
        "message": "いつ症状が出ますか？",
        "urgency_flag": "none",
        "reasoning": "r",
        "choices": ["走行中", "停車中"],
        "can_drive": None,
        "confidence_to_answer": 0.3,
        "rewritten_query": "q",
        "question_topic": "症状の発生タイミング",
        "manual_coverage": "covered",
        "visit_urgency": None,
        "term_to_clarify": None,
    }
    data.update(overrides)
    return json.dumps(data, ensure_ascii=False)


def urgency_json(
    level: str = "medium", can_drive: bool = True, visit: str = "this_week", reasons: list[str] | None = None
) -> str:
    return json.dumps(
        {
            "level": level,
            "can_drive": can_drive,
            "visit_urgency": visit,
            "reasons": reasons or ["LLM理由"],
            "recommendation": "点検をおすすめします。",
        },
        ensure_ascii=False,
    )


def spec_json(is_spec: bool = True, confidence: str = "high") -> str:
    return json.dumps(
        {
            "is_spec": is_spec,
            "confidence": confidence,
            "explanation": "仕様です。ブレーキを踏みながら操作してください。",
            "manual_reference": "p.34 セレクトレバーの操作",
            "reasoning": "r",
        },
        ensure_ascii=False,
    )


def make_session(step: ChatStep = ChatStep.DIAGNOSING, **fields: Any) -> SessionState:
    session = SessionState(
        session_id="s1",
        current_step=step,
        vehicle_id="minato-soleil-2022",
        make="ミナト自動車",
        model="ソレイユ",
        year=2022,
    )
    if step not in (ChatStep.VEHICLE_ID, ChatStep.PHOTO_CONFIRM, ChatStep.FREE_TEXT):
        session.symptom_text = "ドアの閉まりが悪い"
    for key, value in fields.items():
        setattr(session, key, value)
    return session


def make_deps(outputs: list[Any] | None = None, rag: Any = None, store: Any = None) -> DiagnosisDeps:
    return DiagnosisDeps(
        client=ReplayClient(outputs or []), rag=rag, store=store or FakeStore(), clock=lambda: NOW_TS
    )
