"""Reviews and threads in the store, as the page needs them: the sample, the lists, a thread reopened as chat
items, an imported review file. The page reaches the review store only through these functions, on a
repository bound to the signed-in person: another person's review or thread is never listed and
opens as not found."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import Engine

from core.clock import Clock, utc_now
from core.flows.chat_item import ChatItem, ChatStatus, assistant_item, user_item
from core.flows.review_chat.notices import Notice, duplicate_notice, imported
from core.flows.review_chat.records import SAMPLE_KEY, load_sample_review, read_review_file
from core.people import Person
from core.store.review.manage import ManagedReviewRepository
from core.store.review.models import ChatMessage, ReviewRecord
from core.store.review.repository import ReviewRepository


def repository(engine: Engine, person: Person, clock: Clock = utc_now) -> ManagedReviewRepository:
    """The review repository of `person` on the app's engine (with the management queries)."""
    return ManagedReviewRepository(engine, clock, owner_id=person.id)


def sample_review_id(repo: ReviewRepository) -> int:
    """The id of the bundled sample review, stored on first use."""
    return repo.ensure_sample(load_sample_review(), SAMPLE_KEY)


@dataclass(frozen=True, slots=True)
class ReviewListing:
    """A review in the page's picker: the shared sample (its `sample_key`) or one of the person's own."""

    id: int
    title: str
    sample_key: str | None


@dataclass(frozen=True, slots=True)
class ThreadListing:
    """A stored thread of a review in the page's picker."""

    id: int
    title: str
    updated_at: int  # UTC epoch seconds of its last activity
    turns: int


def list_reviews(repo: ReviewRepository) -> list[ReviewListing]:
    """The shared sample and the person's imported reviews, oldest first."""
    return [ReviewListing(r["id"], r["title"], r["sample_key"]) for r in repo.list_reviews()]


def get_review(repo: ReviewRepository, review_id: int) -> ReviewRecord | None:
    """A stored review (spec 02 `_get_review_chat_context_by_review_id`: question, 出題趣旨, 採点実感, review
    JSON, answer), or None."""
    return repo.get_review(review_id)


def review_of_thread(repo: ReviewRepository, thread_id: str | int) -> ReviewRecord | None:
    """The review a thread of this person is about (a replay of the thread runs on it), or None when the
    id is not one of their threads."""
    try:
        thread = repo.get_thread(int(thread_id))
    except ValueError:
        return None
    return repo.get_review(thread["review_id"]) if thread is not None else None


def list_threads(repo: ReviewRepository, review_id: int) -> list[ThreadListing]:
    """Threads of a review, newest activity first."""
    return [
        ThreadListing(t["id"], t["title"], t["updated_at"], t["turns"]) for t in repo.list_threads(review_id)
    ]


def thread_items(messages: Iterable[ChatMessage]) -> list[ChatItem]:
    """Stored messages as chat items ("done", or "truncated" for a reply stored cut short); an assistant
    message's stored meta is its turn info."""
    items: list[ChatItem] = []
    for m in messages:
        if m.role == "user":
            items.append(user_item(m.content, turn=m.turn, status="done"))
        elif m.meta:
            status: ChatStatus = "truncated" if m.meta.get("truncated") else "done"
            items.append(assistant_item(m.content, turn=m.turn, status=status, info=m.meta))
        else:
            items.append(assistant_item(m.content, turn=m.turn))
    return items


@dataclass
class OpenedThread:
    """A stored thread to resume (spec 02: the thread columns are read again at its next turn)."""

    thread_id: int
    review_id: int
    items: list[ChatItem]


def open_thread(repo: ReviewRepository, thread_id: int) -> OpenedThread | None:
    """A stored thread of the person with its messages as chat items, or None when it does not exist or is
    another person's (a deep link `?review_thread=ID` to it reads as not found)."""
    thread = repo.get_thread(thread_id)
    if thread is None:
        return None
    return OpenedThread(thread_id, thread["review_id"], thread_items(repo.load_messages(thread_id)))


@dataclass
class ImportResult:
    """An uploaded review file: stored (review_id and a notice) or refused (the problems, in Japanese)."""

    review_id: int | None = None
    errors: list[str] = field(default_factory=list)
    notice: Notice | None = None
    duplicate: bool = False  # the same content was already stored: review_id is that review


def import_review(repo: ReviewRepository, raw: bytes) -> ImportResult:
    """Check an uploaded review file (schemas/review_record.schema.json) and store it when usable; the same
    content imported again (question + answer + review JSON) returns the review already stored."""
    check = read_review_file(raw)
    if check.record is None:
        return ImportResult(errors=check.errors)
    store = repo if isinstance(repo, ManagedReviewRepository) else repository_of(repo)
    review_id, created = store.add_own_review(check.record)
    if not created:
        existing = store.get_review(review_id)
        title = existing.title if existing else check.record.title
        return ImportResult(review_id, [], duplicate_notice(title), duplicate=True)
    return ImportResult(review_id, [], imported(check.record.title, check.warnings))


def repository_of(repo: ReviewRepository) -> ManagedReviewRepository:
    """The same person's repository with the management queries."""
    return ManagedReviewRepository(repo.engine, repo.clock, owner_id=repo.owner_id)
