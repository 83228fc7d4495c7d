"""AppTest: 👍 / 👎 with a comment under the replies of all four chat pages (issue #9 item 6), stored with the
reply's key, shown again after a reload (a new AppTest on the same data dir is a new browser session)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.flows import feedback as fb
from core.flows.memory.background import memory_job_key
from core.llm.base import LLMReply
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store import open_store
from pages.ui.shell.state import worker
from tests.pages.conftest import JOB_WAIT_S, make_app

COMMENT = "段落番号の読み違いがあります"


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def stored(tmp_path: Path) -> list[tuple[str, str, int, int, str]]:
    """Every rating of the local person in the app's database: (flow, conversation, turn, score, comment)."""
    repo = fb.repository(open_store(tmp_path), LOCAL_PERSON)
    return [(f.flow, f.conversation_id, f.turn, f.score, f.comment) for f in repo.all()]


def thumbs(at: AppTest) -> dict[str, int | None]:
    return {w.key: w.value for w in at.feedback}


def rate_down_with_comment(at: AppTest, key: str) -> None:
    """Click 👎 (saved at once), then write a comment and press 「評価を保存」."""
    at.feedback(key=f"{key}_thumb").set_value(0)
    run(at)
    assert "評価を保存しました" in captions(at)
    at.text_input(key=f"{key}_comment").input(COMMENT)
    at.button(key=f"{key}_save").click()
    run(at)
    assert "評価を保存しました" in captions(at)


def captions(at: AppTest) -> list[str]:
    return [c.value.removeprefix(":material/check: ") for c in at.caption]


def assert_shown(at: AppTest, key: str, score: int | None, comment: str) -> None:
    assert at.feedback(key=f"{key}_thumb").value == score
    assert at.text_input(key=f"{key}_comment").value == comment


def test_review_rating_survives_a_reload(tmp_path: Path) -> None:
    at = make_app(tmp_path, page="pages/review_chat.py")
    at.session_state["review_demo_request"] = True
    run(at)
    thread = str(at.session_state["review_thread_id"])
    key = f"feedback_review_{thread}_1"
    assert thumbs(at) == {f"{key}_thumb": None}  # one finished reply, not rated yet
    rate_down_with_comment(at, key)
    assert stored(tmp_path) == [("review", thread, 1, 0, COMMENT)]

    reloaded = make_app(tmp_path)
    reloaded.query_params["review_thread"] = thread
    reloaded.switch_page("pages/review_chat.py")
    run(reloaded)
    assert_shown(reloaded, key, 0, COMMENT)
    reloaded.feedback(key=f"{key}_thumb").set_value(1)  # changed mind: 👍, the comment stays
    run(reloaded)
    assert stored(tmp_path) == [("review", thread, 1, 1, COMMENT)]
    reloaded.feedback(key=f"{key}_thumb").set_value(None)  # unselected: the rating is gone
    run(reloaded)
    assert "評価を取り消しました" in captions(reloaded) and stored(tmp_path) == []


def test_a_comment_without_a_thumb_is_not_saved_and_stays_typed(tmp_path: Path) -> None:
    at = make_app(tmp_path, page="pages/review_chat.py")
    at.session_state["review_demo_request"] = True
    run(at)
    key = f"feedback_review_{at.session_state['review_thread_id']}_1"
    at.text_input(key=f"{key}_comment").input(COMMENT)
    at.button(key=f"{key}_save").click()
    run(at)
    assert [w.value for w in at.warning] == [
        "先に高評価か低評価のボタンを選んでから保存してください（入力したコメントは残っています）。"
    ]
    assert at.text_input(key=f"{key}_comment").value == COMMENT and stored(tmp_path) == []


def test_a_cut_reply_asked_again_leaves_its_rating_behind(tmp_path: Path) -> None:
    client = ReplayClient(
        [LLMReply("講評では、§3 の論述について次のように述", finish_reason="length"), "完全な回答です。"]
    )
    at = make_app(tmp_path, client=client, page="pages/review_chat.py")
    at.text_area(key="review_draft").input("§3 の評価は？")
    at.button(key="review_send").click()
    run(at)
    thread = str(at.session_state["review_thread_id"])
    key = f"feedback_review_{thread}_1"
    rate_down_with_comment(at, key)  # a truncated reply can be rated too
    assert stored(tmp_path) == [("review", thread, 1, 0, COMMENT)]
    at.button(key="review_cut_retry").click()
    run(at)
    assert at.session_state["chat"]["review"][-1]["content"] == "完全な回答です。"
    assert_shown(at, key, None, "")  # the new reply of turn 1 starts unrated
    assert stored(tmp_path) == []


