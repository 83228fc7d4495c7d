"""Typed shapes of the JSON documents in schemas/*.schema.json, one TypedDict per schema (and per nested object).

The schemas stay the source of truth (the guard validates against them); these types let code that reads a
validated document say which one it holds. tests/core/test_schema_shapes.py checks that every TypedDict has
exactly its schema's properties, with `required` keys required and the others NotRequired, and that the
Literals match the schema enums. Property names that are Python keywords (`from`) use the functional syntax.
"""

# No `from __future__ import annotations` here: on Python 3.11 TypedDict only sees NotRequired[...] in
# annotations that are evaluated, not in strings.

from typing import Any, Literal, NotRequired, TypedDict

# -- spec 04 vehicle diagnosis -----------------------------------------------------------------------------

DiagnosticAction = Literal["ask_question", "clarify_term", "provide_answer", "escalate", "spec_answer"]
UrgencyFlag = Literal["none", "low", "medium", "high", "critical"]
UrgencyLevel = Literal["low", "medium", "high", "critical"]
ManualCoverage = Literal["covered", "partially_covered", "not_covered"]
VisitUrgency = Literal["immediate", "today", "this_week", "when_convenient"]


class DiagnosticResponse(TypedDict):
    """schemas/diagnostic_response: one diagnostic-loop turn (spec 04 §9 DIAGNOSTIC_SCHEMA)."""

    action: DiagnosticAction
    message: str
    urgency_flag: UrgencyFlag
    reasoning: str
    choices: list[str] | None
    can_drive: bool | None
    confidence_to_answer: float
    rewritten_query: str
    question_topic: str
    manual_coverage: ManualCoverage
    visit_urgency: VisitUrgency | None
    term_to_clarify: str | None


class SpecClassification(TypedDict):
    """schemas/spec_classification: is the symptom the car's normal behaviour (spec 04 §5)."""

    is_spec: bool
    confidence: Literal["high", "medium", "low"]
    explanation: str
    manual_reference: str | None
    reasoning: str


class Urgency(TypedDict):
    """schemas/urgency: the LLM's urgency assessment (spec 04 §9 URGENCY_SCHEMA)."""

    level: UrgencyLevel
    can_drive: bool
    visit_urgency: VisitUrgency
    reasons: list[str]
    recommendation: str


# -- spec 00 + 01 knowledge interview ----------------------------------------------------------------------


class KnowledgeLLMEntry(TypedDict):
    """schemas/knowledge_llm_entry: one contract-review knowledge entry (spec 00: six required strings)."""

    contract_type: str
    knowledge_title: str
    target_clause: str
    review_points: str
    action_plan: str
    clause_sample: str


class KnowledgeControl(TypedDict):
    schema_version: Literal["1.0"]
    mode: Literal["interview", "clarify", "finalize"]


class KnowledgeState(TypedDict):
    phase: Literal["collect_case", "organize_risks", "draft_knowledge", "review_knowledge"]
    missing_info: list[str]


class KnowledgeLLMTurn(TypedDict):
    """schemas/knowledge_llm_turn: one interview turn (spec 01 §3.3; knowledge_json is free-form there)."""

    control: KnowledgeControl
    state: KnowledgeState
    assistant_message: str
    knowledge_json: dict[str, Any] | None


# -- spec 02 review chat -----------------------------------------------------------------------------------


class ReviewItem(TypedDict):
    """One review item; the schema asks for `title` or `description` (anyOf), so each is NotRequired."""

    title: NotRequired[str]
    description: NotRequired[str]
    paragraph_numbers: NotRequired[list[int]]
    paragraph_number: NotRequired[int]


class ReviewJson(TypedDict):
    overall_review: str
    score: NotRequired[float | str | None]
    strengths: NotRequired[list[ReviewItem]]
    weaknesses: NotRequired[list[ReviewItem]]
    important_points: NotRequired[list[ReviewItem]]
    future_considerations: NotRequired[list[ReviewItem]]


