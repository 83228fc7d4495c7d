"""The knowledge base as the pages use it: save the interview's draft, browse, edit with versions (spec 01 §7.2).

Every function takes the repository and raises KnowledgeStoreError when the database fails. The knowledge
base is shared by the team; every save or edit is recorded with its author, the signed-in person.
A save of an entry that someone else saved since it was opened raises StaleEntryError (nothing is written;
it carries both versions for the page to show).

every save, edit, archive and restore keeps the vector index (`index`, core.flows.knowledge.index) in
step; an index that cannot be written is caught up by its reconciliation, never fails the save. A new entry's
near-duplicates (`draft_duplicates`) are asked about before it is saved; archived entries and interviews are
hidden from lists, searches and lookups and keep their versions and turns.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from core.debuglog.kept_going import kept_going
from core.flows.knowledge.analytics import InterviewSummary, interview_summaries
from core.flows.knowledge.index import KnowledgeIndex, SimilarEntry
from core.flows.knowledge.interview import KNOWLEDGE_FIELD_LABELS
from core.flows.knowledge.stores import store_errors
from core.people import Person
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository, StaleEntryError
from core.store.knowledge.interviews import KnowledgeRepository
from core.text.safe import FIELD_MAX_CHARS, TITLE_MAX_CHARS, safe_fields

log = logging.getLogger(__name__)

UPDATED_FROM_INTERVIEW = "聞き取りから更新"
UPDATED_AS_DUPLICATE = "類似の聞き取りから更新"
FIELD_LIMITS = {
    name: TITLE_MAX_CHARS
    if name in ("contract_type", "knowledge_title", "target_clause")
    else FIELD_MAX_CHARS
    for name in ENTRY_FIELDS
}

__all__ = [
    "SimilarEntry",
    "StaleEntryError",
    "archive_entry",
    "archive_interview",
    "archived_interviews",
    "check_entry",
    "clause_choices",
    "contract_type_choices",
    "current_entry",
    "draft_duplicates",
    "edit_entry",
    "entry_history",
    "find_entries",
    "restore_entry",
    "restore_interview",
    "save_draft",
    "update_duplicate",
]


def check_entry(entry: Mapping[str, Any]) -> tuple[dict[str, str], bool, list[str]]:
    """The six fields made safe before a save (core.text.safe): (cleaned fields, whether cleaning changed what
    was typed — the page says 「制御文字を取り除きました」, Japanese problems such as a field too long)."""
    return safe_fields(
        {k: entry.get(k, "") or "" for k in ENTRY_FIELDS}, KNOWLEDGE_FIELD_LABELS, FIELD_LIMITS
    )


def save_draft(
    base: KnowledgeBaseRepository,
    entry: Mapping[str, Any],
    *,
    by: Person,
    interview_id: str | None,
    saved_entry_id: int | None,
    saved_version: int | None = None,
    index: KnowledgeIndex | None = None,
) -> tuple[int, int]:
    """Save the interview's (edited) draft as `by`; returns (entry id, version).

    The first save creates an entry linked to the interview; saving again (also after a resume) adds a
    version to that entry instead of a duplicate (an archived one stays as it is: a new entry is saved).
    With `saved_version` (the version this interview saved or loaded last), an entry edited by someone else
    since raises StaleEntryError. The entry is (re)indexed in `index`.
    """
    with store_errors():
        saved = base.get_entry(saved_entry_id) if saved_entry_id is not None else None
        if saved is not None and saved["archived_at"] is None:
            result = (
                saved["id"],
                base.update_entry(
                    saved["id"], entry, by=by, note=UPDATED_FROM_INTERVIEW, expected_version=saved_version
                ),
            )
        else:
            result = base.save_entry(entry, by=by, source_interview_id=interview_id), 1
    _reindex(index, result[0])
    return result


def _reindex(index: KnowledgeIndex | None, entry_id: int) -> None:
    """Bring an entry's vector up to date; a failure is left to the index's reconciliation."""
    if index is None:
        return
    try:
        index.index(entry_id)
    except Exception:  # noqa: BLE001 - chromadb raises many types; reconcile_knowledge_index catches up
        kept_going(log, f"knowledge entry {entry_id}: vector not updated, left to the reconcile")


def draft_duplicates(
    index: KnowledgeIndex | None, entry: Mapping[str, Any], *, saved_entry_id: int | None
) -> list[SimilarEntry]:
    """Saved entries the draft nearly duplicates, asked about before a NEW entry is saved (none when
    the interview already saved one: saving updates that entry). Empty when the lookup fails: saving goes on."""
    if index is None or saved_entry_id is not None:
        return []
    try:
        return index.near_duplicates(entry)
    except Exception:  # noqa: BLE001 - SQLAlchemy and chromadb raise many types; the save must not be blocked
        kept_going(log, "near-duplicate lookup failed; saving without asking")
        return []


def update_duplicate(
    base: KnowledgeBaseRepository,
    duplicate: Mapping[str, Any],
    entry: Mapping[str, Any],
    *,
    by: Person,
    index: KnowledgeIndex | None = None,
) -> int:
    """「既存を更新する」: the draft becomes a new version of the near-duplicate `duplicate` (the stored row the
    person was shown), compare-and-set against its version: StaleEntryError when it changed since."""
    version = edit_entry(
        base,
        int(duplicate["id"]),
        entry,
        by=by,
        note=UPDATED_AS_DUPLICATE,
        expected_version=int(duplicate["version"]),
    )
    _reindex(index, int(duplicate["id"]))
    return version


def contract_type_choices(base: KnowledgeBaseRepository) -> list[str]:
    """The contract types present in the knowledge base (the filter's options)."""
    with store_errors():
        return base.contract_types()


def clause_choices(base: KnowledgeBaseRepository, contract_types: Sequence[str] = ()) -> list[str]:
    """The target clauses of the active entries (of `contract_types` when given): the clause filter's options."""
    with store_errors():
        return base.clauses(contract_types)


def find_entries(
    base: KnowledgeBaseRepository,
    *,
    search: str = "",
    contract_types: Sequence[str] = (),
    clause: str = "",
    archived: bool = False,
    order: str = "relevance",
) -> list[dict[str, Any]]:
    """Entries matching a keyword (any field, Japanese-normalized), contract types and a clause; active ones, or
    the archived ones only; `order` "relevance" (then newest), "newest" or "oldest" (update time)."""
    with store_errors():
        return base.list_entries(
            search=search, contract_types=contract_types, clause=clause, archived=archived, order=order
        )


def archive_entry(
    base: KnowledgeBaseRepository, entry_id: int, *, by: Person, index: KnowledgeIndex | None = None
) -> bool:
    """Archive an entry as `by` (hidden from lists, searches and similar lookups; versions kept); its vector is
    removed. False when it was archived already."""
    with store_errors():
        changed = base.set_archived(entry_id, True, by=by)
    _reindex(index, entry_id)
    return changed


def restore_entry(
    base: KnowledgeBaseRepository, entry_id: int, *, by: Person, index: KnowledgeIndex | None = None
) -> bool:
    """Restore an archived entry (「復元」); it is indexed again. False when it was not archived."""
    with store_errors():
        changed = base.set_archived(entry_id, False, by=by)
    _reindex(index, entry_id)
    return changed


def archive_interview(interviews: KnowledgeRepository, interview_id: str) -> bool:
    """Archive one of the person's interviews (hidden from their list; turns kept). KeyError: not theirs."""
    with store_errors():
        return interviews.set_archived(interview_id, True)


def restore_interview(interviews: KnowledgeRepository, interview_id: str) -> bool:
    """Restore one of the person's archived interviews. KeyError: not theirs."""
    with store_errors():
        return interviews.set_archived(interview_id, False)


def archived_interviews(interviews: KnowledgeRepository) -> list[InterviewSummary]:
    """The person's archived interviews, newest first."""
    with store_errors():
        return interview_summaries(interviews.list_interviews(archived=True))


def edit_entry(
    base: KnowledgeBaseRepository,
    entry_id: int,
    entry: Mapping[str, Any],
    *,
    by: Person,
    note: str = "",
    expected_version: int | None = None,
    index: KnowledgeIndex | None = None,
) -> int:
    """Save an edit by `by` as a new version; returns the version (unchanged when nothing changed).

    `expected_version`: the version the editor opened; if the entry has moved on, StaleEntryError. The entry
    is re-indexed in `index`.
    """
    with store_errors():
        version = base.update_entry(entry_id, entry, by=by, note=note, expected_version=expected_version)
    _reindex(index, entry_id)
    return version


def current_entry(base: KnowledgeBaseRepository, entry_id: int) -> dict[str, Any] | None:
    """The entry as stored now (None when it is gone)."""
    with store_errors():
        return base.get_entry(entry_id)


def entry_history(base: KnowledgeBaseRepository, entry_id: int) -> list[dict[str, Any]]:
    """Every version of an entry, oldest first."""
    with store_errors():
        return base.entry_versions(entry_id)
