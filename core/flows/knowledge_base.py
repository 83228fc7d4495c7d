"""The knowledge base as the pages use it: save the interview's draft, browse, edit with versions (spec 01 §7.2).

Every function takes the repository and raises KnowledgeStoreError when the database fails. The knowledge
base is shared by the team; every save or edit is recorded with its author, the signed-in person (issue #14).
A save of an entry that someone else saved since it was opened raises StaleEntryError (nothing is written;
it carries both versions for the page to show) (issue #14 item 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.flows.knowledge_stores import store_errors
from core.people import Person
from core.store.knowledge_base import KnowledgeBaseRepository, StaleEntryError

UPDATED_FROM_INTERVIEW = "聞き取りから更新"

__all__ = [
    "StaleEntryError",
    "contract_type_choices",
    "current_entry",
    "edit_entry",
    "entry_history",
    "find_entries",
    "save_draft",
]


def save_draft(
    base: KnowledgeBaseRepository,
    entry: Mapping[str, Any],
    *,
    by: Person,
    interview_id: str | None,
    saved_entry_id: int | None,
    saved_version: int | None = None,
) -> tuple[int, int]:
    """Save the interview's (edited) draft as `by`; returns (entry id, version).

    The first save creates an entry linked to the interview; saving again (also after a resume) adds a
    version to that entry instead of a duplicate. With `saved_version` (the version this interview saved
    or loaded last), an entry edited by someone else since raises StaleEntryError.
    """
    with store_errors():
        if saved_entry_id is not None and base.get_entry(saved_entry_id) is not None:
            return saved_entry_id, base.update_entry(
                saved_entry_id, entry, by=by, note=UPDATED_FROM_INTERVIEW, expected_version=saved_version
            )
        return base.save_entry(entry, by=by, source_interview_id=interview_id), 1


def contract_type_choices(base: KnowledgeBaseRepository) -> list[str]:
    """The contract types present in the knowledge base (the filter's options)."""
    with store_errors():
        return base.contract_types()


def find_entries(
    base: KnowledgeBaseRepository, *, search: str = "", contract_types: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Entries matching a keyword (any field) and contract types, newest edit first."""
    with store_errors():
        return base.list_entries(search=search, contract_types=contract_types)


def edit_entry(
    base: KnowledgeBaseRepository,
    entry_id: int,
    entry: Mapping[str, Any],
    *,
    by: Person,
    note: str = "",
    expected_version: int | None = None,
) -> int:
    """Save an edit by `by` as a new version; returns the version (unchanged when nothing changed).

    `expected_version`: the version the editor opened; if the entry has moved on, StaleEntryError.
    """
    with store_errors():
        return base.update_entry(entry_id, entry, by=by, note=note, expected_version=expected_version)


def current_entry(base: KnowledgeBaseRepository, entry_id: int) -> dict[str, Any] | None:
    """The entry as stored now (None when it is gone)."""
    with store_errors():
        return base.get_entry(entry_id)


def entry_history(base: KnowledgeBaseRepository, entry_id: int) -> list[dict[str, Any]]:
    """Every version of an entry, oldest first."""
    with store_errors():
        return base.entry_versions(entry_id)
