"""AppTest: the debug page's re-run playground (in a chosen call's detail, トレース or 呼び出し一覧 tab) and
the conversation replay (リプレイ tab) (issue #9 items 7 and 8), driven the way a person reaches them."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from core.contracts.schemas import load_schema
from core.debuglog.events import DebugEvent, ListSink
from core.flows.registry import demo_client
from core.guard.json_guard import guarded_json
from core.llm.replay import ReplayClient
from core.workbench.replay import ReplayReport
from core.workbench.rerun import Target
from tests.core.test_debug_replay import record
from tests.pages.conftest import make_app

STACK = [
    {"role": "system", "content": "あなたは整備士です。"},
    {"role": "user", "content": "ブレーキが鳴ります"},
]
VALID = json.dumps(
    {
        "level": "low",
        "can_drive": True,
        "visit_urgency": "when_convenient",
        "reasons": ["<b>鳴き</b>"],
        "recommendation": "様子を見てください。",
    },
    ensure_ascii=False,
)
PLAYGROUND = "この呼び出しを再実行・比較（プレイグラウンド）"
QUEUE = "バックグラウンド処理のキュー"  # the admin's queue section closes the page
CURRENT = "現在のクライアント（デモモデル / katachi-demo）"
OTHER = "デモモデル / katachi-demo-2"


def open_tab(at: AppTest, label: str) -> None:
    """Click the debug page's tab `label` (only the open tab runs)."""
    at.session_state["debug_tab"] = label
    at.run()
    assert not at.exception


def repaired_call(tmp_path, client) -> tuple[AppTest, list[DebugEvent]]:  # type: ignore[no-untyped-def]
    """The debug page over a log of one diagnosis call that needed a repair (two attempts)."""
    at = make_app(tmp_path, client=client, page="pages/debug_log.py")
    events = at.session_state["debug_logs"]
    guarded_json(
        ReplayClient(["壊れた", VALID]),
        STACK,
        load_schema("urgency"),
        name="urgency",
        sink=ListSink(events),
        tags={"flow": "diagnosis", "step": "urgency_check"},
    )
    at.session_state["debug_logs"] = events
    at.run()
    assert not at.exception
    return at, events


def outcome_lines(at: AppTest) -> list[str]:
    """The tokens-and-cost line of each result column (the latency in between varies)."""
    lines = [m.value for m in at.markdown if m.value.startswith("修復 **")]
    return [line.split(" ・ レイテンシ ")[0] + " ・ " + line.split("  \n")[1] for line in lines]


def test_rerun_sends_the_edited_request_to_two_targets_and_shows_both(tmp_path) -> None:
    current = ReplayClient([VALID], model="recorded")
    at, events = repaired_call(tmp_path, current)
    logged = len(at.session_state["debug_logs"])
    assert at.session_state["debug_tab"] == "トレース"
    assert at.selectbox(key="debug_trace_call").options == [
        "ターン（番号なし） ▸ 緊急度の判定 ・ 試行 2 ・ 成功"
    ]
    assert [e.label for e in at.get("expander") if e.label != QUEUE][
        -1
    ] == PLAYGROUND  # at the end of the call detail
    open_tab(at, "呼び出し一覧")
    second = next(i for i, e in enumerate(events) if e.kind == "call" and e.attempt == 2)
    at.selectbox(key="debug_selected").set_value(second).run()  # the repair attempt's row
    assert [e.label for e in at.get("expander") if e.label != QUEUE][-1] == PLAYGROUND
    # the call's first request is re-sent, not the repair prompt of attempt 2
    assert at.text_area(key="debug_rerun_system").value == "あなたは整備士です。"
    assert at.text_area(key="debug_rerun_user").value == "ブレーキが鳴ります"
    at.text_area(key="debug_rerun_user").set_value("ハンドルが重い").run()
    at.text_input(key="debug_rerun_models").set_value("katachi-demo-2").run()
    targets = at.multiselect(key="debug_rerun_targets")
    assert targets.options == [CURRENT, OTHER]
    targets.set_value([Target("demo", "katachi-demo", current=True), Target("demo", "katachi-demo-2")])
    at.button(key="debug_rerun_go").click().run()
    assert not at.exception
    assert current.requests[0].messages == [STACK[0], {"role": "user", "content": "ハンドルが重い"}]
    call_id, results = at.session_state["debug_rerun_results"]
    assert call_id == events[second].call_id
    assert [(label, o.model, o.valid, o.repairs) for label, o in results] == [
        (CURRENT, "recorded", True, 0),
        (OTHER, "katachi-demo-2", True, 0),  # the demo persona judges urgency too
    ]
    assert [m.value for m in at.markdown if m.value.startswith("**") and "デモモデル /" in m.value] == [
        "**現在のクライアント（デモモデル / katachi\\-demo）**",
        "**デモモデル / katachi\\-demo\\-2**",
    ]
    a, b = (o for _, o in results)
    assert outcome_lines(at) == [  # "recorded" is in no price file; the demo model is free under any name
        f"修復 **0** 回 ・ トークン 入力 **{a.input_tokens:,}** / 出力 **{a.output_tokens:,}** ・ "
        "コスト 価格未設定（recorded）",
        f"修復 **0** 回 ・ トークン 入力 **{b.input_tokens:,}** / 出力 **{b.output_tokens:,}** ・ コスト USD 0",
    ]
    assert (a.cost.text(), b.cost.text()) == ("価格未設定（recorded）", "USD 0")
    assert VALID in [c.value for c in at.code]  # raw output as code, never HTML
    assert [s.value for s in at.success] == ["有効（検証を通過）"] * 2
    assert b.raw in [c.value for c in at.code] and b.raw.startswith('{"level": ')
    assert len(at.session_state["debug_logs"]) == logged  # a re-run is not logged


