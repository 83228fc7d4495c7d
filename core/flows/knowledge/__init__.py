"""The knowledge interview and the shared knowledge base (spec 00 + 01)."""

from core.flows.knowledge.analytics import InterviewOverview, interview_overview, team_overview
from core.flows.knowledge.base import (
    StaleEntryError,
    archive_entry,
    archive_interview,
    archived_interviews,
    check_entry,
    clause_choices,
    contract_type_choices,
    current_entry,
    draft_duplicates,
    edit_entry,
    entry_history,
    find_entries,
    restore_entry,
    restore_interview,
    save_draft,
    update_duplicate,
)
from core.flows.knowledge.export import (
    entries_to_csv,
    entries_to_docx,
    entries_to_json,
    entries_to_markdown,
    export_entries,
)
from core.flows.knowledge.index import IndexReport
from core.flows.knowledge.interview import (
    KNOWLEDGE_FIELD_LABELS,
    KNOWLEDGE_FIELDS,
    MODE_LABELS,
    PHASE_LABELS,
    PHASES,
)
from core.flows.knowledge.interviews import demo_opening, next_demo_answer, open_interview
from core.flows.knowledge.items import last_turn, seen_missing_items
from core.flows.knowledge.stores import KnowledgeStoreError, KnowledgeStores, knowledge_stores
from core.flows.knowledge.turn import InterviewArchived, TurnInput, TurnOutcome, retry_turn, run_turn

__all__ = [
    "KNOWLEDGE_FIELDS",
    "KNOWLEDGE_FIELD_LABELS",
    "MODE_LABELS",
    "PHASES",
    "PHASE_LABELS",
    "IndexReport",
    "InterviewArchived",
    "InterviewOverview",
    "KnowledgeStoreError",
    "KnowledgeStores",
    "StaleEntryError",
    "TurnInput",
    "TurnOutcome",
    "archive_entry",
    "archive_interview",
    "archived_interviews",
    "check_entry",
    "clause_choices",
    "contract_type_choices",
    "current_entry",
    "demo_opening",
    "draft_duplicates",
    "edit_entry",
    "entries_to_csv",
    "entries_to_docx",
    "entries_to_json",
    "entries_to_markdown",
    "entry_history",
    "export_entries",
    "find_entries",
    "interview_overview",
    "knowledge_stores",
    "last_turn",
    "next_demo_answer",
    "open_interview",
    "restore_entry",
    "restore_interview",
    "retry_turn",
    "run_turn",
    "save_draft",
    "seen_missing_items",
    "team_overview",
    "update_duplicate",
]
