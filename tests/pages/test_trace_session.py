"""AppTest: a page's turn logs under this browser session (pages/ui/last_call.capture binds its id)."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

from core.llm.replay import ReplayClient
from tests.pages.conftest import make_app

PAGE = "pages/knowledge.py"


def turn(message: str) -> str:
    return json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": "interview"},
            "state": {"phase": "collect_case", "missing_info": ["契約書の種類"]},
            "assistant_message": message,
            "knowledge_json": None,
        },
        ensure_ascii=False,
    )


def send(at: AppTest, text: str) -> None:
    at.chat_input(key="knowledge_input").set_value(text)
    at.run()
    assert not at.exception, at.exception


def test_turns_carry_the_browser_session_conversation_and_turn(tmp_path):
    client = ReplayClient(
        [turn("契約の種類を教えてください。"), turn("相手方の業種は？"), turn("了解です。")]
    )
    at = make_app(tmp_path, client=client, page=PAGE)
    session_id = at.session_state["app_session_id"]
    assert re.fullmatch(r"[0-9a-f]{12}", session_id)
    send(at, "秘密保持期間を3年に限定されました")
    send(at, "相手方は製造業です")
    interview = at.session_state["knowledge_interview_id"]
    calls = [e for e in at.session_state["debug_logs"] if e.kind == "call"]
    assert [(e.session_id, e.flow, e.conversation_id, e.turn, e.parent_id) for e in calls] == [
        (session_id, "knowledge", interview, 1, ""),
        (session_id, "knowledge", interview, 2, ""),
    ]
    assert [e.user_input for e in calls] == ["秘密保持期間を3年に限定されました", "相手方は製造業です"]

    other = make_app(tmp_path, client=client, page=PAGE)  # another browser session: another id
    send(other, "別の相談です")
    (call,) = [e for e in other.session_state["debug_logs"] if e.kind == "call"]
    assert call.session_id == other.session_state["app_session_id"] != session_id
    assert call.conversation_id != interview and call.turn == 1
