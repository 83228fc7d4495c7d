"""AppTest: a reply cut short shows 「途中で途切れました」 with 「続きを生成」 and 「再試行」 (issue 12 item 4),
on the review page and the memory page; failures use the shared error card (item 5)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.llm.base import LLMReply
from core.llm.replay import ReplayClient
from tests.pages.conftest import make_app

CUT = "講評では、§3 の論述について次のように述"


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def test_review_cut_reply_continues_and_is_kept_on_reload(tmp_path) -> None:  # type: ignore[no-untyped-def]
    client = ReplayClient([LLMReply(CUT, finish_reason="length"), "べています。"])
    at = make_app(tmp_path, client=client, page="pages/review_chat.py")
    at.text_area(key="review_draft").input("§3 の評価は？")
    at.button(key="review_send").click()
    run(at)
    chat = at.session_state["chat"]["review"]
    assert [m["status"] for m in chat] == ["done", "truncated"]
    assert any(w.value.startswith("途中で途切れました") for w in at.warning)
    at.button(key="review_cut_continue").click()
    run(at)
    chat = at.session_state["chat"]["review"]
    assert chat[1]["status"] == "done" and chat[1]["content"] == CUT + "べています。"
    assert not any(w.value.startswith("途中で途切れました") for w in at.warning)
    assert client.requests[1].tags["step"] == "continue"


def test_review_cut_reply_retry_asks_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    client = ReplayClient([LLMReply(CUT, finish_reason="length"), "完全な回答です。"])
    at = make_app(tmp_path, client=client, page="pages/review_chat.py")
    at.text_area(key="review_draft").input("§3 の評価は？")
    at.button(key="review_send").click()
    run(at)
    at.button(key="review_cut_retry").click()
    run(at)
    chat = at.session_state["chat"]["review"]
    assert [(m["status"], m["content"]) for m in chat] == [
        ("done", "§3 の評価は？"),
        ("done", "完全な回答です。"),
    ]
