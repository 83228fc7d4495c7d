"""AppTest: the debug page's tabs over a hand-made log — the trace tree, a repaired call's diff, the
settings as sent, cost sums, the notes filters, the deep link from query parameters, and the link in
a page's "last turn" expander."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from core.debuglog.events import DebugEvent, events_to_jsonl
from core.jobs.job_log import StoredCallSink
from core.people import LOCAL_PERSON
from core.settings import Settings
from core.store import open_store
from core.workbench.tree import build_tree
from pages.ui.debug.trace_tree import tree_markdown
from tests.debug_logs import DOWNGRADE, SHORT_NOTE, T0, sample_log
from tests.pages.conftest import APP, make_app


def debug_page(tmp_path, tab=None, query=None, debug=True):
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = Settings(data_dir=tmp_path)
    at.session_state["app_debug"] = debug
    at.run()
    at.session_state["debug_logs"] = sample_log()
    if tab:
        at.session_state["debug_tab"] = tab
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page("pages/debug_log.py")
    at.run()
    assert not at.exception
    return at


def frame(at, *columns):
    """The one table on screen with these columns (tables without selection have no widget key)."""
    (found,) = [d.value for d in at.dataframe if set(columns) <= set(d.value.columns)]
    return found


def markdown(at):
    return [m.value for m in at.markdown]


def test_trace_tab_shows_the_conversation_tree_and_the_newest_call(tmp_path):
    at = debug_page(tmp_path)
    picker = at.selectbox(key="debug_conversation")
    assert picker.options == [
        "コンパニオン記憶 ・ 09/21 23:13 ・ （会話IDなし） — 1 ターン・1 呼び出し",
        "答案レビュー ・ 09/21 23:13 ・ ID th-7 — 1 ターン・2 呼び出し",
        "ナレッジ聞き取り ・ 09/21 23:13 ・ 「秘密保持契約の審査で迷った事例です。」 — 2 ターン・2 呼び出し",
    ]
    assert picker.value == 2  # the newest conversation (memory) comes first
    picker.set_value(1).run()
    tree = next(m for m in markdown(at) if m.startswith("- **ターン 1**"))
    lines = tree.splitlines()
    # the turn's elapsed time (first call's start to its last event) beside the models' own time
    assert lines[0] == "- **ターン 1** ・ 2 呼び出し ・ 経過 2,500 ms ・ モデル時間 2,200 ms ・ USD 0\\.0255"
    assert lines[1].startswith(
        "    - :green-badge[成功] **返答** ・ claude\\-sonnet\\-4\\-5 ・ 試行 1 ・ 1,000 ms"
    )
    assert lines[2].startswith(
        "        - :green-badge[成功] **会話の要約**"
    )  # the summary hangs under the reply
    assert [(m.label, m.value) for m in at.metric][:4] == [
        ("ターン", "1"),
        ("呼び出し", "2"),
        ("入力トークン", "5,000"),
        ("出力トークン", "700"),
    ]
    assert "**この会話の費用**: USD 0\\.0255" in markdown(at)
    call = at.selectbox(key="debug_trace_call")
    assert call.options == [
        "ターン 1 ▸ 返答 ・ 試行 1 ・ 成功",
        "ターン 1 ▸ └ 会話の要約 ・ 試行 1 ・ 成功",
    ]
    assert any(m == "**ターン 1 のレイテンシ（ウォーターフォール）**" for m in markdown(at))
    assert len(at.get("vega_lite_chart")) == 1


def test_a_repaired_call_shows_settings_tokens_notes_diff_and_attempts(tmp_path):
    at = debug_page(tmp_path)
    at.selectbox(key="debug_conversation").set_value(0).run()  # knowledge iv-1
    at.selectbox(key="debug_trace_call").set_value(0).run()  # turn 1: the repaired call
    settings = frame(at, "項目")
    assert dict(zip(settings["項目"], settings["値"], strict=True)) == {
        "プロバイダー / モデル": "OpenAI・互換サーバー / gpt-4.1-mini",
        "温度（temperature）": "0.2",
        "最大出力トークン": "1,200",
        "応答形式": "json_schema strict、スキーマ名 Turn、strict=true",
        "リクエストID": "req_k1a",
        "接続先ホスト": "api.openai.com",
        "SDK": "openai 1.99.0",
        "最初のトークンまで": "-",
        "レイテンシ": "2,000 ms",
    }
    metrics = {m.label: m.value for m in at.metric}
    # (1000*0.40 + 200*0.10 + 300*1.60) + (500*0.40 + 1000*0.10 + 200*1.60) = 1520 per 1M tokens
    assert metrics["入力トークン"] == "2,700" and metrics["うちキャッシュ"] == "1,200"
    assert metrics["出力トークン"] == "500"
    assert "**この呼び出しの費用（全試行）**: USD 0\\.00152" in markdown(at)
    assert any(m.startswith("- 【短い・空の返答】assistant") for m in markdown(at))
    paths = frame(at, "パス")
    assert list(zip(paths["パス"], paths["変化"], strict=True)) == [
        ("$.control.mode", "変更"),
        ("$.state.phase", "変更"),
        ("$.state.missing_info", "追加"),
        ("$.assistant_message", "変更"),
        ("$.knowledge_json", "追加"),
    ]
    fixes = frame(at, "ローカル修復")
    assert list(fixes["ローカル修復"]) == ["コードブロックの囲みを除去", "なし"]
    codes = [c.value for c in at.code]
    assert "秘密保持契約の審査で迷った事例です。" in codes  # request messages
    assert any(
        c.startswith("以下は、あなたが直前に出力した JSON 文字列です。") for c in codes
    )  # repair prompt
    assert any(m.startswith("##### 試行 2（修復の返答）: 成功") for m in markdown(at))


def test_cost_tab_sums_per_flow_session_and_conversation(tmp_path):
    at = debug_page(tmp_path, tab="コストと傾向")
    metrics = {m.label: m.value for m in at.metric}
    assert "**費用（合計）**: USD 0\\.0275 ＋ 価格未設定（local\\-llm）" in markdown(at)
    assert (metrics["モデル呼び出し"], metrics["入力トークン"], metrics["うちキャッシュ"]) == (
        "6",
        "8,550",
        "1,200",
    )
    flows = frame(at, "フロー", "費用")
    assert list(zip(flows["フロー"], flows["費用"], strict=True)) == [
        ("ナレッジ聞き取り", "USD 0.002"),
        ("答案レビュー", "USD 0.0255"),
        ("コンパニオン記憶", "価格未設定（local-llm）"),
    ]
    sessions = frame(at, "セッション")
    assert list(zip(sessions["セッション"], sessions["費用"], strict=True)) == [
        ("sess-a", "USD 0.0275"),
        ("（セッションIDなし）", "価格未設定（local-llm）"),
    ]
    latency = frame(at, "p95(ms)")
    assert list(latency["モデル"]) == [
        "Anthropic / claude-sonnet-4-5",
        "OpenAI・互換サーバー / gpt-4.1-mini",
        "OpenAI・互換サーバー / local-llm",
    ]


def test_call_table_filters_calls_with_notes_and_by_note_kind(tmp_path):
    at = debug_page(tmp_path, tab="呼び出し一覧")
    assert len(at.dataframe(key="debug_calls_table").value) == 6
    at.checkbox(key="debug_filter_notes").check().run()
    table = at.dataframe(key="debug_calls_table").value
    assert list(table["メモ"]) == [SHORT_NOTE, DOWNGRADE]
    kinds = at.button_group(key="debug_filter_note_kinds")  # pills: no English 「Select all」
    assert kinds.options == ["短い・空の返答", "形式の格下げ"]
    kinds.set_value(["形式の格下げ"]).run()
    table = at.dataframe(key="debug_calls_table").value
    assert list(table["メモ"]) == [DOWNGRADE] and list(table["費用"]) == ["USD 0.00048"]


def test_deep_link_opens_the_conversation_its_turn_and_call(tmp_path):
    at = debug_page(
        tmp_path, tab="エクスポート", query={"flow": "review", "conversation": "th-7", "call": "s1"}
    )
    assert at.session_state["debug_tab"] == "トレース"  # the link brings the trace tab forward
    assert at.selectbox(key="debug_conversation").value == 1
    assert at.selectbox(key="debug_trace_call").value == 1  # the summary call
    at.selectbox(key="debug_trace_call").set_value(
        0
    ).run()  # the person moves on: the link does not pull back
    assert at.selectbox(key="debug_trace_call").value == 0


def test_deep_link_by_turn_and_to_a_missing_conversation(tmp_path):
    at = debug_page(tmp_path, query={"flow": "knowledge", "conversation": "iv-1", "turn": "2"})
    assert at.selectbox(key="debug_conversation").value == 0  # the tree's first conversation
    assert at.selectbox(key="debug_trace_call").value == 1  # turn 2's call
    at = debug_page(tmp_path, query={"flow": "knowledge", "conversation": "gone"})
    assert [w.value for w in at.warning] == [
        "リンク先の会話はこのログにありません（記録がオフだったか、ログを消去したか、古い記録が上限で削除された可能性があります）。"
    ]


def test_events_without_trace_fields_group_per_flow(tmp_path):
    at = make_app(tmp_path)
    at.session_state["debug_logs"] = [
        DebugEvent("review", "chat", "call", ts=10.0, latency_ms=5, ok=True, raw="x"),
        DebugEvent("review", "chat", "call", ts=11.0, latency_ms=5, ok=True, raw="y"),
    ]
    at.switch_page("pages/debug_log.py")
    at.run()
    assert not at.exception
    assert at.selectbox(key="debug_conversation").options == [
        "答案レビュー ・ 01/01 09:00 ・ （会話IDなし） — 1 ターン・2 呼び出し"
    ]


def test_last_turn_expander_links_to_the_tree_and_says_when_nothing_is_recorded(tmp_path):
    at = make_app(tmp_path, page="pages/review_chat.py")
    at.session_state["review_last_call"] = [
        {
            "flow": "review",
            "step": "reply",
            "attempt": 1,
            "schema": None,
            "messages": [],
            "raw": "x",
            "ok": True,
            "error_type": None,
            "errors": [],
            "fixes": [],
            "call_id": "r1",
            "conversation_id": "th-7",
            "turn": 3,
        }
    ]
    at.run()
    links = at.get("page_link")
    assert [(link.proto.label, link.proto.page) for link in links if "デバッグログ" in link.proto.label] == [
        ("このターンをデバッグログで開く", "debug_log")
    ]
    link = next(link for link in links if "デバッグログ" in link.proto.label)
    assert link.proto.query_string == "flow=review&conversation=th-7&turn=3&call=r1"
    at.session_state["app_debug"] = False
    at.run()
    assert any(
        c.value.startswith("記録がオフのため、このターンはデバッグログに記録されていません")
        for c in at.caption
    )


def test_an_imported_export_is_shown_and_a_broken_one_is_a_japanese_error(tmp_path):
    at = make_app(tmp_path, page="pages/debug_log.py")
    text = events_to_jsonl(sample_log())
    at.get("file_uploader")[0].upload("katachi-debug.jsonl", text.encode("utf-8")).run()
    assert not at.exception
    notice = "読み込んだログ「katachi\\-debug\\.jsonl」（12 件）を表示しています。"
    assert next(i.value for i in at.info) == notice
    assert len(at.selectbox(key="debug_conversation").options) == 3
    at.button(key="debug_back_to_session").click().run()
    assert "debug_imported" not in at.session_state
    broken = json.dumps({"flow": "x", "step": "s", "kind": "call", "usage": "lots"}) + "\n"
    at = make_app(tmp_path, page="pages/debug_log.py")
    at.get("file_uploader")[0].upload("broken.jsonl", broken.encode("utf-8")).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "ログを読み込めませんでした。次の点を確認してください。\n\n"
        "- 1行目: usage を「トークン数（0以上の整数）の表」にしてください。"
    ]
    assert "debug_imported" not in at.session_state


def test_the_job_queue_shows_the_engine_counts_and_failures(tmp_path):
    at = debug_page(tmp_path)
    (queue,) = [e for e in at.expander if e.label == "バックグラウンド処理のキュー"]
    assert any(c.value == "ジョブエンジン: このプロセス内のワーカー" for c in queue.caption)
    assert [m.label for m in queue.metric] == ["待機中", "実行中", "完了", "失敗", "最古の待機"]


def test_a_step_that_holds_only_notes_is_a_step_line_without_model_columns():
    note = DebugEvent(
        step="interview_turn",
        kind="note",
        call_id="s1",
        ts=T0,
        flow="diagnosis",
        conversation_id="d-1",
        turn=1,
        notes=[SHORT_NOTE],
        ok=True,
    )
    (conversation,) = build_tree([note])
    lines = tree_markdown(conversation, {}).splitlines()
    assert lines == [
        "- **ターン 1** ・ 0 呼び出し ・ 経過 0 ms ・ モデル時間 計測なし（デモ）",  # a step is no model call
        "    - :gray-badge[手順] **聞き取りのターン** ・ メモ 1",
    ]


def test_calls_a_background_job_made_for_this_person_join_the_log(tmp_path):
    """A worker (another process, or the sweep) had no session to log into: its calls were kept under the
    person, and the debug page adds them to this session's log once."""
    engine = open_store(tmp_path)
    sink = StoredCallSink(engine, LOCAL_PERSON.id, "job-1")
    call = {"flow": "memory", "conversation_id": "mem-9", "turn": 2, "provider": "demo", "model": "demo"}
    sink.emit(DebugEvent(step="extract_all", kind="call", call_id="x1", ts=1_790_000_000.0, ok=True, **call))
    StoredCallSink(engine, "someone-else", "job-2").emit(
        DebugEvent(flow="memory", step="extract_all", kind="call", call_id="x2", conversation_id="other")
    )
    engine.dispose()
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = Settings(data_dir=tmp_path)
    at.session_state["app_debug"] = True
    at.run()
    at.switch_page("pages/debug_log.py")
    at.run()
    assert not at.exception
    options = at.selectbox(key="debug_conversation").options
    assert len(options) == 1 and "コンパニオン記憶" in options[0] and "mem-9" in options[0]
    at.run()  # a rerun adds nothing twice
    assert [e.call_id for e in at.session_state["debug_logs"]] == ["x1"]


def test_the_debug_page_names_the_embedder_of_each_search(tmp_path):
    """Memory and manuals search with the bundled embedder; the knowledge base with its sentence model alone."""
    at = debug_page(tmp_path)
    assert (
        ":material/manage_search: 検索の埋め込み: 記憶・取扱説明書は同梱モデル（e5‑small＋語ベクトル chiVe・オフライン）、"
        "ナレッジは同梱モデル multilingual-e5-small（4bit・384次元・オフライン）"
    ) in [c.value for c in at.caption]
