"""Memory page (AppTest): the companion conversation is in the URL (`?companion=<id>`) and in the store, so a
new session of the app (a reload, or a restart of the server) opens it again, shows its turns and sends them
to the model; a message whose run was interrupted is stored before the model call and shown again."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from core.flows.memory.background import memory_job_key
from core.flows.memory.constants import TRAILER_MARKER
from core.flows.memory.conversation import load_conversation
from core.flows.memory.stores import memory_repository
from core.llm.base import LLMReply, LLMRequest, TextStream
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON, Person
from core.store import open_store
from pages.ui.shell.state import worker
from tests.pages.conftest import JOB_WAIT_S, make_app
from tests.pages.test_memory_page import TRAILER, j

PAGE = "pages/memory.py"
FIRST = "猫を飼い始めたよ。名前はミケ。"
FIRST_REPLY = "ミケちゃん、かわいい名前ですね！"
SECOND = "ミケの好きなおもちゃは何だと思う？"
SECOND_REPLY = "ねこじゃらしが好きかもしれませんね。"
INTERRUPTED = "明日は動物病院に連れていくんだ。"


def replying(text: str) -> ReplayClient:
    """One reply with a valid trailer, then an empty extraction and the bond summary."""
    empty = {"entities": {"entities": [], "relations": []}, "facts": {"facts": []}, "loops": {"loops": []}}
    bond = {"summary_text": "猫の話", "key_events": [], "bond_state": "はじまり"}
    return ReplayClient([text + "\n" + TRAILER_MARKER + "\n" + j(TRAILER), j(empty), j(bond)])


def restarted(tmp_path: Path, conversation_id: str, client: object) -> AppTest:
    """A new session of the app on the same store, opened at the page's URL (what a reload after a restart is)."""
    at = make_app(tmp_path, client=client)  # type: ignore[arg-type]
    at.query_params["companion"] = conversation_id
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def chat(at: AppTest, text: str) -> None:
    at.chat_input(key="memory_input").set_value(text).run()
    assert not at.exception, at.exception
    assert worker().wait(memory_job_key(LOCAL_PERSON.id), timeout=JOB_WAIT_S)


def shown_turns(at: AppTest) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in at.session_state["chat"]["memory"]]


def test_a_restarted_app_shows_the_conversation_and_sends_it_to_the_model(tmp_path: Path) -> None:
    first = make_app(tmp_path, client=replying(FIRST_REPLY), page=PAGE)
    chat(first, FIRST)
    conversation_id = first.query_params["companion"]
    assert len(conversation_id) == 32

    client = replying(SECOND_REPLY)
    again = restarted(tmp_path, conversation_id, client)
    assert shown_turns(again) == [("user", FIRST), ("assistant", FIRST_REPLY)]
    assert [m.name for m in again.chat_message] == ["user", "assistant"]
    assert not any("灯に話しかけてみてください" in i.value for i in again.info)  # not the intro again
    chat(again, SECOND)
    sent = client.requests[0].messages
    assert sent[0]["role"] == "system"
    assert sent[1:] == [
        {"role": "user", "content": FIRST},
        {"role": "assistant", "content": FIRST_REPLY},
        {"role": "user", "content": SECOND},
    ]
    assert again.query_params["companion"] == conversation_id
    repo = memory_repository(open_store(tmp_path), LOCAL_PERSON)
    stored = load_conversation(repo, conversation_id)
    assert [(i["role"], i["status"], i["content"], i["turn"]) for i in stored] == [
        ("user", "done", FIRST, 1),
        ("assistant", "done", FIRST_REPLY, 1),
        ("user", "done", SECOND, 2),
        ("assistant", "done", SECOND_REPLY, 2),
    ]


class InterruptedClient:
    """The model call never returns: the script run ends there (as when the server is killed mid-reply);
    `stored` is what the store held when the call started."""

    provider, model, sdk = "replay", "replay", "replay"
    base_host: str | None = None

    def __init__(self, tmp_path: Path, conversation_id: str) -> None:
        self.repo = memory_repository(open_store(tmp_path), LOCAL_PERSON)
        self.conversation_id = conversation_id
        self.stored: list[tuple[str, str, str]] = []

    def complete(self, request: LLMRequest) -> LLMReply:
        items = load_conversation(self.repo, self.conversation_id)
        self.stored = [(i["role"], i["status"], i["content"]) for i in items]
        st.stop()  # ends the script run, like the run a restart interrupts
        raise AssertionError("unreachable")

    def stream(self, request: LLMRequest) -> TextStream:
        return self.complete(request)  # type: ignore[return-value]


def test_a_message_whose_run_was_interrupted_is_stored_and_shown_again(tmp_path: Path) -> None:
    first = make_app(tmp_path, client=replying(FIRST_REPLY), page=PAGE)
    chat(first, FIRST)
    conversation_id = first.query_params["companion"]
    client = InterruptedClient(tmp_path, conversation_id)
    first.session_state["llm_client"] = client
    first.chat_input(key="memory_input").set_value(INTERRUPTED).run()
    # the message was in the store before the model was called
    assert client.stored == [
        ("user", "done", FIRST),
        ("assistant", "done", FIRST_REPLY),
        ("user", "pending", INTERRUPTED),
    ]

    again = restarted(tmp_path, conversation_id, replying("病院、気をつけていってらっしゃい。"))
    assert shown_turns(again) == [("user", FIRST), ("assistant", FIRST_REPLY), ("user", INTERRUPTED)]
    assert [w.value for w in again.warning] == [
        "この入力への返答がまだありません。入力した文は残っています。"
    ]
    again.button(key="memory_retry_turn").click().run()
    assert not again.exception, again.exception
    assert worker().wait(memory_job_key(LOCAL_PERSON.id), timeout=JOB_WAIT_S)
    assert shown_turns(again) == [
        ("user", FIRST),
        ("assistant", FIRST_REPLY),
        ("user", INTERRUPTED),
        ("assistant", "病院、気をつけていってらっしゃい。"),
    ]


def test_another_persons_conversation_id_opens_an_empty_conversation(tmp_path: Path) -> None:
    first = make_app(tmp_path, client=replying(FIRST_REPLY), page=PAGE)
    chat(first, FIRST)
    conversation_id = first.query_params["companion"]
    bob = memory_repository(open_store(tmp_path), Person("bob", "ボブ"))
    assert load_conversation(bob, conversation_id) == []
