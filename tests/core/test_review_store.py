"""Review chat store and records: tables, thread columns, resume after reload, epoch times, review file import."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError

from core.flows.review_chat import (
    ThreadState,
    check_review_record,
    load_sample_review,
    parse_marked_answer_paragraphs,
    read_review_file,
)
from core.flows.review_chat.records import SAMPLE_KEY
from core.store.review.repository import ReviewRepository, review_messages, review_reviews, review_threads
from tests.persons import ALICE

T0 = 1_795_255_200  # 2026-11-21T10:00:00Z


@pytest.fixture
def store(engine: Engine) -> ReviewRepository:
    ticks = iter(range(T0, T0 + 60))
    return ReviewRepository(engine, clock=lambda: next(ticks), owner_id=ALICE.id)


def test_sample_is_inserted_once_and_round_trips(store: ReviewRepository) -> None:
    sample = load_sample_review()
    first = store.ensure_sample(sample, SAMPLE_KEY)
    assert store.ensure_sample(sample, SAMPLE_KEY) == first
    loaded = store.get_review(first)
    assert loaded is not None and loaded.id == first
    assert loaded.to_json_dict() == sample.to_json_dict()
    assert store.list_reviews() == [{"id": first, "title": sample.title, "sample_key": SAMPLE_KEY}]
    assert store.get_review(999) is None


def test_thread_columns_and_messages_survive_a_new_store(
    store: ReviewRepository, engine_factory: Callable[[], Engine]
) -> None:
    review_id = store.ensure_sample(load_sample_review(), SAMPLE_KEY)
    thread_id = store.create_thread(review_id)
    state = ThreadState("【1～5ターンの要約】\nS", 5, 4, "[3,5]")
    store.save_turn(thread_id, 1, "  §3 について\n教えて ", "回答1", state, {"turn": 1})
    store.save_turn(thread_id, 2, "続き", "回答2", state)
    assert store.save_summary(thread_id, state)  # the summary columns are written apart (see save_summary)
    reopened = ReviewRepository(engine_factory(), owner_id=ALICE.id)  # as after a browser reload / restart
    thread = reopened.get_thread(thread_id)
    assert thread == {"id": thread_id, "review_id": review_id, "title": "§3 について 教えて", "state": state}
    assert [(m.role, m.content, m.turn, m.meta) for m in reopened.load_messages(thread_id)] == [
        ("user", "  §3 について\n教えて ", 1, {}),
        ("assistant", "回答1", 1, {"turn": 1}),
        ("user", "続き", 2, {}),
        ("assistant", "回答2", 2, {}),
    ]
    assert reopened.list_threads(review_id)[0]["turns"] == 2


def test_threads_listed_newest_first(store: ReviewRepository) -> None:
    review_id = store.ensure_sample(load_sample_review(), SAMPLE_KEY)
    older, newer = store.create_thread(review_id), store.create_thread(review_id)
    store.update_thread_state(older, ThreadState(summary_up_to_turn=5))
    assert [t["id"] for t in store.list_threads(review_id)] == [older, newer]
    assert store.thread_state(older).summary_up_to_turn == 5
    with pytest.raises(KeyError):
        store.thread_state(12345)


def test_only_user_and_assistant_messages(store: ReviewRepository) -> None:
    review_id = store.ensure_sample(load_sample_review(), SAMPLE_KEY)
    thread_id = store.create_thread(review_id)
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(
            review_messages.insert().values(
                thread_id=thread_id, turn=1, role="system", content="x", created_at=T0
            )
        )


def test_times_are_utc_epoch_seconds_from_the_clock(store: ReviewRepository) -> None:
    review_id = store.ensure_sample(load_sample_review(), SAMPLE_KEY)  # tick 0
    thread_id = store.create_thread(review_id)  # tick 1
    store.save_turn(thread_id, 1, "q", "a", ThreadState())  # tick 2
    assert store.list_threads(review_id) == [
        {"id": thread_id, "title": "q", "updated_at": T0 + 2, "turns": 1}
    ]
    with store.engine.connect() as conn:
        times = [
            (row.created_at, row.updated_at)
            for t in (review_reviews, review_threads)
            for row in conn.execute(t.select())
        ]
        messages = [row.created_at for row in conn.execute(review_messages.select())]
    assert times == [(T0, T0), (T0 + 1, T0 + 2)] and messages == [T0 + 2, T0 + 2]


def test_a_turn_leaves_the_summary_columns_to_save_summary(store: ReviewRepository) -> None:
    review_id = store.ensure_sample(load_sample_review(), SAMPLE_KEY)
    thread_id = store.create_thread(review_id)
    summarized = ThreadState("【1～5ターンの要約】\nS", 5)
    assert store.save_summary(thread_id, summarized)
    # a turn prepared before that summary was stored carries the old (empty) summary columns
    store.save_turn(thread_id, 6, "§2 は？", "回答", ThreadState("", 0, 6, "[2]"))
    assert store.thread_state(thread_id) == ThreadState("【1～5ターンの要約】\nS", 5, 6, "[2]")
    assert not store.save_summary(thread_id, ThreadState("古い要約", 5))  # never rewritten or moved back
    assert not store.save_summary(thread_id, ThreadState("", 0))
    assert store.thread_state(thread_id).conversation_summary == "【1～5ターンの要約】\nS"


def test_sample_meets_the_issue() -> None:
    sample = load_sample_review()
    check = check_review_record(sample.to_json_dict())
    assert check.errors == [] and check.warnings == []
    assert len(parse_marked_answer_paragraphs(sample.answer_text)) >= 20
    items = [
        i
        for key in ("strengths", "weaknesses", "important_points", "future_considerations")
        for i in sample.review_json[key]
    ]
    assert any("paragraph_numbers" in i for i in items) and any("paragraph_number" in i for i in items)


def test_import_problems_are_listed() -> None:
    bad = {
        "title": "",
        "question_text": "Q",
        "answer_text": "A",
        "review_json": {"strengths": [{"paragraph_number": "3"}]},
        "extra": 1,
    }
    check = read_review_file(json.dumps(bad).encode())
    assert check.record is None
    assert check.errors == [
        "ファイル全体: 決められていない項目があります（extra）。",
        "review_json: 必須の項目「overall_review」がありません。",
        "review_json › strengths › 1件目: 講評の項目には title か description が必要です。",
        "review_json › strengths › 1件目 › paragraph_number: 型が違います（整数にしてください）。",
        "title: 空にはできません。",
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\xff\xfe\x00", "ファイルを UTF-8 のテキストとして読めませんでした。"),
        (
            b"{not json",
            "JSONとして読み取れませんでした（1行目 2文字目: Expecting property name enclosed in double quotes）。",
        ),
        (
            json.dumps(
                {
                    "title": "t",
                    "question_text": "Q",
                    "answer_text": "段落の目印なし",
                    "review_json": {"overall_review": "OV"},
                }
            ).encode(),
            "answer_text: 段落の目印 $$[N] が1つもありません（各段落の先頭行を $$[1] のように始めてください）。",
        ),
    ],
)
def test_import_unreadable_files(raw: bytes, message: str) -> None:
    assert read_review_file(raw).errors == [message]


def test_import_warns_about_missing_cited_paragraphs() -> None:
    data = {
        "title": "t",
        "question_text": "Q",
        "answer_text": "$$[1] a\n$$[2] b",
        "review_json": {"overall_review": "OV", "weaknesses": [{"title": "w", "paragraph_numbers": [2, 7]}]},
    }
    check = read_review_file(json.dumps(data, ensure_ascii=False).encode("utf-8-sig"))
    assert check.errors == [] and check.warnings == ["講評が答案にない段落 §7 を参照しています。"]
    assert check.record is not None and check.record.purpose_text == ""


def test_import_problems_follow_document_order() -> None:
    items = [{"title": f"t{i}"} for i in range(12)]
    items[1], items[10] = {"title": 1}, {"title": 2}
    data = {"title": "t", "question_text": "Q", "answer_text": "$$[1] a", "review_json": {}}
    data["review_json"] = {"overall_review": "OV", "weaknesses": items}
    assert read_review_file(json.dumps(data).encode()).errors == [
        "review_json › weaknesses › 2件目 › title: 型が違います（文字列にしてください）。",
        "review_json › weaknesses › 11件目 › title: 型が違います（文字列にしてください）。",
    ]
