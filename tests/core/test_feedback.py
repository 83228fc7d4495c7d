"""Feedback on assistant replies (issue #9 item 6): the store on both engines, one person's ratings only, the
flow functions the pages, the debug page and exports use, and how each flow numbers its replies."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, select

from core.flows import feedback as fb
from core.flows.chat_item import assistant_item, error_item, user_item
from core.store.feedback import Feedback, FeedbackRepository, turn_feedback
from tests.persons import ALICE, BOB

T0 = 1_795_255_200  # 2026-11-21T10:00:00Z


def ticking() -> Iterator[int]:
    yield from range(T0, T0 + 1000, 10)


@pytest.fixture
def alice(engine: Engine) -> FeedbackRepository:
    ticks = ticking()
    return fb.repository(engine, ALICE, clock=lambda: next(ticks))


@pytest.fixture
def bob(engine: Engine) -> FeedbackRepository:
    return fb.repository(engine, BOB, clock=lambda: T0 + 5)


def rows(engine: Engine) -> list[tuple[object, ...]]:
    columns = [c for c in turn_feedback.c if c.name != "id"]
    with engine.connect() as conn:
        query = select(*columns).order_by(turn_feedback.c.owner_id, turn_feedback.c.turn)
        return [tuple(r) for r in conn.execute(query)]


def test_a_rating_is_stored_and_replaced_in_place(engine: Engine, alice: FeedbackRepository) -> None:
    first = alice.save("review", "12", 3, 1)
    assert first == Feedback("review", "12", 3, 1, "", updated_at=T0, created_at=T0)
    second = alice.save("review", "12", 3, 0, "段落番号が違う")
    assert second == Feedback("review", "12", 3, 0, "段落番号が違う", updated_at=T0 + 10, created_at=T0)
    assert rows(engine) == [(ALICE.id, "review", "12", 3, 0, "段落番号が違う", T0, T0 + 10)]
    assert alice.for_conversation("review", "12") == {3: second}


def test_ratings_are_read_by_conversation_and_cleared(alice: FeedbackRepository) -> None:
    alice.save("review", "12", 2, 1)
    alice.save("review", "12", 1, 0, "浅い")
    alice.save("review", "13", 1, 1)
    alice.save("memory", "12", 1, 0)
    assert sorted(alice.for_conversation("review", "12")) == [1, 2]
    assert alice.for_conversation("review", "12")[1].comment == "浅い"
    alice.clear("review", "12", 1)
    assert sorted(alice.for_conversation("review", "12")) == [2]
    alice.clear("review", "12", 9)  # nothing there: nothing happens
    assert [(f.flow, f.conversation_id, f.turn) for f in alice.all()] == [
        ("memory", "12", 1),
        ("review", "12", 2),
        ("review", "13", 1),
    ]
    assert [f.conversation_id for f in alice.all("review")] == ["12", "13"]


def test_clear_after_drops_only_later_turns_of_that_conversation(alice: FeedbackRepository) -> None:
    for turn in (1, 2, 3, 4):
        alice.save("diagnosis", "s1", turn, 1)
    alice.save("diagnosis", "s2", 4, 1)
    alice.clear_after("diagnosis", "s1", 2)
    assert sorted(alice.for_conversation("diagnosis", "s1")) == [1, 2]
    assert sorted(alice.for_conversation("diagnosis", "s2")) == [4]


def test_another_persons_rating_is_invisible_and_never_overwritten(
    engine: Engine, alice: FeedbackRepository, bob: FeedbackRepository
) -> None:
    alice.save("review", "12", 1, 0, "違う")
    bob.save("review", "12", 1, 1, "良い")  # the same reply key, Bob's own row
    assert rows(engine) == [  # ordered by owner id: alice's sorts first
        (ALICE.id, "review", "12", 1, 0, "違う", T0, T0),
        (BOB.id, "review", "12", 1, 1, "良い", T0 + 5, T0 + 5),
    ]
    assert {t: (f.score, f.comment) for t, f in alice.for_conversation("review", "12").items()} == {
        1: (0, "違う")
    }
    assert [(f.score, f.comment) for f in bob.all()] == [(1, "良い")]
    bob.clear("review", "12", 1)
    bob.clear_after("review", "12", 0)
    assert bob.all() == [] and [(f.score, f.comment) for f in alice.all()] == [(0, "違う")]
    assert fb.negative_keys(bob) == set() and fb.feedback_rows(bob) == []


def test_a_rating_is_a_thumb_on_a_numbered_turn(alice: FeedbackRepository) -> None:
    with pytest.raises(ValueError, match="0"):
        alice.save("review", "12", 1, 5)
    with pytest.raises(ValueError, match="1"):
        alice.save("review", "12", 0, 1)
    assert alice.all() == []


def test_save_feedback_strips_the_comment_and_none_forgets(alice: FeedbackRepository) -> None:
    saved = fb.save_feedback(alice, "knowledge", "iv-1", 2, 0, "  根拠条文が古い \n")
    assert saved is not None and (saved.score, saved.comment) == (0, "根拠条文が古い")
    assert fb.feedback_for(alice, "knowledge", "iv-1") == {2: saved}
    assert fb.save_feedback(alice, "knowledge", "iv-1", 2, None) is None
    assert fb.feedback_for(alice, "knowledge", "iv-1") == {}


def test_negative_keys_and_export_rows(alice: FeedbackRepository, bob: FeedbackRepository) -> None:
    fb.save_feedback(alice, "review", "12", 1, 1)
    fb.save_feedback(alice, "review", "12", 2, 0, "§番号の読み違い")
    fb.save_feedback(alice, "diagnosis", "abc", 3, 0)
    fb.save_feedback(bob, "memory", "m1", 1, 0)  # Bob's: not in Alice's keys
    assert fb.negative_keys(alice) == {("review", "12", 2), ("diagnosis", "abc", 3)}
    assert fb.feedback_rows(alice) == [
        {
            "flow": "diagnosis",
            "conversation_id": "abc",
            "turn": 3,
            "score": 0,
            "rating": "👎",
            "comment": "",
            "created_at": T0 + 20,
            "updated_at": T0 + 20,
        },
        {
            "flow": "review",
            "conversation_id": "12",
            "turn": 1,
            "score": 1,
            "rating": "👍",
            "comment": "",
            "created_at": T0,
            "updated_at": T0,
        },
        {
            "flow": "review",
            "conversation_id": "12",
            "turn": 2,
            "score": 0,
            "rating": "👎",
            "comment": "§番号の読み違い",
            "created_at": T0 + 10,
            "updated_at": T0 + 10,
        },
    ]


def test_a_database_failure_is_a_feedback_store_error(engine: Engine, alice: FeedbackRepository) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE turn_feedback")
    with pytest.raises(fb.FeedbackStoreError):
        fb.save_feedback(alice, "review", "1", 1, 1)
    with pytest.raises(fb.FeedbackStoreError):
        fb.feedback_for(alice, "review", "1")
    with pytest.raises(fb.FeedbackStoreError):
        fb.negative_keys(alice)


def test_replies_are_numbered_by_their_turn_and_only_finished_ones_are_rated() -> None:
    items = [
        user_item("q1", turn=1, status="done"),
        assistant_item("a1", turn=1),
        user_item("q2", turn=2, status="error"),
        error_item("失敗", error_type="provider_error", turn=2),
        user_item("q2", turn=2, status="done"),
        assistant_item("a2", turn=2, status="truncated"),
        user_item("q3", turn=3),  # pending
    ]
    for flow in ("knowledge", "review", "memory"):
        assert fb.reply_turns(flow, items) == {1: 1, 5: 2}


def test_diagnosis_replies_are_numbered_by_position() -> None:
    items = [
        assistant_item("お車を選んでください"),  # no diagnostic turn yet
        assistant_item("写真を確認してください"),
        user_item("警告灯", status="done"),
        assistant_item("緊急度: 中", turn=1),
        assistant_item("いつからですか？", turn=1),
    ]
    assert fb.reply_turns("diagnosis", items) == {0: 1, 1: 2, 3: 3, 4: 4}


def test_memory_conversation_ids_are_fresh() -> None:
    first, second = fb.new_conversation_id(), fb.new_conversation_id()
    assert first != second and len(first) == 32
