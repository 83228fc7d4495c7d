"""Plain records of the review chat store: a review, a thread's four spec columns (spec 02 DB（Thread）), a message.

They live with the store (which returns them); `core.flows.review_chat.models` re-exports them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from core.text.safe import clean_text, safe_value


@dataclass
class ReviewRecord:
    """One review: question, 出題趣旨, 採点実感, the review JSON and the `$$[N]`-marked answer."""

    title: str
    question_text: str
    review_json: dict[str, Any]
    answer_text: str
    purpose_text: str = ""
    grading_impression_text: str = ""
    id: int | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The record as schemas/review_record.schema.json describes it (import/export form)."""
        return {
            "title": self.title,
            "question_text": self.question_text,
            "purpose_text": self.purpose_text,
            "grading_impression_text": self.grading_impression_text,
            "answer_text": self.answer_text,
            "review_json": self.review_json,
        }

    def content_hash(self) -> str:
        """The dedup key of this review's content (`content_hash`)."""
        return content_hash(self.question_text, self.answer_text, self.review_json)


def safe_record(record: ReviewRecord) -> ReviewRecord:
    """The record with every text and every string of its review JSON made safe for storage (core.text.safe);
    its content hash is taken of this form."""
    review = safe_value(record.review_json)
    return replace(
        record,
        title=clean_text(record.title)[0],
        question_text=clean_text(record.question_text)[0],
        answer_text=clean_text(record.answer_text)[0],
        purpose_text=clean_text(record.purpose_text)[0],
        grading_impression_text=clean_text(record.grading_impression_text)[0],
        review_json=review if isinstance(review, dict) else {},
    )


def _normalized(text: str) -> str:
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").strip()


def content_hash(question_text: str, answer_text: str, review_json: Any) -> str:
    """sha256 (hex) of the normalized JSON of question + answer + review JSON: line endings unified, outer
    space stripped, keys sorted. Title, 出題趣旨 and 採点実感 do not count (a renamed copy is the same review)."""
    canonical = json.dumps(
        {
            "question_text": _normalized(question_text),
            "answer_text": _normalized(answer_text),
            "review_json": review_json,
        },
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass
class ThreadState:
    """spec 02 DB（Thread）: conversation_summary, summary_up_to_turn, last_section_* columns."""

    conversation_summary: str = ""
    summary_up_to_turn: int = 0
    last_section_mention_turn: int | None = None
    last_section_paragraph_numbers: str | None = None  # JSON array text, e.g. "[1,3,5]"

    def stored_paragraph_numbers(self) -> list[int]:
        """The numbers in `last_section_paragraph_numbers` (empty when unset or unreadable)."""
        if not self.last_section_paragraph_numbers:
            return []
        try:
            value = json.loads(self.last_section_paragraph_numbers)
        except ValueError:
            return []
        if not isinstance(value, list):
            return []
        return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]


class ThreadRecord(TypedDict):
    """A stored thread as `ReviewRepository.get_thread` returns it."""

    id: int
    review_id: int
    title: str
    state: ThreadState


@dataclass
class ChatMessage:
    """A stored message of a thread (user/assistant only; the context is never stored)."""

    role: str
    content: str
    turn: int
    meta: dict[str, Any] = field(default_factory=dict)
