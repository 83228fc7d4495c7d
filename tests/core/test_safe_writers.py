"""Every writer stores safe text (core.text.safe): arbitrary Unicode (controls, lone surrogates, RTL marks, long
lines) through the knowledge base, review material, review replies and titles, feedback and memory edits never
raises, and what is read back holds no control character or surrogate. A lone surrogate in a model reply no
longer costs the reply."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from core.flows.chat_item import history, user_item
from core.flows.feedback import save_feedback
from core.flows.knowledge import base as kb
from core.flows.memory.versions import edit_unit
from core.flows.review_chat import (
    MaterialDraft,
    finish_turn,
    prepare_turn,
    repository,
    save_material,
    stream_reply,
)
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.feedback import FeedbackRepository
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository
from core.store.memory.repository import MemoryRepository
from core.text.safe import CHANGED_NOTICE, COMMENT_MAX_CHARS
from tests.core.test_review_messages import REVIEW
from tests.core.test_text_safe import ANY_TEXT, TEXT
from tests.persons import ALICE

PROPERTY = settings(max_examples=40, deadline=None)
UNSAFE = ("\x00", "\x0b", "\x1b", "\r", "\x85", "\u2028")


def stored_safely(text: str) -> bool:
    text.encode("utf-8")  # no lone surrogate
    return not any(ch in text for ch in UNSAFE)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = open_store(Path(tmp_path_factory.mktemp("safe")))
    yield engine
    engine.dispose()


def test_a_lone_surrogate_in_a_model_reply_is_stored_not_lost(store: Engine) -> None:
    repo = repository(store, ALICE)
    review = repo.get_review(repo.add_review(REVIEW))
    assert review is not None
    plan = prepare_turn(repo, review, None, history([user_item("§1は\x0bどう？")]), "§1は\x0bどう？")
    stream = stream_reply(ReplayClient(["前半\ud800後半\x00"]), plan)
    "".join(stream)
    outcome = finish_turn(repo, ReplayClient([]), plan, stream.result)
    assert outcome.stored and outcome.notices == []
    assert outcome.thread_id is not None
    assert [(m.role, m.content) for m in repo.load_messages(outcome.thread_id)] == [
        ("user", "§1は\nどう？"),
        ("assistant", "前半\ufffd後半"),
    ]
    assert repo.get_thread(outcome.thread_id)["title"] == "§1は どう？"  # type: ignore[index]


def test_registration_says_when_control_characters_were_removed(store: Engine) -> None:
    draft = MaterialDraft(question_text="問\x1b題", paragraphs=["答え\x00です"], overall_review="よい")
    result = save_material(repository(store, ALICE), draft)
    assert result.errors == [] and result.notice == ("success", f"「問題」を登録しました。{CHANGED_NOTICE}")


@PROPERTY
@given(st.dictionaries(st.sampled_from(ENTRY_FIELDS), ANY_TEXT, min_size=1), TEXT)
def test_knowledge_entries_store_safe_text(store: Engine, fields: dict[str, str], edit: str) -> None:
    base = KnowledgeBaseRepository(store)
    entry_id = base.save_entry(fields, by=ALICE)
    base.update_entry(entry_id, {**fields, "review_points": edit}, by=ALICE, note=edit)
    stored = base.get_entry(entry_id)
    assert stored is not None and all(stored_safely(stored[k]) for k in ENTRY_FIELDS)
    cleaned, _, errors = kb.check_entry(fields)
    assert all(stored_safely(v) for v in cleaned.values())
    assert all(e.endswith("文字）。") for e in errors)


@PROPERTY
@given(TEXT, TEXT, st.lists(TEXT, min_size=1, max_size=5))
def test_review_material_stores_safe_text(
    store: Engine, title: str, question: str, paragraphs: list[str]
) -> None:
    repo = repository(store, ALICE)
    draft = MaterialDraft(
        title=title,
        question_text=question + "問",
        paragraphs=[p + "答" for p in paragraphs],
        overall_review="よい",
    )
    result = save_material(repo, draft)
    if result.review_id is not None:
        stored = repo.get_review(result.review_id)
        assert stored is not None
        assert all(stored_safely(t) for t in (stored.title, stored.question_text, stored.answer_text))
    else:
        assert result.errors and all(e.endswith("。") for e in result.errors)


@PROPERTY
@given(ANY_TEXT)
def test_feedback_comments_and_memory_edits_store_safe_text(store: Engine, text: str) -> None:
    saved = save_feedback(FeedbackRepository(store, owner_id=ALICE.id), "review", "1", 1, 1, text)
    assert saved is not None and stored_safely(saved.comment) and len(saved.comment) <= COMMENT_MAX_CHARS
    memory = MemoryRepository(store, owner_id=LOCAL_PERSON.id)
    unit_id = memory.save_episode("最初", "返答", {}, source="default")
    edit_unit(memory, None, unit_id, {"input_text": text + "x"}, note=text)
    assert stored_safely(memory.snapshot(unit_id)["input_text"])
