"""Memory page (AppTest): a chat turn becomes an episode with extraction and a trace; browser edit and revert.

Extraction and summaries run on the process's background worker: `settle` waits for it and reruns the page,
which reads what landed from the store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.flows.memory.background import memory_job_key
from core.flows.memory.constants import TRAILER_MARKER
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.memory.versions import edit_unit, versions_of
from core.llm.base import ProviderError
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from pages.ui.shell.state import worker
from tests.core.gated_client import GatedClient
from tests.pages.conftest import JOB_WAIT_S, make_app

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


@pytest.fixture(autouse=True)
def no_job_left_behind() -> Iterator[None]:
    """Each test ends with the shared worker idle (its jobs write to this test's data dir)."""
    yield
    assert worker().wait(memory_job_key(LOCAL_PERSON.id), timeout=JOB_WAIT_S)


def settle(at: AppTest) -> AppTest:
    """Let the background jobs finish, then rerun the page (what the status fragment does by itself)."""
    assert worker().wait(memory_job_key(LOCAL_PERSON.id), timeout=JOB_WAIT_S)
    at.run()
    assert not at.exception, at.exception
    return at


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
            j({"entities": ENTITIES, "facts": FACTS, "loops": {"loops": []}}),  # one extraction call
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
    settle(at)
    history = at.session_state["chat"]["memory"]
    assert [(m["role"], m["status"], m["turn"]) for m in history] == [
        ("user", "done", 1),
        ("assistant", "done", 1),
    ]
    assert history[1]["content"] == REPLY and TRAILER_MARKER not in history[1]["content"]
    assert TRAILER_MARKER in history[1]["raw"]  # the full output, for the debug view
    details = history[1]["meta"]["details"]
    assert details["episode_id"] == 1 and details["trailer"] == TRAILER
    assert details["extraction"]["facts"][0]["object_text"] == "ラーメン"
    assert details["summaries"] == ["絆サマリー（直近7日）を作成", "人物サマリー「田中」を作成"]
    assert details["mood"].startswith("現在の気分: 平静（喜び 0.00、")
    assert any(REPLY in m.value for m in at.markdown)
    assert not any(TRAILER_MARKER in m.value for m in at.markdown)
    assert any("このターンの記憶" in e.label for e in at.expander)
    # The shared last-call view: every model call of the turn (reply, then the job's extraction and 2 summaries).
    calls = at.session_state["memory_last_call"]
    assert [c["step"] for c in calls] == ["chat", "extract_all", "summary_bond", "summary_person"]
    assert calls[0]["messages"][-1] == {"role": "user", "content": USER} and TRAILER_MARKER in calls[0]["raw"]
    assert any(e.label == "直近のターンでLLMに渡した内容と返答（4回の呼び出し）" for e in at.expander)
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
    trace = next(e for e in at.expander if e.label.startswith("この会話の検索トレース"))
    # The first turn had an empty store: nothing was injected, and the trace says so in Japanese.
    assert trace.caption[0].value == "注入: 記憶 なし・事実 なし・約束 なし・絆サマリー なし"
    assert any(b.label == "→ 事実 #2" for b in at.button)  # provenance back: episode -> fact


def test_search_tab_shows_queries_lanes_and_scores(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    settle(at.chat_input(key="memory_input").set_value(USER).run())
    at.text_input(key="memory_search_query").set_value("ラーメンの話、覚えてる？")
    at.button(key="memory_search_run").click().run()
    assert not at.exception
    assert any(t.value == "Q1（入力）: ラーメンの話、覚えてる？" for t in at.text)
    assert any("Q2（直近の会話 + 入力）" in t.value and USER in t.value for t in at.text)
    assert any(m.value.startswith("**キーワード（3文字以上） / Q1**（") for m in at.markdown)
    assert any(m.value.startswith("**ベクトル（類似度 0.2 以上） / Q1**") for m in at.markdown)
    # The explanation names the vector floor, which is ours and not the public design's.
    how = next(e for e in at.expander if e.label == "検索の仕組みとしきい値")
    text = "".join(m.value for m in how.markdown)
    assert "0.2 未満は除外" in text and "独自のしきい値" in text and "1/(60+r+1)" in text
    scores = next(m for m in at.markdown if m.value.startswith("#### スコア表"))
    # the formula the rerank uses (core.flows.memory.scoring.final_score): a memory matches by its words or its meaning
    assert scores.value == (
        "#### スコア表（最終スコア = 0.55·順位統合 + 0.35·max(語の重なり, 意味の近さ) + 0.10·新しさ）"
    )
    assert any(m.value.startswith("**語（Sudachi の正規形・同義語） / Q1**（") for m in at.markdown)
    table = at.dataframe[-1].value  # the fact scores
    assert list(table.columns) == ["ID", "内容", "確信度", "重要度", "新しさ", "固定", "スコア"]
    assert table.loc[0, "内容"] == "ユーザーが好きなもの:ラーメン"
    score_table = next(d.value for d in at.dataframe if "判定" in d.value.columns)
    assert score_table.loc[0, "判定"] == "採用" and score_table.loc[0, "種類"] == "会話"
    assert "意味の近さ" in score_table.columns
    assert any("## 関連する記憶" in t.value for t in at.text)
    # The result stays on screen after an unrelated rerun.
    at.checkbox(key="memory_search_history").uncheck().run()
    assert any(t.value == "Q1（入力）: ラーメンの話、覚えてる？" for t in at.text)


def test_empty_search_shows_a_japanese_warning(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    at.button(key="memory_search_run").click().run()
    assert not at.exception
    assert [w.value for w in at.warning] == ["検索したい発話を入力してください。"]


def test_edit_and_revert_in_browser(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    settle(at.chat_input(key="memory_input").set_value(USER).run())
    # An analyst's edit (what 変更を保存 does through apply_edits), then revert from the page.
    repo = memory_repository(open_store(tmp_path), LOCAL_PERSON)
    edit_unit(
        repo,
        memory_collection(open_chroma(tmp_path), LOCAL_PERSON),
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
    assert [v.change_kind for v in versions_of(repo, 1)] == ["create", "edit", "revert"]
    assert any(USER in t.value for t in at.text)
    assert any("v1 の内容に戻しました" in s.value for s in at.success)


def test_one_click_demo_loads_samples_and_first_exchange(tmp_path: Path) -> None:
    at = make_app(tmp_path)  # demo model, home page
    at.session_state["memory_demo_request"] = True
    settle(at.switch_page(PAGE).run())
    history = at.session_state["chat"]["memory"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"].startswith("（デモ）") and TRAILER_MARKER not in history[1]["content"]
    assert history[1]["meta"]["details"]["memories"], (
        "the sample memories should be found for the first message"
    )
    assert any("エピソード 201" in m.value for m in at.markdown)
    assert any("デモモデル" in c.value for c in at.caption)
    # A second click does not add the same 200 episodes again.
    at.button(key="memory_load_samples").click().run()
    assert not at.exception, at.exception
    assert at.success[0].value.startswith("サンプル記憶はすでに読み込まれています")
    assert any("エピソード 201" in m.value for m in at.markdown)


def test_a_failing_turn_keeps_the_input_and_explains_in_japanese(tmp_path: Path) -> None:
    at = app(tmp_path, ReplayClient([]))  # the model call raises (no recorded output)
    at.chat_input(key="memory_input").set_value(USER).run()
    assert not at.exception, at.exception
    history = at.session_state["chat"]["memory"]
    assert history[0] == {"role": "user", "content": USER, "status": "error", "turn": 1}
    assert history[1]["status"] == "error" and "入力した文は残っています" in history[1]["content"]
    assert [e.value for e in at.error] == [history[1]["content"]]
    assert "Exhausted" not in history[1]["content"] and "Error" not in history[1]["content"]
    assert any(b.label == "再試行" for b in at.button)  # issue 12: the shared card's 再試行
    # 再送 with a model that answers: the failed rally is replaced by a done one.
    at.session_state["llm_client"] = replay()
    at.button(key="memory_retry_turn").click().run()
    assert not at.exception, at.exception
    history = at.session_state["chat"]["memory"]
    assert [(m["role"], m["status"], m["content"]) for m in history] == [
        ("user", "done", USER),
        ("assistant", "done", REPLY),
    ]
    assert not at.error


def test_toolbar_failure_is_a_japanese_error(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    settle(at.chat_input(key="memory_input").set_value(USER).run())
    at.button(key="memory_run_summaries").click().run()  # the replay has no outputs left: the call raises
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["サマリーの作成中にエラーが発生しました。"]


def test_hard_delete_from_the_page_cascades_and_reports(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    settle(at.chat_input(key="memory_input").set_value(USER).run())
    at.session_state["memory_unit_id"] = 1
    at.run()
    assert at.button(key="memory_hard_delete").disabled
    at.checkbox(key="memory_confirm_hard").check().run()
    at.button(key="memory_hard_delete").click().run()
    assert not at.exception, at.exception
    notice = at.success[0].value
    assert notice.startswith("#1 を完全に削除しました") and "も削除しました" in notice
    assert "検索トレース 1 件" in notice
    assert at.session_state["memory_unit_id"] == 0
    assert any("エピソード 0 ・ 事実 0" in m.value for m in at.markdown)


def test_entity_and_edge_tables_filter_and_page(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    settle(at.chat_input(key="memory_input").set_value(USER).run())
    at.session_state["memory_table"] = "エンティティ"
    at.run()
    assert not at.exception, at.exception
    entities = at.dataframe[0].value
    assert list(entities.columns) == ["ID", "種類", "名前", "別名", "役割", "確信度", "記憶の数"]
    assert sorted(entities["名前"]) == ["ユーザー", "田中"]
    at.text_input(key="memory_g_name").set_value("田中").run()
    assert list(at.dataframe[0].value["名前"]) == ["田中"]
    assert any(c.value.startswith("1 件中 1 件を表示（1/1 ページ）") for c in at.caption)
    at.session_state["memory_g_page"] = 5  # beyond the last page: shows the last page, no error
    at.run()
    assert not at.exception and list(at.dataframe[0].value["名前"]) == ["田中"]


def test_the_input_is_free_while_memory_is_organised_and_results_land(tmp_path: Path) -> None:
    client = GatedClient(replay(), gated={"extract_all"})
    at = app(tmp_path, client)
    at.chat_input(key="memory_input").set_value(USER).run()
    assert not at.exception, at.exception
    # the reply is shown and the input usable again; the job waits on the gate (or has not started yet)
    assert client.steps in (["chat"], ["chat", "extract_all"])
    assert any(c.value == ":material/hourglass_top: 記憶を整理しています…" for c in at.caption)
    details = at.session_state["chat"]["memory"][1]["meta"]["details"]
    assert details["pending"] and details["extraction"] is None
    assert any(c.value.startswith("記憶を整理しています…（抽出とサマリーは") for c in at.caption)
    assert any(e.label == "直近のターンでLLMに渡した内容と返答（1回の呼び出し）" for e in at.expander)
    client.release()
    settle(at)
    assert not any("記憶を整理しています" in c.value for c in at.caption)  # no status line, no timer
    details = at.session_state["chat"]["memory"][1]["meta"]["details"]
    assert not details["pending"] and details["extraction"]["facts"][0]["object_text"] == "ラーメン"
    assert details["summaries"] == ["絆サマリー（直近7日）を作成", "人物サマリー「田中」を作成"]
    assert any(e.label == "直近のターンでLLMに渡した内容と返答（4回の呼び出し）" for e in at.expander)
    assert any("エピソード 1 ・ 事実 1" in m.value for m in at.markdown)


def test_a_failed_extraction_is_shown_on_top_until_a_retry_succeeds(tmp_path: Path) -> None:
    outputs: list[str | ProviderError] = [
        REPLY + "\n" + TRAILER_MARKER + "\n" + j(TRAILER),
        ProviderError("timeout", "slow"),  # the extraction call fails; nothing is due to retry yet
        *replay().outputs[2:],  # the summaries
        replay().outputs[1],  # 再試行: the extraction
    ]
    at = app(tmp_path, ReplayClient(outputs))
    settle(at.chat_input(key="memory_input").set_value(USER).run())
    [warning] = [w.value for w in at.warning if w.value.startswith("記憶の整理")]
    assert warning.startswith("記憶の整理（内省・抽出）が済んでいない会話が 1 件あります。")
    assert (
        "#1「同僚の田中さんと新宿でラーメンを食べた。ラーメンが大好き。」: 抽出に失敗（人物・関係・事実・約束: LLM呼び出しエラー"
        in warning
    )
    assert at.session_state["chat"]["memory"][1]["meta"]["details"]["extract_state"] == "failed"
    at.button(key="memory_retry_background").click().run()
    settle(at)
    assert not at.warning and not at.exception
    details = at.session_state["chat"]["memory"][1]["meta"]["details"]
    assert (
        details["extract_state"] == "done" and details["extraction"]["facts"][0]["object_text"] == "ラーメン"
    )


def test_a_grid_edit_after_the_unit_changed_underneath_shows_both_and_keeps_the_edit(tmp_path: Path) -> None:
    at = app(tmp_path, replay())
    settle(at.chat_input(key="memory_input").set_value(USER).run())
    editor = "memory_editor_EPISODE_0"
    at.session_state[editor] = {
        "edited_rows": {0: {"input_text": "私の編集"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()  # the person has an unsaved edit in the table
    repo = memory_repository(open_store(tmp_path), LOCAL_PERSON)
    edit_unit(repo, None, 1, {"reply_text": "別の人の編集"}, 1_900_000_000)  # meanwhile, elsewhere
    at.button(key="memory_save_EPISODE").click().run()
    assert not at.exception
    assert [v.version for v in versions_of(repo, 1)] == [1, 2]  # not applied on top silently
    (warning,) = [w.value for w in at.warning]
    assert "表を開いた後に別の操作で変更されました（v1 → v2）" in warning
    (table,) = [d.value for d in at.dataframe if "あなたの編集" in d.value.columns]
    assert table.to_dict("records") == [{"項目": "ユーザー", "あなたの編集": "私の編集", "現在の内容": USER}]
    assert not any("変更はありませんでした" in s.value for s in at.success)
    at.button(key="memory_stale_keep_1").click().run()
    snapshot = versions_of(repo, 1)[-1].snapshot
    assert (snapshot["input_text"], snapshot["reply_text"]) == ("私の編集", "別の人の編集")
    assert not at.warning and any("あなたの編集で保存しました（v3）" in s.value for s in at.success)
