"""Replaying a review-chat thread (core.flows.replaying): each recorded question through the real turn, on
the thread's own review (copied into the replay's store) or the bundled sample; compared on text only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from core.debuglog.events import DebugSink
from core.flows.chat_item import ChatItem, history, user_item
from core.flows.replaying import Runner
from core.flows.review_chat.chat_turn import run_turn
from core.flows.review_chat.models import ReviewRecord
from core.flows.review_chat.threads import repository, sample_review_id
from core.llm.base import LLMClient
from core.people import LOCAL_PERSON


def review_runner(engine: Engine, client: LLMClient, extras: Mapping[str, Any]) -> Runner:
    """The review chat on `extras["review"]` (the thread's own review), or on the bundled sample review when
    the recorded thread's review is not known."""
    material: ReviewRecord | None = extras.get("review")
    repo = repository(engine, LOCAL_PERSON)
    review_id = repo.add_review(material) if material is not None else sample_review_id(repo)
    review = repo.get_review(review_id)
    assert review is not None  # stored just above
    chat: list[ChatItem] = []
    thread: dict[str, int | None] = {"id": None}

    def run(text: str, _turn_input: dict[str, Any] | None, sink: DebugSink) -> None:
        prior = history(chat)
        chat.append(user_item(text))
        outcome = run_turn(repo, client, review, thread["id"], prior, text, sink=sink)
        chat[-1:] = outcome.items
        thread["id"] = outcome.thread_id

    return run
