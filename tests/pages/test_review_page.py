"""AppTest: the review chat page (7-turn demo with summary, § controls, failure + retry, resume, import)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from core.clock import format_local
from core.flows.review_chat import NOT_FOUND_SENTENCE, load_sample_review, summary_job_key
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.review.repository import ReviewRepository, review_messages, review_threads
from pages.ui.shell.state import worker
from tests.core.gated_client import GatedClient
from tests.pages.conftest import JOB_WAIT_S, make_app

PAGE = "pages/review_chat.py"


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def send(at: AppTest, text: str) -> AppTest:
    at.text_area(key="review_draft").input(text)
    at.button(key="review_send").click()
    return run(at)


def settle(at: AppTest) -> AppTest:
    """Let the thread's summary job finish, then rerun the page (what the status fragment does by itself)."""
    assert worker().wait(
        summary_job_key(at.session_state["review_thread_id"], LOCAL_PERSON.id), timeout=JOB_WAIT_S
    )
    return run(at)


def expander(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    found = [e for e in at.expander if e.label == label]
    assert found, [e.label for e in at.expander]
    return found[0]


def test_demo_chat_of_seven_turns_shows_the_summary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    at.session_state["review_demo_request"] = True
    run(at)
    chat = at.session_state["chat"]["review"]
    assert [m["role"] for m in chat] == ["user", "assistant"]
    assert (
        chat[1]["content"].startswith("（デモモデルの応答）")
        and "絶対的構成の理由づけが薄い" in chat[1]["content"]
    )
    for text in [
        "理由をもう少し詳しく",
        "採点実感ではどう書かれていますか？",
        "この段落の書き方はどうですか？",
        "出題趣旨との関係は？",
    ]:
        send(at, text)
    settle(at)  # the summary is a background job: the page shows it once it has landed
    assert "ターン1～5の会話を要約しました。次のターンから要約を使います。" in [s.value for s in at.success]
    # the shared last-call expander shows every call of the last turn: the reply and the summary
    calls = expander(at, "直近のターンでLLMに渡した内容と返答（2回の呼び出し）")
    shown = [m.value for m in calls.markdown]
    assert len(shown) == 2 and shown[0].startswith("**1. 返答**") and shown[1].startswith("**2. ")
    send(at, "§20 は何が問題ですか？")
    send(at, "では、どう直せばよいですか？")
    chat = at.session_state["chat"]["review"]
    assert len(chat) == 14 and all(m["status"] == "done" for m in chat)
    assert [(m["role"], m["turn"]) for m in chat[-2:]] == [("user", 7), ("assistant", 7)]
    assert chat[-1]["meta"]["info"]["turn"] == 7 and "meta" not in chat[-2]
    assert "直近のターンでLLMに渡した内容と返答（1回の呼び出し）" in [e.label for e in at.expander]
    assert chat[7]["content"].endswith(NOT_FOUND_SENTENCE)  # turn 4: a place in the answer, no Specified

    turn7 = "\n".join(m.value for m in expander(at, "このターンでLLMに渡した情報（ターン7）").markdown)
    assert "**使用中の要約**（ターン1～5）" in turn7
    assert "【1～5ターンの要約】" in turn7 and "疑問・観点: 「§11 の論述について" in turn7
    assert (
        "メッセージ数: **8**" in turn7
    )  # system, context, summary, user_5, assistant_5, user_6, assistant_6, question
    assert "ターン6で指定された §20 を持続（ターン8まで）" in turn7
    assert "【指定段落付き答案（Specified）】 — 保持している段落番号 §20 を使う" in turn7
    turn1 = "\n".join(m.value for m in expander(at, "このターンでLLMに渡した情報（ターン1）").markdown)
    assert "まだありません（これまでの会話履歴をそのまま送信）" in turn1
    assert "【指定段落付き答案（Specified）】 — 入力に §11 が含まれる" in turn1

    store = ReviewRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id)
    thread_id = at.session_state["review_thread_id"]
    assert at.query_params["review_thread"] == str(thread_id)
    state = store.thread_state(thread_id)
    assert (
        state.summary_up_to_turn,
        state.last_section_mention_turn,
        state.last_section_paragraph_numbers,
    ) == (5, 6, "[20]")
    assert len(store.load_messages(thread_id)) == 14
    # spec 02 注意点: the per-turn context is rebuilt every turn and never stored
    question_line = load_sample_review().question_text.splitlines()[0]
    with store.engine.connect() as conn:
        stored = [
            str(value)
            for table in (review_messages, review_threads)
            for row in conn.execute(table.select())
            for value in row
        ]
    assert stored and not [v for v in stored if question_line in v or "ユーザーの質問:" in v]
    assert not [v for v in stored if "【これまでの会話の要約】" in v or '"strengths": [' in v]


