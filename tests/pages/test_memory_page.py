"""Memory page (AppTest): a chat turn becomes an episode with extraction and a trace; browser edit and revert."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.flows.memory.constants import TRAILER_MARKER
from core.llm.replay import ReplayClient
from tests.pages.conftest import make_app

PAGE = "pages/memory.py"
USER = "同僚の田中さんと新宿でラーメンを食べた。ラーメンが大好き。"
REPLY = "いいですね！田中さんとのラーメン、楽しそうです。"
TRAILER = {
    "reflection_text": "嬉しい報告",
    "persona_affect_label": "joy",
    "persona_affect_intensity": 0.6,
    "topic_tags": ["ラーメン"],
    "salience": 0.7,
    "confidence": 0.8,
    "persona_response_policy": {"cooperation": 0.9, "refusal_bias": 0.1, "refusal_allowed": False},
}
ENTITIES = {
    "entities": [
        {
            "type_label": "PERSON",
            "roles": ["colleague"],
            "name": "田中",
            "aliases": ["田中さん"],
            "confidence": 0.9,
        }
    ],
    "relations": [],
}
FACTS = {
    "facts": [
        {
            "subject": {"type_label": "PERSON", "name": "SPEAKER"},
            "predicate": "likes",
            "object_text": "ラーメン",
            "object": None,
            "confidence": 0.8,
            "validity": {"from": None, "to": None},
        }
    ]
}


def j(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def app(tmp_path: Path, client: ReplayClient) -> AppTest:
    at = make_app(tmp_path, client=client, page=PAGE)
    return at


def replay() -> ReplayClient:
    bond = {"summary_text": "ラーメンの話", "key_events": [], "bond_state": "はじまり"}
    person = {
        "summary_text": "田中さんは同僚",
        "favorability_score": 0.6,
        "favorability_reasons": [],
        "key_events": [],
        "notes": None,
    }
    return ReplayClient(
        [
            REPLY + "\n" + TRAILER_MARKER + "\n" + j(TRAILER),
            j(ENTITIES),
            j(FACTS),
            j({"loops": []}),
            j(bond),
            j(person),
        ]
    )


def test_chat_turn_shows_episode_extraction_and_trace(tmp_path: Path) -> None:
    client = replay()
    at = app(tmp_path, client)
    assert not at.exception
    at.chat_input(key="memory_input").set_value(USER).run()
    assert not at.exception, at.exception
    history = at.session_state["chat"]["memory"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"] == REPLY and TRAILER_MARKER not in history[1]["content"]
    details = history[1]["details"]
    assert details["episode_id"] == 1 and details["trailer"] == TRAILER
    assert details["extraction"]["facts"][0]["object_text"] == "ラーメン"
    assert any(REPLY in m.value for m in at.markdown)
    assert not any(TRAILER_MARKER in m.value for m in at.markdown)
    assert any("このターンの記憶" in e.label for e in at.expander)
    # Browser tab: the episode row, and the fact with its provenance back to the episode.
    at.session_state["memory_unit_id"] = 2  # the fact
    at.run()
    assert any(b.label == "→ エピソード #1" for b in at.button)
    assert any("ユーザーが好きなもの:ラーメン" in t.value for t in at.text)
    assert client.remaining == 0
    at.session_state["memory_unit_id"] = 1  # the episode: its trace and extraction
    at.run()
    assert any(e.label.startswith("この会話の検索トレース") for e in at.expander)
    assert any(f"Q1: {USER}" in t.value for t in at.text)
    assert any(b.label == "→ 事実 #2" for b in at.button)  # provenance back: episode -> fact


def test_search_tab_shows_queries_lanes_and_scores(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    at.chat_input(key="memory_input").set_value(USER).run()
    at.text_input(key="memory_search_query").set_value("ラーメンの話、覚えてる？")
    at.button(key="memory_search_run").click().run()
    assert not at.exception
    assert any("Q1" in m.value and "ラーメンの話" in m.value for m in at.markdown)
    assert any("trigram/Q1" in m.value for m in at.markdown)
    assert any("スコア表" in m.value for m in at.markdown)
    assert any("## 関連する記憶" in t.value for t in at.text)


def test_edit_and_revert_in_browser(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    at.chat_input(key="memory_input").set_value(USER).run()
    from core.flows.memory.indexing import memory_collection
    from core.flows.memory.versions import edit_unit, versions_of
    from core.store import open_store
    from core.vectors import open_chroma

    # An analyst's edit (what 変更を保存 does through apply_edits), then revert from the page.
    engine = open_store(tmp_path)
    edit_unit(
        engine,
        memory_collection(open_chroma(tmp_path)),
        1,
        {"input_text": "鎌倉で海鮮丼を食べた"},
        1_900_000_000,
    )
    at.session_state["memory_unit_id"] = 1
    at.run()
    assert any("鎌倉で海鮮丼を食べた" in t.value for t in at.text)
    at.selectbox(key="memory_revert_version").set_value(1)
    at.button(key="memory_revert").click().run()
    assert not at.exception
    assert [v["change_kind"] for v in versions_of(engine, 1)] == ["create", "edit", "revert"]
    assert any(USER in t.value for t in at.text)
    assert any("v1 の内容に戻しました" in s.value for s in at.success)


def test_one_click_demo_loads_samples_and_first_exchange(tmp_path: Path) -> None:
    at = make_app(tmp_path)  # demo model, home page
    at.session_state["memory_demo_request"] = True
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    history = at.session_state["chat"]["memory"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"].startswith("（デモ）") and TRAILER_MARKER not in history[1]["content"]
    assert history[1]["details"]["memories"], "the sample memories should be found for the first message"
    assert any("エピソード 201" in m.value for m in at.markdown)
    assert any("デモモデル" in c.value for c in at.caption)
