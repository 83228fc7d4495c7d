"""One's own reviews and threads, managed from the page: register or edit through the form,
rename, delete (a review with its threads), without duplicates. Every message is Japanese for the page.

Deleting a review deletes its threads and their messages too: the page first names how many threads go with
it and asks for an explicit confirmation (`review_delete_warning`). The bundled sample cannot be changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.flows.review_chat.material import (
    MaterialDraft,
    build_record,
    check_draft,
    clean_draft,
    draft_from_record,
)
from core.flows.review_chat.notices import DUPLICATE, Notice, duplicate_notice
from core.flows.review_chat.threads import repository_of
from core.store.review.manage import ManagedReviewRepository
from core.store.review.repository import ReviewRepository
from core.text.safe import CHANGED_NOTICE

REVIEW_TITLE_CHARS = 200  # schemas/review_record.schema.json title maxLength
THREAD_TITLE_CHARS = 100
NOT_OWN = "このレビューは変更できません（サンプルか、ほかの人のレビューです）。"


def managed(repo: ReviewRepository) -> ManagedReviewRepository:
    """The same person's repository with the management queries."""
    return repo if isinstance(repo, ManagedReviewRepository) else repository_of(repo)


@dataclass
class SaveResult:
    """The form saved (review_id and a notice) or refused (the problems, in Japanese, nothing stored)."""

    review_id: int | None = None
    errors: list[str] = field(default_factory=list)
    notice: Notice | None = None


def save_material(repo: ReviewRepository, draft: MaterialDraft, review_id: int | None = None) -> SaveResult:
    """Register the form as the person's review (`review_id` None), or update their review `review_id` in
    place (its threads keep working). The same content already stored: a new registration opens that review;
    an edit is refused."""
    draft, changed = clean_draft(draft)
    errors = check_draft(draft)
    if errors:
        return SaveResult(errors=errors)
    cleaned = CHANGED_NOTICE if changed else ""
    record, store = build_record(draft), managed(repo)
    if review_id is None:
        stored_id, created = store.add_own_review(record)
        if not created:
            existing = store.get_review(stored_id)
            return SaveResult(stored_id, [], duplicate_notice(existing.title if existing else record.title))
        return SaveResult(stored_id, [], ("success", f"「{record.title}」を登録しました。{cleaned}"))
    outcome, found = store.update_review(review_id, record)
    if outcome == "not_found":
        return SaveResult(errors=[NOT_OWN])
    if outcome == "duplicate":
        title = found["title"] if found else ""
        return SaveResult(errors=[f"{DUPLICATE}（「{title}」）。変更を保存できませんでした。"])
    return SaveResult(review_id, [], ("success", f"「{record.title}」を更新しました。{cleaned}"))


def editable_draft(repo: ReviewRepository, review_id: int) -> MaterialDraft | None:
    """The person's own review as a form to edit, or None (the sample, another person's, or gone)."""
    store = managed(repo)
    record = store.get_review(review_id) if store.is_own_review(review_id) else None
    return draft_from_record(record) if record is not None else None


def is_own_review(repo: ReviewRepository, review_id: int) -> bool:
    """Whether the person may edit, rename and delete the review."""
    return managed(repo).is_own_review(review_id)


def _title_problem(title: str, limit: int) -> str | None:
    if not title.strip():
        return "名前を入力してください。"
    if len(title.strip()) > limit:
        return f"名前は {limit} 文字以内にしてください。"
    return None


def rename_review(repo: ReviewRepository, review_id: int, title: str) -> str | None:
    """Rename the person's review; the problem in Japanese, or None when renamed."""
    problem = _title_problem(title, REVIEW_TITLE_CHARS)
    if problem is None and not managed(repo).rename_review(review_id, title.strip()):
        problem = NOT_OWN
    return problem


def review_delete_warning(repo: ReviewRepository, review_id: int) -> str:
    """The confirmation text: what deleting the review takes with it."""
    count = managed(repo).count_threads(review_id)
    threads = f"このレビューのスレッド {count} 件と、その会話もすべて削除されます。" if count else ""
    return f"このレビュー（問題文・答案・講評）を削除します。{threads}元に戻せません。"


def delete_review(repo: ReviewRepository, review_id: int) -> Notice:
    """Delete the person's review with its threads (after the page's confirmation)."""
    deleted = managed(repo).delete_review(review_id)
    if deleted is None:
        return ("error", NOT_OWN)
    threads = f"（スレッド {deleted} 件も削除）" if deleted else ""
    return ("success", f"レビューを削除しました{threads}。")


def rename_thread(repo: ReviewRepository, thread_id: int, title: str) -> str | None:
    """Rename the person's thread; the problem in Japanese, or None when renamed."""
    problem = _title_problem(title, THREAD_TITLE_CHARS)
    if problem is None and not managed(repo).rename_thread(thread_id, title.strip()):
        problem = "このスレッドは見つかりません（削除されたか、ほかの人のスレッドです）。"
    return problem


def delete_thread(repo: ReviewRepository, thread_id: int) -> Notice:
    """Delete the person's thread and its messages (after the page's confirmation)."""
    if managed(repo).delete_thread(thread_id):
        return ("success", "スレッドを削除しました。")
    return ("error", "このスレッドは見つかりません（削除されたか、ほかの人のスレッドです）。")
