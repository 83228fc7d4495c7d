"""Own review material in the store (issue #13): save per person, edit in place, no duplicates (form and
import), rename / delete reviews and threads, owner isolation, the thread exported as Markdown and DOCX, the
content hash filled in for older databases."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import docx
import pytest
from sqlalchemy import Engine, select

from core.flows import review_chat
from core.flows.review_chat import ThreadState, build_record, export_docx, export_markdown, thread_export
from core.llm.replay import ReplayClient
from core.store import init_db, make_engine
from core.store.review.manage import ManagedReviewRepository
from core.store.review.models import content_hash
from core.store.review.repository import review_messages, review_reviews, review_threads
from tests.core.review_material_fixtures import OVERALL, draft
from tests.persons import ALICE, BOB

T0 = 1_795_255_200
LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy_main_dee2926.db"


@pytest.fixture
def alice(engine: Engine) -> ManagedReviewRepository:
    ticks = iter(range(T0, T0 + 1000))
    return review_chat.repository(engine, ALICE, clock=lambda: next(ticks))


@pytest.fixture
def bob(engine: Engine) -> ManagedReviewRepository:
    return review_chat.repository(engine, BOB, clock=lambda: T0)


def test_the_form_saves_a_review_of_its_person_and_again_finds_it(
    alice: ManagedReviewRepository, bob: ManagedReviewRepository
) -> None:
    sample = review_chat.sample_review_id(alice)
    saved = review_chat.save_material(alice, draft())
    assert saved.errors == [] and saved.notice == ("success", "「売買代金請求（自作答案）」を登録しました。")
    assert saved.review_id is not None
    stored = alice.get_review(saved.review_id)
    assert stored is not None and stored.to_json_dict() == build_record(draft()).to_json_dict()
    again = review_chat.save_material(alice, draft(title="別名"))  # same content, another title
    assert (again.review_id, again.errors) == (saved.review_id, [])
    assert again.notice == (
        "warning",
        "同じ内容の講評がすでに登録されています（「売買代金請求（自作答案）」）。登録済みの講評を開きました。",
    )
    assert [r.id for r in review_chat.list_reviews(alice)] == [sample, saved.review_id]
    assert [r.id for r in review_chat.list_reviews(bob)] == [sample]  # Bob sees only the sample
    theirs = review_chat.save_material(bob, draft())  # the same content is Bob's own review
    assert theirs.review_id not in (None, saved.review_id) and theirs.notice is not None
    assert theirs.notice[0] == "success"


def test_a_refused_form_stores_nothing(alice: ManagedReviewRepository, engine: Engine) -> None:
    result = review_chat.save_material(alice, draft(question_text=""))
    assert (result.review_id, result.errors) == (None, ["問題文を入力してください。"])
    with engine.connect() as conn:
        assert conn.execute(select(review_reviews.c.id)).all() == []


def test_editing_updates_the_same_review_and_its_threads_keep_working(alice: ManagedReviewRepository) -> None:
    review_id = review_chat.save_material(alice, draft()).review_id
    assert review_id is not None
    review = alice.get_review(review_id)
    assert review is not None
    turn = review_chat.run_turn(alice, ReplayClient(["A1"]), review, None, [], "§3 について")
    assert turn.thread_id is not None
    form = review_chat.editable_draft(alice, review_id)
    assert form is not None and form.overall_review == OVERALL and len(form.paragraphs) == 12
    form.overall_review = "書き直した全体講評"
    updated = review_chat.save_material(alice, form, review_id)
    assert (updated.review_id, updated.notice) == (
        review_id,
        ("success", "「売買代金請求（自作答案）」を更新しました。"),
    )
    edited = alice.get_review(review_id)
    assert edited is not None and edited.review_json["overall_review"] == "書き直した全体講評"
    with alice.engine.connect() as conn:
        times = conn.execute(
            select(review_reviews.c.created_at, review_reviews.c.updated_at).where(
                review_reviews.c.id == review_id
            )
        ).one()
    assert times.updated_at > times.created_at
    items = review_chat.open_thread(alice, turn.thread_id)
    assert items is not None and items.review_id == review_id
    client = ReplayClient(["A2"])
    review_chat.run_turn(alice, client, edited, turn.thread_id, turn.items, "続き")
    assert "書き直した全体講評" in client.requests[0].messages[1]["content"]


def test_an_edit_to_the_content_of_another_review_is_refused(alice: ManagedReviewRepository) -> None:
    first = review_chat.save_material(alice, draft()).review_id
    second = review_chat.save_material(alice, draft(overall_review="別の講評")).review_id
    assert first is not None and second is not None and first != second
    refused = review_chat.save_material(alice, draft(), second)
    assert refused.errors == [
        "同じ内容の講評がすでに登録されています（「売買代金請求（自作答案）」）。変更を保存できませんでした。"
    ]
    kept = alice.get_review(second)
    assert kept is not None and kept.review_json["overall_review"] == "別の講評"


def test_the_sample_and_another_persons_review_cannot_be_changed(
    alice: ManagedReviewRepository, bob: ManagedReviewRepository
) -> None:
    sample = review_chat.sample_review_id(alice)
    mine = review_chat.save_material(alice, draft()).review_id
    assert mine is not None
    for review_id in (sample, mine):
        assert not review_chat.is_own_review(bob, review_id)
        assert review_chat.editable_draft(bob, review_id) is None
        assert review_chat.save_material(bob, draft(), review_id).errors == [review_chat.NOT_OWN]
        assert review_chat.rename_review(bob, review_id, "乗っ取り") == review_chat.NOT_OWN
        assert review_chat.delete_review(bob, review_id) == ("error", review_chat.NOT_OWN)
    assert review_chat.is_own_review(alice, mine) and not review_chat.is_own_review(alice, sample)
    assert [r.title for r in review_chat.list_reviews(alice)][1] == "売買代金請求（自作答案）"


def test_importing_the_same_file_twice_returns_the_stored_review(alice: ManagedReviewRepository) -> None:
    raw = json.dumps(build_record(draft()).to_json_dict(), ensure_ascii=False).encode()
    first = review_chat.import_review(alice, raw)
    assert first.review_id is not None and not first.duplicate
    second = review_chat.import_review(alice, raw)
    assert (second.review_id, second.duplicate, second.errors) == (first.review_id, True, [])
    assert second.notice == (
        "warning",
        "同じ内容の講評がすでに登録されています（「売買代金請求（自作答案）」）。登録済みの講評を開きました。",
    )
    assert review_chat.save_material(alice, draft()).review_id == first.review_id  # the form finds it too
    assert len(review_chat.list_reviews(alice)) == 1


def test_rename_and_delete_a_review_with_its_threads(alice: ManagedReviewRepository, engine: Engine) -> None:
    review_id = review_chat.save_material(alice, draft()).review_id
    assert review_id is not None
    assert review_chat.rename_review(alice, review_id, "  ") == "名前を入力してください。"
    assert review_chat.rename_review(alice, review_id, "x" * 201) == "名前は 200 文字以内にしてください。"
    assert review_chat.rename_review(alice, review_id, " 新しい名前 ") is None
    assert review_chat.list_reviews(alice)[0].title == "新しい名前"
    assert review_chat.review_delete_warning(alice, review_id) == (
        "このレビュー（問題文・答案・講評）を削除します。元に戻せません。"
    )
    review = alice.get_review(review_id)
    assert review is not None
    for question in ("一つ目", "二つ目"):
        review_chat.run_turn(alice, ReplayClient(["A"]), review, None, [], question)
    assert review_chat.review_delete_warning(alice, review_id) == (
        "このレビュー（問題文・答案・講評）を削除します。このレビューのスレッド 2 件と、その会話もすべて削除されます。"
        "元に戻せません。"
    )
    assert review_chat.delete_review(alice, review_id) == (
        "success",
        "レビューを削除しました（スレッド 2 件も削除）。",
    )
    assert alice.get_review(review_id) is None and review_chat.list_reviews(alice) == []
    with engine.connect() as conn:
        for table in (review_reviews, review_threads, review_messages):
            assert conn.execute(select(table)).all() == []


def test_rename_and_delete_a_thread_only_of_its_person(
    alice: ManagedReviewRepository, bob: ManagedReviewRepository
) -> None:
    sample = review_chat.sample_review_id(alice)
    review = alice.get_review(sample)
    assert review is not None
    thread = review_chat.run_turn(alice, ReplayClient(["A1"]), review, None, [], "§3 について").thread_id
    assert thread is not None
    missing = "このスレッドは見つかりません（削除されたか、ほかの人のスレッドです）。"
    assert review_chat.rename_thread(bob, thread, "乗っ取り") == missing
    assert review_chat.delete_thread(bob, thread) == ("error", missing)
    assert review_chat.rename_thread(alice, thread, "") == "名前を入力してください。"
    before = review_chat.list_threads(alice, sample)[0].updated_at
    assert review_chat.rename_thread(alice, thread, "§3 の相談") is None
    (listed,) = review_chat.list_threads(alice, sample)
    assert (listed.title, listed.updated_at) == ("§3 の相談", before)
    assert review_chat.delete_thread(alice, thread) == ("success", "スレッドを削除しました。")
    assert review_chat.list_threads(alice, sample) == [] and alice.load_messages(thread) == []
    assert review_chat.open_thread(alice, thread) is None and alice.get_review(sample) is not None


def stored_thread(alice: ManagedReviewRepository) -> int:
    review_id = review_chat.save_material(alice, draft()).review_id
    assert review_id is not None
    thread = alice.create_thread(review_id)
    alice.save_turn(thread, 1, "§3 について教えて", "§3 は**抗弁**の段落です。\n次の行。", ThreadState())
    alice.save_turn(thread, 2, "第9段落は？", "§9 は再反論です。", ThreadState())
    assert review_chat.rename_thread(alice, thread, "§3 の相談") is None
    alice.save_summary(thread, ThreadState("【1～5ターンの要約】\n抗弁について相談した。", 5))
    return thread


def test_a_thread_exported_as_markdown(alice: ManagedReviewRepository, bob: ManagedReviewRepository) -> None:
    thread = stored_thread(alice)
    assert thread_export(bob, thread) is None
    export = thread_export(alice, thread)
    assert export is not None
    assert export_markdown(export) == (
        "# §3 の相談\n\nレビュー: 売買代金請求（自作答案）\n\n## 問題文\n\n"
        "甲は乙に対し、売買代金の支払を求めた。乙の反論の当否を論ぜよ。\n\n"
        "## 会話で参照した答案の段落\n\n"
        "**§3**\n\n> 乙は、同時履行の抗弁権を主張すると考えられる。\n> 目的物の引渡しがまだだからである。\n\n"
        "**§9**\n\n> しかし、一度の受領拒絶で抗弁権は失われない。\n\n"
        "## 会話\n\n### ターン1\n\n**質問:**\n\n§3 について教えて\n\n**回答:**\n\n§3 は**抗弁**の段落です。\n次の行。\n\n"
        "### ターン2\n\n**質問:**\n\n第9段落は？\n\n**回答:**\n\n§9 は再反論です。\n\n"
        "## 会話の要約（ターン1～5）\n\n【1～5ターンの要約】\n抗弁について相談した。\n"
    )
    assert review_chat.export_file_name(export, "md") == "§3_の相談.md"


def test_a_thread_exported_as_docx_opens_and_holds_each_turn(alice: ManagedReviewRepository) -> None:
    thread = stored_thread(alice)
    export = thread_export(alice, thread)
    assert export is not None
    export.turns[0].assistant += "\x00\x07"  # control characters XML cannot hold are left out
    document = docx.Document(io.BytesIO(export_docx(export)))
    texts = [p.text for p in document.paragraphs]
    assert texts == [
        "§3 の相談",
        "レビュー: 売買代金請求（自作答案）",
        "問題文",
        "甲は乙に対し、売買代金の支払を求めた。乙の反論の当否を論ぜよ。",
        "会話で参照した答案の段落",
        "§3　乙は、同時履行の抗弁権を主張すると考えられる。\n目的物の引渡しがまだだからである。",
        "§9　しかし、一度の受領拒絶で抗弁権は失われない。",
        "会話",
        "ターン1",
        "質問:",
        "§3 について教えて",
        "回答:",
        "§3 は抗弁の段落です。\n次の行。",
        "ターン2",
        "質問:",
        "第9段落は？",
        "回答:",
        "§9 は再反論です。",
        "会話の要約（ターン1～5）",
        "【1～5ターンの要約】\n抗弁について相談した。",
    ]
    reply = document.paragraphs[12]  # the Markdown of the reply is Word formatting, not its marks
    assert [(r.text, r.bold) for r in reply.runs][:3] == [
        ("§3 は", None),
        ("抗弁", True),
        ("の段落です。", None),
    ]


def test_the_export_cites_every_paragraph_a_reply_quoted(alice: ManagedReviewRepository) -> None:
    review_id = review_chat.save_material(alice, draft()).review_id
    assert review_id is not None
    thread = alice.create_thread(review_id)
    reply = "§3 の記述を踏まえると、\n\n**§9 の記述**\n> しかし、一度の受領拒絶で抗弁権は失われない。"
    alice.save_turn(thread, 1, "§3 について教えて", reply, ThreadState())
    export = thread_export(alice, thread)
    assert export is not None
    assert [n for n, _ in export.cited] == [3, 9]
    document = docx.Document(io.BytesIO(export_docx(export)))
    texts = [(p.style.name if p.style is not None else "", p.text) for p in document.paragraphs]
    assert ("Normal", "§9　しかし、一度の受領拒絶で抗弁権は失われない。") in texts
    assert ("Quote", "しかし、一度の受領拒絶で抗弁権は失われない。") in texts


def test_an_older_database_gets_the_content_hashes(tmp_path: Path) -> None:
    shutil.copy(LEGACY, tmp_path / "app.db")
    engine = make_engine(tmp_path)
    init_db(engine)
    with engine.connect() as conn:
        rows = conn.execute(select(review_reviews)).all()
    assert rows and all(
        r.content_hash == content_hash(r.question_text, r.answer_text, json.loads(r.review_json))
        for r in rows
    )
