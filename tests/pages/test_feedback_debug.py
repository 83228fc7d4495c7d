"""AppTest: a reply rated 👎 on a flow page is found on the debug page (issue #9 item 6): the calls of that
turn carry the rating (評価), the filter 「👎 と評価されたターンの呼び出し」 keeps exactly them, and the tree
shows the rating on the turn. Trace ids (core.debuglog.trace) and ratings (core.flows.feedback) name turns alike."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.pages.conftest import make_app
from tests.pages.test_feedback_pages import COMMENT, rate_down_with_comment, run


def negative_rows(at: AppTest) -> list[tuple[str, str, int, str]]:
    """On the debug page's call table, with the 👎 filter on: (flow, conversation, turn, 評価) per row."""
    at.session_state["debug_tab"] = "呼び出し一覧"
    at.switch_page("pages/debug_log.py")
    run(at)
    at.checkbox(key="debug_filter_negative").check()
    run(at)
    table = at.dataframe(key="debug_calls_table").value
    return list(zip(table["フロー"], table["会話"], table["ターン"], table["評価"], strict=True))


def expected(at: AppTest, flow: str, conversation: str, turn: int) -> int:
    """How many model calls (attempts) the session's log holds for that turn."""
    return sum(
        1
        for e in at.session_state["debug_logs"]
        if e.kind in ("call", "error") and (e.flow, e.conversation_id, e.turn) == (flow, conversation, turn)
    )


def test_a_review_reply_rated_down_is_found_with_its_calls(tmp_path: Path) -> None:
    at = make_app(tmp_path, page="pages/review_chat.py")
    at.session_state["review_demo_request"] = True
    run(at)
    thread = str(at.session_state["review_thread_id"])
    at.text_area(key="review_draft").input("§3 の評価は？")
    at.button(key="review_send").click()
    run(at)
    rate_down_with_comment(at, f"feedback_review_{thread}_2")
    calls = expected(at, "review", thread, 2)
    assert calls >= 1 and expected(at, "review", thread, 1) >= 1
    assert negative_rows(at) == [("答案レビュー", thread, 2, f"低評価「{COMMENT}」")] * calls
    at.session_state["debug_tab"] = "トレース"
    run(at)
    tree = next(m.value for m in at.markdown if m.value.startswith("- **ターン 1**"))
    assert (
        f"**ターン 2** ・ {calls} 呼び出し" in tree and f":material/thumb_down: 低評価「{COMMENT}」" in tree
    )


def test_a_diagnosis_reply_rated_down_is_found_with_the_calls_of_its_request(tmp_path: Path) -> None:
    at = make_app(tmp_path, page="pages/diagnosis.py")
    at.session_state["diagnosis_demo_request"] = True
    run(at)
    session = at.session_state["diagnosis_session_id"]
    next(b for b in at.button if b.label == "エンジン警告灯").click()
    run(at)
    positions = sorted({e.turn for e in at.session_state["debug_logs"] if e.conversation_id == session})
    rated = positions[-1]  # the reply of the newest request that called the model
    rate_down_with_comment(at, f"feedback_diagnosis_{session}_{rated}")
    calls = expected(at, "diagnosis", session, rated)
    assert calls >= 1
    assert negative_rows(at) == [("車両診断", session, rated, f"低評価「{COMMENT}」")] * calls
