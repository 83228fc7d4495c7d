"""AppTest: the debug page's re-run playground and conversation replay (issue #9 items 7 and 8)."""

from __future__ import annotations

import json

from core.debug_replay import ReplayReport
from core.debug_rerun import Target
from core.debuglog import ListSink
from core.flows.registry import demo_client
from core.guard import guarded_json
from core.llm.replay import ReplayClient
from core.schemas import load_schema
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


def test_rerun_sends_the_edited_request_to_two_targets_and_shows_both(tmp_path) -> None:
    current = ReplayClient([VALID], model="recorded")
    at = make_app(tmp_path, client=current, page="pages/debug_log.py")
    events = at.session_state["debug_logs"]
    recorder = ReplayClient(["壊れた", VALID])
    guarded_json(
        recorder,
        STACK,
        load_schema("urgency"),
        name="urgency",
        sink=ListSink(events),
        tags={"flow": "diagnosis", "step": "urgency_check"},
    )
    at.session_state["debug_logs"] = events
    at.run()
    logged = len(at.session_state["debug_logs"])
    second = next(i for i, e in enumerate(events) if e.kind == "call" and e.attempt == 2)
    at.selectbox(key="debug_selected").set_value(
        second
    ).run()  # the repair attempt: the original stack is re-sent
    assert at.text_area(key="debug_rerun_system").value == "あなたは整備士です。"
    assert at.text_area(key="debug_rerun_user").value == "ブレーキが鳴ります"
    at.text_area(key="debug_rerun_user").set_value("ハンドルが重い").run()
    at.text_input(key="debug_rerun_models").set_value("katachi-demo-2").run()
    targets = at.multiselect(key="debug_rerun_targets")
    assert targets.options == [
        "現在のクライアント（デモモデル / katachi-demo）",
        "デモモデル / katachi-demo-2",
    ]
    targets.set_value([Target("demo", "katachi-demo", current=True), Target("demo", "katachi-demo-2")])
    at.button(key="debug_rerun_go").click().run()
    assert not at.exception
    assert current.requests[0].messages == [STACK[0], {"role": "user", "content": "ハンドルが重い"}]
    call_id, results = at.session_state["debug_rerun_results"]
    assert call_id == events[second].call_id
    assert [(label, o.model, o.valid, o.repairs) for label, o in results] == [
        ("現在のクライアント（デモモデル / katachi-demo）", "recorded", True, 0),
        ("デモモデル / katachi-demo-2", "katachi-demo-2", True, 0),  # the demo persona judges urgency too
    ]
    assert [m.value for m in at.markdown if m.value.startswith("**") and "デモモデル /" in m.value] == [
        "**現在のクライアント（デモモデル / katachi\\-demo）**",
        "**デモモデル / katachi\\-demo\\-2**",
    ]
    assert VALID in [c.value for c in at.code]  # raw output as code, never HTML
    assert [s.value for s in at.success] == ["有効（検証を通過）"] * 2
    assert results[1][1].raw in [c.value for c in at.code] and results[1][1].raw.startswith('{"level": ')
    assert len(at.session_state["debug_logs"]) == logged  # a re-run is not logged


def test_replay_of_the_session_log_reports_no_changes_on_the_demo_model(tmp_path) -> None:
    at = make_app(tmp_path, client=demo_client(), page="pages/debug_log.py")
    at.session_state["debug_logs"] = record(tmp_path)
    at.run()
    conversation = at.selectbox(key="debug_replay_conversation")
    assert [o.split(" / ")[0] for o in conversation.options] == ["review", "knowledge"]
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
    assert [b.label for b in at.get("download_button")][-1] == "表をCSVで保存"
