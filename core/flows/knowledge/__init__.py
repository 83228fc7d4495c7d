"""The knowledge interview and the shared knowledge base (spec 00 + 01).

The names below load on first use (PEP 562): importing the package (or one of its modules) does not
import the whole flow, so the shell starts without the heavy libraries a page may never need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.flows.lazy_exports import lazy_exports

if TYPE_CHECKING:
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
    from core.flows.knowledge.index_job import register_knowledge_tasks
    from core.flows.knowledge.interview import (
        KNOWLEDGE_FIELD_LABELS,
        KNOWLEDGE_FIELDS,
        MODE_LABELS,
        PHASE_LABELS,
        PHASES,
        TURN_JSON_NAME,
        entry_schema,
        turn_schema,
        wire_turn_schema,
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
    "TURN_JSON_NAME",
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
    "entry_schema",
    "export_entries",
    "find_entries",
    "interview_overview",
    "knowledge_stores",
    "last_turn",
    "next_demo_answer",
    "open_interview",
    "register_knowledge_tasks",
    "restore_entry",
    "restore_interview",
    "retry_turn",
    "run_turn",
    "save_draft",
    "seen_missing_items",
    "team_overview",
    "turn_schema",
    "update_duplicate",
    "wire_turn_schema",
]

# public name -> (module, name in that module)
_EXPORTS: dict[str, tuple[str, str]] = {
    "IndexReport": ("core.flows.knowledge.index", "IndexReport"),
    "InterviewArchived": ("core.flows.knowledge.turn", "InterviewArchived"),
    "InterviewOverview": ("core.flows.knowledge.analytics", "InterviewOverview"),
    "KNOWLEDGE_FIELDS": ("core.flows.knowledge.interview", "KNOWLEDGE_FIELDS"),
    "KNOWLEDGE_FIELD_LABELS": ("core.flows.knowledge.interview", "KNOWLEDGE_FIELD_LABELS"),
    "KnowledgeStoreError": ("core.flows.knowledge.stores", "KnowledgeStoreError"),
    "KnowledgeStores": ("core.flows.knowledge.stores", "KnowledgeStores"),
    "MODE_LABELS": ("core.flows.knowledge.interview", "MODE_LABELS"),
    "PHASES": ("core.flows.knowledge.interview", "PHASES"),
    "PHASE_LABELS": ("core.flows.knowledge.interview", "PHASE_LABELS"),
    "StaleEntryError": ("core.flows.knowledge.base", "StaleEntryError"),
    "TURN_JSON_NAME": ("core.flows.knowledge.interview", "TURN_JSON_NAME"),
    "TurnInput": ("core.flows.knowledge.turn", "TurnInput"),
    "TurnOutcome": ("core.flows.knowledge.turn", "TurnOutcome"),
    "archive_entry": ("core.flows.knowledge.base", "archive_entry"),
    "archive_interview": ("core.flows.knowledge.base", "archive_interview"),
    "archived_interviews": ("core.flows.knowledge.base", "archived_interviews"),
    "check_entry": ("core.flows.knowledge.base", "check_entry"),
    "clause_choices": ("core.flows.knowledge.base", "clause_choices"),
    "contract_type_choices": ("core.flows.knowledge.base", "contract_type_choices"),
    "current_entry": ("core.flows.knowledge.base", "current_entry"),
    "demo_opening": ("core.flows.knowledge.interviews", "demo_opening"),
    "draft_duplicates": ("core.flows.knowledge.base", "draft_duplicates"),
    "edit_entry": ("core.flows.knowledge.base", "edit_entry"),
    "entries_to_csv": ("core.flows.knowledge.export", "entries_to_csv"),
    "entries_to_docx": ("core.flows.knowledge.export", "entries_to_docx"),
    "entries_to_json": ("core.flows.knowledge.export", "entries_to_json"),
    "entries_to_markdown": ("core.flows.knowledge.export", "entries_to_markdown"),
    "entry_history": ("core.flows.knowledge.base", "entry_history"),
    "entry_schema": ("core.flows.knowledge.interview", "entry_schema"),
    "export_entries": ("core.flows.knowledge.export", "export_entries"),
    "find_entries": ("core.flows.knowledge.base", "find_entries"),
    "interview_overview": ("core.flows.knowledge.analytics", "interview_overview"),
    "knowledge_stores": ("core.flows.knowledge.stores", "knowledge_stores"),
    "last_turn": ("core.flows.knowledge.items", "last_turn"),
    "next_demo_answer": ("core.flows.knowledge.interviews", "next_demo_answer"),
    "open_interview": ("core.flows.knowledge.interviews", "open_interview"),
    "register_knowledge_tasks": ("core.flows.knowledge.index_job", "register_knowledge_tasks"),
    "restore_entry": ("core.flows.knowledge.base", "restore_entry"),
    "restore_interview": ("core.flows.knowledge.base", "restore_interview"),
    "retry_turn": ("core.flows.knowledge.turn", "retry_turn"),
    "run_turn": ("core.flows.knowledge.turn", "run_turn"),
    "save_draft": ("core.flows.knowledge.base", "save_draft"),
    "seen_missing_items": ("core.flows.knowledge.items", "seen_missing_items"),
    "team_overview": ("core.flows.knowledge.analytics", "team_overview"),
    "turn_schema": ("core.flows.knowledge.interview", "turn_schema"),
    "update_duplicate": ("core.flows.knowledge.base", "update_duplicate"),
    "wire_turn_schema": ("core.flows.knowledge.interview", "wire_turn_schema"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