def test_clicking_a_paragraph_control_puts_it_into_the_next_message(tmp_path) -> None:  # type: ignore[no-untyped-def]
    client = ReplayClient(["§7 について回答します。"])
    at = make_app(tmp_path, client=client, page=PAGE)
    at.button(key="review_para_7").click()
    run(at)
    assert at.text_area(key="review_draft").value == "§7 "
    at.button(key="review_item_weaknesses_2_19").click()  # a review item's paragraph tag
    run(at)
    assert at.text_area(key="review_draft").value == "§7 §19 "
    at.button(key="review_para_7").click()  # already there: not added twice
    run(at)
    send(at, at.text_area(key="review_draft").value + "はどう直せばよいですか？")
    messages = client.requests[0].messages
    assert messages[-1] == {"role": "user", "content": "ユーザーの質問: §7 §19 はどう直せばよいですか？"}
    assert "【指定段落付き答案（Specified）】\n§2 " in messages[1]["content"]
    assert client.requests[0].tags == {"flow": "review", "step": "reply"}
    assert at.text_area(key="review_draft").value == ""
    assert at.session_state["chat"]["review"][-1]["content"] == "§7 について回答します。"


def test_provider_failure_keeps_the_question_and_retry_works(tmp_path) -> None:  # type: ignore[no-untyped-def]
    client = ReplayClient([ProviderError("timeout", "slow"), "二度目の回答です。"])
    at = make_app(tmp_path, client=client, page=PAGE)
    send(at, "§3 の評価は？")
    chat = at.session_state["chat"]["review"]
    assert [m["status"] for m in chat] == ["error", "error"]
    assert "LLMの応答がタイムアウトしました" in at.error[0].value
    at.button(key="review_retry").click()
    run(at)
    chat = at.session_state["chat"]["review"]
    assert [(m["status"], m["content"]) for m in chat] == [
        ("done", "§3 の評価は？"),
        ("done", "二度目の回答です。"),
    ]
    assert client.requests[1].messages == client.requests[0].messages  # the same turn 1 is sent again


def test_thread_resumes_after_a_reload(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first = make_app(tmp_path, page=PAGE)
    send(first, "§11 はどう評価されていますか？")
    thread_id = first.session_state["review_thread_id"]
    reloaded = make_app(tmp_path)  # a new browser session on the same data
    reloaded.query_params["review_thread"] = str(thread_id)
    reloaded.switch_page(PAGE)
    run(reloaded)
    chat = reloaded.session_state["chat"]["review"]
    assert chat[0]["content"] == "§11 はどう評価されていますか？" and len(chat) == 2
    assert [m["status"] for m in chat] == ["done", "done"] and chat[1]["meta"]["info"]["turn"] == 1
    # the thread list shows the last activity in Japan time
    (listed,) = ReviewRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id).list_threads(
        reloaded.session_state["review_review_id"]
    )
    picker = reloaded.selectbox(key="review_thread_picker")
    expected = (
        f"§11 はどう評価されていますか？（1ターン・{format_local(listed['updated_at'], zone='Asia/Tokyo')}）"
    )
    assert picker.value == listed["id"] and picker.options[1] == expected
    assert "このターンでLLMに渡した情報（ターン1）" in [e.label for e in reloaded.expander]
    send(reloaded, "続きを教えてください")  # turn 2 carries §11 from the stored thread columns
    info = reloaded.session_state["chat"]["review"][-1]["meta"]["info"]
    assert (info["turn"], info["paragraph_source"], info["paragraph_numbers"]) == (2, "carried", [11])


def test_importing_a_review_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    at.file_uploader(key="review_upload").upload("bad.json", b'{"title": "x"}', "application/json")
    run(at)
    at.button(key="review_import").click()
    run(at)
    problems = at.error[0].value
    assert (
        "このファイルは読み込めませんでした" in problems
        and "必須の項目「question\\_text」がありません" in problems
    )
    good = {
        "title": "取り込みテスト",
        "question_text": "Q",
        "answer_text": "$$[1] 一\n$$[2] 二",
        "review_json": {"overall_review": "OV", "weaknesses": [{"title": "w", "paragraph_number": 2}]},
    }
    at.file_uploader(key="review_upload").upload("good.json", json.dumps(good).encode(), "application/json")
    run(at)
    at.button(key="review_import").click()
    run(at)
    assert "「取り込みテスト」を読み込みました。" in [s.value for s in at.success]
    assert at.selectbox(key="review_picker").value == at.session_state["review_review_id"] == 2
    assert at.button(key="review_para_2") is not None