def test_rerun_from_the_trace_tree_on_the_demo_model_costs_its_listed_price(tmp_path) -> None:
    at, events = repaired_call(tmp_path, demo_client())
    at.selectbox(key="debug_trace_call").set_value(0).run()  # the call in the tree
    assert at.text_area(key="debug_rerun_user").value == "ブレーキが鳴ります"
    at.button(key="debug_rerun_go").click().run()  # the current client is chosen by default
    assert not at.exception
    call_id, results = at.session_state["debug_rerun_results"]
    assert call_id == events[0].call_id
    ((label, outcome),) = results
    assert (label, outcome.model, outcome.valid) == (CURRENT, "katachi-demo", True)
    assert outcome_lines(at) == [
        f"修復 **0** 回 ・ トークン 入力 **{outcome.input_tokens:,}** / 出力 **{outcome.output_tokens:,}** ・ "
        "コスト USD 0"  # katachi-demo is listed in core/samples/prices.toml at 0
    ]
    assert "再実行の結果（1 件）。保存された会話とデバッグログは変わりません。" in [
        c.value for c in at.caption
    ]


def test_edited_prompts_survive_a_visit_to_another_tab(tmp_path) -> None:
    """Hidden tabs do not run, and Streamlit forgets widgets that were not drawn: the playground keeps
    what was typed (an empty prompt would otherwise be sent as an edit)."""
    current = ReplayClient([VALID], model="recorded")
    at, _ = repaired_call(tmp_path, current)
    at.text_area(key="debug_rerun_user").set_value("ハンドルが重い").run()
    at.text_input(key="debug_rerun_models").set_value("katachi-demo-2").run()
    at.multiselect(key="debug_rerun_targets").set_value([Target("demo", "katachi-demo", current=True)]).run()
    open_tab(at, "コストと傾向")
    at.run()  # a second run without the playground: its widgets' state is gone
    open_tab(at, "トレース")
    assert at.text_area(key="debug_rerun_system").value == "あなたは整備士です。"
    assert at.text_area(key="debug_rerun_user").value == "ハンドルが重い"
    assert at.text_input(key="debug_rerun_models").value == "katachi-demo-2"
    assert at.multiselect(key="debug_rerun_targets").options == [CURRENT, OTHER]
    at.button(key="debug_rerun_go").click().run()
    assert not at.exception
    assert current.requests[0].messages == [STACK[0], {"role": "user", "content": "ハンドルが重い"}]


def replay_tab(tmp_path) -> AppTest:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, client=demo_client(), page="pages/debug_log.py")
    at.session_state["debug_logs"] = record(tmp_path)
    at.run()
    open_tab(at, "リプレイ")
    return at


def test_replay_of_the_session_log_reports_no_changes_on_the_demo_model(tmp_path) -> None:
    at = replay_tab(tmp_path)
    conversation = at.selectbox(key="debug_replay_conversation")
    assert [o.split(" ・ ")[0] for o in conversation.options] == ["答案レビュー", "ナレッジ聞き取り"]
    assert [o.split("（")[1] for o in conversation.options] == ["3 ターン）", "4 ターン）"]
    conversation.set_value(1).run()
    at.button(key="debug_replay_go").click().run()
    assert not at.exception
    report = at.session_state["debug_replay_report"]
    assert isinstance(report, ReplayReport) and report.changed == 0
    summary = "4ターン: 有効 4、修復 0、フェーズの変化 2、記録との違い 0ターン"
    assert report.summary == summary
    assert f"**{summary}**" in [m.value for m in at.markdown]
    table = next(d.value for d in at.dataframe if "違い" in d.value.columns)  # the replay table
    assert list(table["違い"]) == ["なし"] * 4
    assert list(table["コスト"]) == ["USD 0→USD 0"] * 4  # the demo model's listed price, both sides
    assert [b.label for b in at.get("download_button")][-1] == "表をCSVで保存"


def test_replay_results_and_choices_survive_a_visit_to_another_tab(tmp_path) -> None:
    at = replay_tab(tmp_path)
    at.selectbox(key="debug_replay_conversation").set_value(1).run()
    at.button(key="debug_replay_go").click().run()
    label = at.selectbox(key="debug_replay_conversation").options[1]
    open_tab(at, "トレース")
    at.run()
    open_tab(at, "リプレイ")
    assert at.selectbox(key="debug_replay_conversation").value == 1
    summary = "4ターン: 有効 4、修復 0、フェーズの変化 2、記録との違い 0ターン"
    assert f"**{summary}**" in [m.value for m in at.markdown]
    caption = next(c.value for c in at.caption if c.value.startswith("会話: "))
    assert caption.replace("\\", "") == f"会話: {label} ・ 再生したモデル: デモモデル / katachi-demo"