class ReviewRecordFile(TypedDict):
    """schemas/review_record: a review as imported or exported (the dataclass is review_chat.models.ReviewRecord)."""

    title: str
    question_text: str
    purpose_text: NotRequired[str]
    grading_impression_text: NotRequired[str]
    answer_text: str
    review_json: ReviewJson


# -- spec 03 companion memory ------------------------------------------------------------------------------

AffectLabel = Literal["joy", "sadness", "anger", "fear", "neutral"]


class MemoryReflection(TypedDict):
    """schemas/memory_reflection: the persona's reflection on one episode."""

    reflection_text: str
    persona_affect_label: AffectLabel
    persona_affect_intensity: float
    topic_tags: list[str]
    salience: float
    confidence: float


class ResponsePolicy(TypedDict):
    cooperation: float
    refusal_bias: float
    refusal_allowed: bool


class MemoryPersonaAffect(MemoryReflection):
    """schemas/memory_persona_affect: the hidden trailer after a reply (a reflection plus a response policy)."""

    persona_response_policy: ResponsePolicy


class Entity(TypedDict):
    type_label: str
    roles: list[str]
    name: str
    aliases: list[str]
    confidence: float


class Relation(TypedDict):
    src: str
    relation: str
    dst: str
    confidence: float
    evidence: str


class MemoryEntities(TypedDict):
    """schemas/memory_entities: entity and relation extraction."""

    entities: list[Entity]
    relations: list[Relation]


class EntityRef(TypedDict):
    type_label: str
    name: str


Validity = TypedDict("Validity", {"from": int | None, "to": int | None})


class Fact(TypedDict):
    subject: EntityRef | None
    predicate: str
    object_text: str
    object: EntityRef | None
    confidence: float
    validity: Validity


class MemoryFacts(TypedDict):
    """schemas/memory_facts: stable facts."""

    facts: list[Fact]


class OpenLoop(TypedDict):
    due_at: int | None
    loop_text: str
    confidence: float


class MemoryLoops(TypedDict):
    """schemas/memory_loops: open loops (promises, plans) with an optional due time."""

    loops: list[OpenLoop]


class MemoryExtraction(TypedDict):
    """schemas/memory_extraction: entities, facts and loops in one call (the three spec shapes as properties)."""

    entities: MemoryEntities
    facts: MemoryFacts
    loops: MemoryLoops


class UnitReason(TypedDict):
    """A memory unit cited by a summary, and why."""

    unit_id: int
    why: str


class MemoryBondSummary(TypedDict):
    """schemas/memory_bond_summary."""

    summary_text: str
    key_events: list[UnitReason]
    bond_state: str


class MemoryPersonSummary(TypedDict):
    """schemas/memory_person_summary."""

    summary_text: str
    favorability_score: float
    favorability_reasons: list[UnitReason]
    key_events: list[UnitReason]
    notes: str | None


class MemoryTopicSummary(TypedDict):
    """schemas/memory_topic_summary."""

    summary_text: str
    key_events: list[UnitReason]
    notes: str | None


# Schema name (file name without .schema.json) -> the TypedDict of its documents.
SCHEMA_TYPES: dict[str, type] = {
    "diagnostic_response": DiagnosticResponse,
    "knowledge_llm_entry": KnowledgeLLMEntry,
    "knowledge_llm_turn": KnowledgeLLMTurn,
    "memory_bond_summary": MemoryBondSummary,
    "memory_entities": MemoryEntities,
    "memory_extraction": MemoryExtraction,
    "memory_facts": MemoryFacts,
    "memory_loops": MemoryLoops,
    "memory_person_summary": MemoryPersonSummary,
    "memory_persona_affect": MemoryPersonaAffect,
    "memory_reflection": MemoryReflection,
    "memory_topic_summary": MemoryTopicSummary,
    "review_record": ReviewRecordFile,
    "spec_classification": SpecClassification,
    "urgency": Urgency,
}