def test_send_has_the_ctrl_enter_shortcut(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    assert at.button(key="review_send").proto.shortcut == "ctrl+enter"


def test_sending_while_a_reply_is_pending_keeps_the_new_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A send click that interrupted a streaming reply: that reply is restarted, the new text stays."""
    client = ReplayClient(["最初の質問への回答です。"])
    at = make_app(tmp_path, client=client, page=PAGE)
    chat = at.session_state["chat"]
    chat["review"] = [{"role": "user", "content": "§3 の評価は？", "status": "pending"}]
    at.session_state["chat"] = chat
    at.session_state["review_pending"] = True
    send(at, "次の質問です")
    items = [(m["role"], m["status"], m["content"]) for m in at.session_state["chat"]["review"]]
    assert items == [
        ("user", "done", "§3 の評価は？"),
        ("assistant", "done", "最初の質問への回答です。"),
    ]
    assert at.text_area(key="review_draft").value == "次の質問です"
    assert "前の質問への回答を作成中です" in at.warning[0].value
    assert len(client.requests) == 1


class BrokenClient:
    """A client failing in a way the guard does not translate (a bug, not a provider error)."""

    provider, model = "broken", "broken"

    def complete(self, request: LLMRequest) -> LLMReply:
        raise RuntimeError("boom")

    def stream(self, request: LLMRequest) -> TextStream:
        raise RuntimeError("boom")


def test_an_unexpected_error_is_a_japanese_message_not_a_traceback(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, client=BrokenClient(), page=PAGE)  # type: ignore[arg-type]
    send(at, "§3 の評価は？")
    assert "予期しないエラーが起きました" in at.error[0].value and "boom" not in at.error[0].value
    assert [m["status"] for m in at.session_state["chat"]["review"]] == ["error", "error"]
    assert at.session_state["review_pending"] is False
    assert at.button(key="review_retry") is not None


def test_the_summary_runs_in_the_background_and_its_notice_appears_when_it_lands(tmp_path) -> None:  # type: ignore[no-untyped-def]
    client = GatedClient(ReplayClient([f"A{i}" for i in range(1, 6)] + ["S1"]), gated={"summarize"})
    at = make_app(tmp_path, client=client, page=PAGE)
    for i in range(1, 6):
        send(at, f"質問{i}")
    assert client.steps[:5] == ["reply"] * 5 and at.session_state["chat"]["review"][-1]["content"] == "A5"
    assert ":material/hourglass_top: 会話を要約しています…" in [c.value for c in at.caption]
    assert not [s.value for s in at.success if "要約しました" in s.value]
    assert "直近のターンでLLMに渡した内容と返答（1回の呼び出し）" in [e.label for e in at.expander]
    client.release()
    settle(at)
    assert "ターン1～5の会話を要約しました。次のターンから要約を使います。" in [s.value for s in at.success]
    assert ":material/hourglass_top: 会話を要約しています…" not in [c.value for c in at.caption]
    assert "直近のターンでLLMに渡した内容と返答（2回の呼び出し）" in [e.label for e in at.expander]
    run(at)  # the notice stays until the next question
    assert "ターン1～5の会話を要約しました。次のターンから要約を使います。" in [s.value for s in at.success]


def test_a_failed_summary_is_shown_on_top_with_a_retry(tmp_path) -> None:  # type: ignore[no-untyped-def]
    outputs: list[str | ProviderError] = [f"A{i}" for i in range(1, 6)]
    client = ReplayClient([*outputs, ProviderError("server_error"), "S1"])
    at = make_app(tmp_path, client=client, page=PAGE)
    for i in range(1, 6):
        send(at, f"質問{i}")
    settle(at)
    [warning] = [w.value for w in at.warning]
    assert warning.startswith("ターン1～5の会話の要約がありません。会話の要約を作成できませんでした（")
    at.button(key="review_retry_summary").click()
    run(at)
    settle(at)
    assert not at.warning
    assert "ターン1～5の会話を要約しました。次のターンから要約を使います。" in [s.value for s in at.success]
