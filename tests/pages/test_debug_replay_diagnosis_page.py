"""AppTest: a diagnosis conversation of the session log replays on the debug page (issue #9 item 8), with
the manuals the diagnosis page searches (the app's index, built on first use)."""

from __future__ import annotations

from core.flows.diagnosis.rag import RAGService
from core.flows.registry import demo_client
from core.search.vectors import open_chroma
from core.workbench.replay import ReplayReport
from tests.core.test_debug_replay import record_diagnosis
from tests.pages.conftest import make_app


def test_a_diagnosis_conversation_is_listed_and_replays_with_no_changes(tmp_path) -> None:
    recording_manuals = RAGService(open_chroma(tmp_path / "recording"))
    recording_manuals.index_manuals()
    at = make_app(tmp_path / "app", client=demo_client(), page="pages/debug_log.py")
    at.session_state["debug_logs"] = record_diagnosis(tmp_path, recording_manuals)
    at.session_state["debug_tab"] = "リプレイ"  # the page draws only the open tab
    at.run()
    conversation = at.selectbox(key="debug_replay_conversation")
    assert [o.split(" ・ ")[0] for o in conversation.options] == ["車両診断"]
    assert conversation.options[0].endswith("（6 ターン）")
    at.button(key="debug_replay_go").click().run()
    assert not at.exception
    report = at.session_state["debug_replay_report"]
    assert isinstance(report, ReplayReport) and report.changed == 0
    summary = "6ターン: 有効 6、修復 0、行動の変化 1、緊急度の変化 1、記録との違い 0ターン"
    assert f"**{summary}**" in [m.value for m in at.markdown]
    table = next(d.value for d in at.dataframe if "違い" in d.value.columns)
    assert list(table["入力"])[:2] == ["ミナト自動車 ソレイユ（2022年式）", "はい、この車両です"]
    assert list(table["緊急度（記録→再生）"]) == ["-→-", "-→-", "none→none", "none→none", "high→high", "-→-"]
