"""AppTest: the replay tab says how many turns and model calls a replay makes, asks for a confirmation above
KATACHI_REPLAY_CONFIRM_CALLS, and 停止 pressed while it runs ends it with the turns done kept and shown."""

from __future__ import annotations

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx
from streamlit.testing.v1 import AppTest

from core.flows.registry import demo_client
from core.llm.base import LLMReply, LLMRequest, TextStream
from core.workbench.replay import ReplayReport
from core.workbench.replay_budget import REPLAY_CONFIRM_ENV
from tests.core.test_debug_replay import record
from tests.pages.conftest import make_app
from tests.pages.test_debug_rerun_page import open_tab

KNOWLEDGE = 1  # the recorded session's second conversation: 4 knowledge turns, one model call each
PLAN = "リプレイすると 4 ターン・モデル呼び出し 約4 回 を行います。"


class StopClicker:
    """The demo model; once armed, its `after`-th call does what a click on 停止 does in the browser while the
    script runs: a rerun request with the 停止 button's trigger, which Streamlit acts on at the script's next
    element (and then runs 停止's callback)."""

    def __init__(self, after: int) -> None:
        self.inner = demo_client()
        self.provider, self.model = self.inner.provider, self.inner.model
        self.after, self.calls, self.armed = after, 0, False

    def _count(self) -> None:
        if not self.armed:
            return
        self.calls += 1
        if self.calls != self.after:
            return
        ctx = get_script_run_ctx()
        assert ctx is not None and ctx.script_requests is not None
        stop_id = ctx.session_state._state._key_id_mapper.get_id_from_key("debug_replay_stop")
        assert stop_id, "停止 is on screen while the replay runs"
        states = WidgetStates()
        clicked = states.widgets.add()
        clicked.id, clicked.trigger_value = stop_id, True
        ctx.script_requests.request_rerun(
            RerunData(widget_states=states, page_script_hash=ctx.page_script_hash)
        )

    def complete(self, request: LLMRequest) -> LLMReply:
        reply = self.inner.complete(request)
        self._count()
        return reply

    def stream(self, request: LLMRequest) -> TextStream:
        self._count()
        return self.inner.stream(request)


def replay_tab(tmp_path, client=None) -> AppTest:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, client=client or demo_client(), page="pages/debug_log.py")
    at.session_state["debug_logs"] = record(tmp_path)
    at.run()
    open_tab(at, "リプレイ")
    at.selectbox(key="debug_replay_conversation").set_value(KNOWLEDGE).run()
    assert not at.exception, at.exception
    return at


def confirmations(at: AppTest) -> list[str]:
    return [c.label for c in at.checkbox if c.key == "debug_replay_confirm"]


def test_turns_and_model_calls_are_shown_and_below_the_threshold_no_confirmation_is_asked(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(REPLAY_CONFIRM_ENV, raising=False)  # the default: ask above 50 calls
    at = replay_tab(tmp_path)
    assert PLAN in [c.value for c in at.caption]
    at.selectbox(key="debug_replay_conversation").set_value(0).run()
    assert "リプレイすると 3 ターン・モデル呼び出し 約3 回 を行います。" in [c.value for c in at.caption]
    assert confirmations(at) == [] and not at.button(key="debug_replay_go").disabled


def test_above_the_threshold_replay_waits_for_the_confirmation(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(REPLAY_CONFIRM_ENV, "3")
    at = replay_tab(tmp_path)
    assert PLAN in [c.value for c in at.caption]
    assert confirmations(at) == [
        "モデル呼び出しが 3 回を超えます（約4 回）。費用と時間がかかることを確認しました"
    ]
    assert at.checkbox(key="debug_replay_confirm").value is False
    assert at.button(key="debug_replay_go").disabled
    assert "debug_replay_report" not in at.session_state

    at.checkbox(key="debug_replay_confirm").check().run()
    assert not at.button(key="debug_replay_go").disabled
    at.button(key="debug_replay_go").click().run()
    assert not at.exception
    report = at.session_state["debug_replay_report"]
    assert isinstance(report, ReplayReport) and len(report.rows) == 4 and not report.stopped

    at.selectbox(key="debug_replay_conversation").set_value(0).run()  # 3 calls: at the threshold, not above
    assert confirmations(at) == [] and not at.button(key="debug_replay_go").disabled


@pytest.mark.parametrize("value", ["0", "-5", "many", ""])
def test_a_threshold_that_is_not_a_positive_integer_falls_back_to_the_default(
    tmp_path, monkeypatch, value: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(REPLAY_CONFIRM_ENV, value)
    at = replay_tab(tmp_path)
    assert confirmations(at) == [] and not at.button(key="debug_replay_go").disabled


def test_stop_pressed_during_the_replay_ends_it_and_keeps_the_turns_done(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(REPLAY_CONFIRM_ENV, raising=False)
    client = StopClicker(after=2)
    at = replay_tab(tmp_path, client)
    client.armed = True
    at.button(key="debug_replay_go").click().run()
    assert not at.exception, at.exception
    assert client.calls == 2  # no model call after 停止: turns 3 and 4 never ran
    assert at.session_state["debug_replay_stopped"] is True  # 停止's callback ran on the rerun it caused
    report = at.session_state["debug_replay_report"]
    assert isinstance(report, ReplayReport) and report.stopped and len(report.rows) == 2
    assert [w.value for w in at.warning if w.value.startswith("停止")] == ["停止しました（2 ターンまで）。"]
    assert f"**{report.summary}**" in [m.value for m in at.markdown]
    assert report.summary.startswith("2ターン: ")
    table = next(d.value for d in at.dataframe if "違い" in d.value.columns)
    assert len(table) == 2
    assert not [b for b in at.button if b.key == "debug_replay_stop"]  # 停止 goes with the run

    client.armed = False  # a replay run to its end afterwards is not marked stopped
    at.button(key="debug_replay_go").click().run()
    report = at.session_state["debug_replay_report"]
    assert len(report.rows) == 4 and not report.stopped
    assert not [w for w in at.warning if w.value.startswith("停止")]
