"""AppTest of the diagnosis page: vehicle selection to a confirmed booking, the brake escalation, failures."""

from __future__ import annotations

import re
from datetime import timedelta

from streamlit.testing.v1 import AppTest

from core.flows.chat_item import user_item
from core.flows.diagnosis import local_now
from core.flows.diagnosis.constants import FALLBACK_MESSAGE
from core.llm.base import ProviderError
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from pages.ui.diagnosis.session import chat_service
from tests.pages.conftest import make_app

PAGE = "pages/diagnosis.py"


def click(at: AppTest, label: str) -> AppTest:
    button = next(b for b in at.button if b.label == label)
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_one_click_demo_shows_the_first_question(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    at.session_state["diagnosis_demo_request"] = True
    at.run()
    assert not at.exception
    assert "エンジン警告灯" in [b.label for b in at.button]
    chat = at.session_state["chat"]["diagnosis"]
    assert chat[1] == user_item("エンジン警告灯が点灯した", turn=1, status="done")
    # the page draws the session's own history: the very same list, not a copy
    session = chat_service().store.get(at.session_state["diagnosis_session_id"], LOCAL_PERSON.id)
    assert session is not None and session.conversation_history is chat
    assert all(item["status"] == "done" for item in chat)
    assert chat[2]["role"] == "assistant" and "エンジン警告灯" in chat[2]["meta"]["choices"]


def test_demo_path_to_confirmed_booking(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    at.selectbox(key="diagnosis_make").select("ミナト自動車").run()
    at.selectbox(key="diagnosis_model").select("ソレイユ").run()
    at.selectbox(key="diagnosis_year").select(2022).run()
    at.button(key="diagnosis_select").click().run()
    assert any("「ミナト自動車 ソレイユ（2022年式）」でお間違いない" in m.value for m in at.markdown)
    click(at, "はい、この車両です")
    at.chat_input(key="diagnosis_input").set_value("エンジン警告灯が点灯した").run()
    assert not at.exception
    labels = [b.label for b in at.button]
    assert "エンジン警告灯" in labels and "わからない" in labels and "自由入力" in labels
    assert len(at.image) >= 2  # vehicle photo + warning-light icons
    assert any("本日中の来場" in w.value for w in at.warning)
    click(at, "エンジン警告灯")
    assert "走行中" in [b.label for b in at.button]
    assert at.select_slider(key="diagnosis_rewind_1_2").options == ["ターン1", "ターン2"]
    captions = [c.value for c in at.caption]
    assert any(c.startswith("ターン2の質問: （デモ）取扱説明書では次の項目が") for c in captions)
    assert "そのときの回答: エンジン警告灯" in captions
    click(at, "走行中")
    assert "来店予約をする" in [b.label for b in at.button]
    assert any("p.19「エンジン警告灯」" in m.markdown[0].value for m in at.chat_message)
    click(at, "来店予約をする")
    at.text_input(key="diagnosis_field_name").input("山田 太郎")
    at.text_input(key="diagnosis_field_phone").input("090-1234-5678")
    visit_day = local_now().date() + timedelta(
        days=10
    )  # picked on a calendar, the time from the opening hours
    at.date_input(key="diagnosis_field_preferred_time_date").set_value(visit_day)
    at.selectbox(key="diagnosis_field_preferred_time_time").set_value("14:30")
    at.button(key="FormSubmitter:diagnosis_booking_form-入力内容を確認する").click().run()
    assert not at.exception and "予約内容の確認" in [h.value for h in at.subheader]
    summary = at.table[0].value
    assert "090-1234-5678" in summary.to_string() and f"{visit_day:%Y-%m-%d} 14:30" in summary.to_string()
    click(at, "この内容で予約する")
    assert any("来店予約を承りました" in m.markdown[0].value for m in at.chat_message)
    assert any("問診は完了しました" in s.value for s in at.success)
    assert "最初からやり直す" in [b.label for b in at.button]
    frames = [d.value for d in at.dataframe]
    booking = next(f for f in frames if "お名前" in f.columns)
    assert booking["お名前"].tolist() == ["山田 太郎"] and booking["緊急度"].tolist() == ["高"]
    assert booking["症状"].tolist() == ["エンジン警告灯が点灯した"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", booking["受付日時"].tolist()[0])  # Japan time
    sources = next(f for f in frames if "種類" in f.columns)
    assert set(sources["種類"]) <= {"手順", "仕様", "一般", "警告", "危険"}


def test_brake_failure_escalates_straight_to_reservation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    at.button(key="diagnosis_select").click().run()
    click(at, "はい、この車両です")
    at.chat_input(key="diagnosis_input").set_value("ブレーキが効かない").run()
    assert not at.exception
    assert any("今すぐロードサービスまたは来場が必要です" in e.value for e in at.error)
    labels = [b.label for b in at.button]
    assert "出張・ロードサービスを手配する" in labels and "来店予約をする" not in labels
    assert at.session_state["chat"]["diagnosis"][-2] == user_item("ブレーキが効かない", status="done")
    indicator = at.markdown[0].value
    assert (
        "~~仕様確認~~" in indicator
        and "~~問診~~" in indicator
        and ":gray[:material/check: 症状]" in indicator
    )
    # urgency was judged (the banner is on screen): 緊急度 is passed, not struck out
    assert "~~緊急度~~" not in indicator and ":gray[:material/check: 緊急度]" in indicator
    (banner,) = [e for e in at.error if "今すぐロードサービス" in e.value]
    assert (
        banner.icon == ":material/report:"
    )  # a Material icon, not an emoji (no emoji font on staff machines)
    assert "取り消し線の段階は、今回の問診では通っていません。" in [c.value for c in at.caption]


def test_llm_failure_shows_the_fallback_and_a_japanese_reason(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, client=ReplayClient([ProviderError("timeout")] * 4), page=PAGE)
    at.button(key="diagnosis_select").click().run()
    click(at, "はい、この車両です")
    at.chat_input(key="diagnosis_input").set_value("ドアがきしむ").run()
    assert not at.exception
    history = at.session_state["chat"]["diagnosis"]
    assert [(i["role"], i["content"], i["status"]) for i in history[-2:]] == [
        ("user", "ドアがきしむ", "done"),
        ("assistant", FALLBACK_MESSAGE, "done"),
    ]
    warnings = [w.value for w in at.warning]
    assert any(
        w.startswith(
            "AIの応答を取得できませんでした（問診の質問・回答: LLMの呼び出しに失敗しました。 LLMの応答がタイムアウトしました。"
        )
        for w in warnings
    ), warnings
    assert any("取扱説明書の要約:" in w for w in warnings)
    # the shared last-call expander holds this turn's calls (RAG answer + diagnostic call and retries)
    calls = at.session_state["diagnosis_last_call"]
    assert {c["step"] for c in calls} == {"rag_answer", "diagnosing"} and not any(c["ok"] for c in calls)
    assert f"直近のターンでLLMに渡した内容と返答（{len(calls)}回の呼び出し）" in [
        e.label for e in at.expander
    ]


def test_manual_index_can_be_rebuilt_from_the_page(tmp_path):
    at = make_app(tmp_path, page="pages/diagnosis.py")
    at.button(key="diagnosis_reindex").click().run()
    assert not at.exception
    assert any(s.value.startswith("索引を作り直しました（236 件）") for s in at.sidebar.success)
