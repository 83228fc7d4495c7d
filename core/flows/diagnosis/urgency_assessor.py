"""UrgencyAssessor (spec 04 §6): keyword rules, then the LLM with URGENCY_SCHEMA, merged (higher wins)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.contracts.schema_types import Urgency
from core.contracts.schemas import load_schema
from core.flows.diagnosis.catalog import vehicle_kind
from core.flows.diagnosis.constants import DANGER_CONTENT_TYPES, FLOW_TAG
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import SessionState
from core.flows.diagnosis.prompting import build_urgency_messages
from core.flows.diagnosis.urgency import UrgencyResult, merge_urgency
from core.flows.diagnosis.urgency_fast_path import fast_urgency_check
from core.guard.json_guard import GuardResult, guarded_json


@dataclass
class UrgencyAssessment:
    result: UrgencyResult
    recommendation: str
    keyword: UrgencyResult
    llm: UrgencyResult | None
    guard: GuardResult[Any]


def assess_urgency(session: SessionState, deps: DiagnosisDeps) -> UrgencyAssessment:
    """spec 04 §6 UrgencyAssessor.assess(): keyword check, LLM check with RAG warnings, merge."""
    keyword = fast_urgency_check(
        session.all_symptom_text, deps.urgency_judge, vehicle_kind(session.vehicle_id)
    )
    warnings = [
        s
        for s in session.last_rag_sources
        if s.get("has_warning") or s.get("content_type") in DANGER_CONTENT_TYPES
    ]
    guard = guarded_json(
        deps.client,
        build_urgency_messages(session, keyword, warnings),
        load_schema("urgency"),
        name="urgency",
        sink=deps.sink,
        tags={"flow": FLOW_TAG, "step": "urgency_check"},
    )
    llm = None
    recommendation = ""
    if guard.ok:
        data: Urgency = guard.value
        llm = UrgencyResult(data["level"], data["can_drive"], data["visit_urgency"], list(data["reasons"]))
        recommendation = data["recommendation"]
    return UrgencyAssessment(merge_urgency(keyword, llm), recommendation, keyword, llm, guard)