def test_knowledge_rating_survives_a_reload(tmp_path: Path) -> None:
    at = make_app(tmp_path, page="pages/knowledge.py")
    at.session_state["knowledge_demo_request"] = True
    run(at)
    interview = at.session_state["knowledge_interview_id"]
    key = f"feedback_knowledge_{interview}_1"
    assert thumbs(at) == {f"{key}_thumb": None}
    rate_down_with_comment(at, key)
    assert stored(tmp_path) == [("knowledge", interview, 1, 0, COMMENT)]

    reloaded = make_app(tmp_path)
    reloaded.query_params["interview"] = interview
    reloaded.switch_page("pages/knowledge.py")
    run(reloaded)
    assert_shown(reloaded, key, 0, COMMENT)


@pytest.fixture
def memory_jobs_done() -> Iterator[None]:
    yield
    assert worker().wait(memory_job_key(LOCAL_PERSON.id), timeout=JOB_WAIT_S)


def test_memory_rating_is_stored_and_read_back_by_a_new_session(
    tmp_path: Path, memory_jobs_done: None
) -> None:
    at = make_app(tmp_path, page="pages/memory.py")
    at.chat_input(key="memory_input").set_value("同僚の田中さんとラーメンを食べたよ。")
    run(at)
    assert worker().wait(memory_job_key(LOCAL_PERSON.id), timeout=JOB_WAIT_S)
    conversation = at.session_state["memory_conversation_id"]
    key = f"feedback_memory_{conversation}_1"
    assert thumbs(at) == {f"{key}_thumb": None}
    rate_down_with_comment(at, key)
    assert stored(tmp_path) == [("memory", conversation, 1, 0, COMMENT)]

    # The memory chat lives in its browser session; a new session holding the same conversation draws the
    # rating from the store (no widget state carried over).
    chat = at.session_state["chat"]["memory"]
    reloaded = make_app(tmp_path)
    reloaded.session_state["memory_conversation_id"] = conversation
    reloaded.session_state["chat"] = {**reloaded.session_state["chat"], "memory": chat}
    reloaded.switch_page("pages/memory.py")
    run(reloaded)
    assert_shown(reloaded, key, 0, COMMENT)


def test_diagnosis_rating_survives_a_reload_and_a_rewind_drops_later_ones(tmp_path: Path) -> None:
    at = make_app(tmp_path, page="pages/diagnosis.py")
    at.session_state["diagnosis_demo_request"] = True
    run(at)
    session = at.session_state["diagnosis_session_id"]
    chat = at.session_state["chat"]["diagnosis"]
    replies = [i for i, item in enumerate(chat) if item["role"] == "assistant"]
    prefix = f"feedback_diagnosis_{session}_"
    assert list(thumbs(at)) == [f"{prefix}{n}_thumb" for n in range(1, len(replies) + 1)]
    first = f"{prefix}1"
    rate_down_with_comment(at, first)
    assert stored(tmp_path) == [("diagnosis", session, 1, 0, COMMENT)]

    reloaded = make_app(tmp_path)
    reloaded.query_params["diagnosis"] = session
    reloaded.switch_page("pages/diagnosis.py")
    run(reloaded)
    assert_shown(reloaded, first, 0, COMMENT)

    # Answer the first question, rate the newest message, then go back to turn 1: its later messages are
    # replaced, and so is their rating; the earlier one stays.
    next(b for b in reloaded.button if b.label == "エンジン警告灯").click()
    run(reloaded)
    newest = len([i for i in reloaded.session_state["chat"]["diagnosis"] if i["role"] == "assistant"])
    reloaded.feedback(key=f"{prefix}{newest}_thumb").set_value(1)
    run(reloaded)
    assert [(t, s) for _, _, t, s, _ in stored(tmp_path)] == [(1, 0), (newest, 1)]
    reloaded.select_slider(key="diagnosis_rewind_1_2").set_value(1)
    run(reloaded)
    reloaded.button(key="diagnosis_rewind_go").click()
    run(reloaded)
    kept = len([i for i in reloaded.session_state["chat"]["diagnosis"] if i["role"] == "assistant"])
    assert kept < newest
    assert stored(tmp_path) == [("diagnosis", session, 1, 0, COMMENT)]
    assert list(thumbs(reloaded)) == [f"{prefix}{n}_thumb" for n in range(1, kept + 1)]
