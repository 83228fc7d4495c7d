"""AppTest of the diagnosis page: the demo path to a confirmed booking, and the brake escalation."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.pages.conftest import make_app

PAGE = "pages/diagnosis.py"


def click(at: AppTest, label: str) -> AppTest:
    button = next(b for b in at.button if b.label == label)
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_demo_path_to_confirmed_booking(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    at.session_state["diagnosis_demo_request"] = True
    at.run()
    assert not at.exception
    labels = [b.label for b in at.button]
    assert "エンジン警告灯" in labels and "わからない" in labels and "✏️ 自由入力" in labels
    assert len(at.image) >= 2  # vehicle photo + warning-light icons
    assert any("本日中の来場" in w.value for w in at.warning)
    click(at, "エンジン警告灯")
    assert "走行中" in [b.label for b in at.button]
    assert at.select_slider(key="diagnosis_rewind_1_2").options == ["ターン1", "ターン2"]
    click(at, "走行中")
    assert "🚗 来店予約をする" in [b.label for b in at.button]
    assert any("p.19「エンジン警告灯」" in m.markdown[0].value for m in at.chat_message)
    click(at, "🚗 来店予約をする")
    at.text_input(key="diagnosis_field_name").input("山田 太郎")
    at.text_input(key="diagnosis_field_phone").input("090-1234-5678")
    at.text_input(key="diagnosis_field_preferred_time").input("2099-01-10 10:00")
    at.button(key="FormSubmitter:diagnosis_booking_form-入力内容を確認する").click().run()
    assert not at.exception and "予約内容の確認" in [h.value for h in at.subheader]
    summary = at.table[0].value
    assert "090-1234-5678" in summary.to_string() and "2099-01-10 10:00" in summary.to_string()
    click(at, "この内容で予約する")
    assert any("来店予約を承りました" in m.markdown[0].value for m in at.chat_message)
    assert any("問診は完了しました" in s.value for s in at.success)
    assert "最初からやり直す" in [b.label for b in at.button]
    frames = [d.value for d in at.dataframe]
    assert any("山田 太郎" in f.to_string() for f in frames)


def test_brake_failure_escalates_straight_to_reservation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    at.button(key="diagnosis_select").click().run()
    click(at, "はい、この車両です")
    at.chat_input(key="diagnosis_input").set_value("ブレーキが効かない").run()
    assert not at.exception
    assert any("今すぐロードサービスまたは来場が必要です" in e.value for e in at.error)
    labels = [b.label for b in at.button]
    assert "🛻 出張・ロードサービスを手配する" in labels and "🚗 来店予約をする" not in labels
    assert at.session_state["chat"]["diagnosis"][-2] == {"role": "user", "content": "ブレーキが効かない"}


def test_manual_index_can_be_rebuilt_from_the_page(tmp_path):
    at = make_app(tmp_path, page="pages/diagnosis.py")
    at.button(key="diagnosis_reindex").click().run()
    assert not at.exception
    assert any(s.value.startswith("索引を作り直しました（236 件）") for s in at.sidebar.success)
