"""spec 04 §2 arrows and §4 action table: one test each, the Replay client supplying the model's JSON."""

from __future__ import annotations

import json

import pytest

from core.flows.diagnosis.constants import EMPTY_INPUT_MESSAGE, FALLBACK_MESSAGE
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.state_machine import STEP_HANDLERS, process_step
from core.flows.diagnosis.urgency import FRAME_NOTE
from core.flows.diagnosis.urgency_meaning import UrgencyJudge
from core.llm.base import ProviderError
from core.search.embedders import BundledEmbedder
from tests.core.diagnosis_fixtures import (
    FakeRag,
    FakeStore,
    diag,
    make_deps,
    make_session,
    spec_json,
    src,
    urgency_json,
)


def req(**kw):  # type: ignore[no-untyped-def]
    return ChatRequest(session_id="s1", **kw)


def test_every_step_has_a_handler() -> None:
    assert set(STEP_HANDLERS) == set(ChatStep)


# --- §2 arrows ---------------------------------------------------------------------------


def test_vehicle_id_to_photo_confirm() -> None:
    s = make_session(ChatStep.VEHICLE_ID, vehicle_id="", make="", model="", year=0)
    r = process_step(s, req(action="select_vehicle", action_value="hokuto-grantz-2021"), make_deps())
    assert (s.current_step, s.make, s.model, s.year) == (
        ChatStep.PHOTO_CONFIRM,
        "北斗モータース",
        "グランツ",
        2021,
    )
    assert r.prompt.action == "photo_confirm" and [c["value"] for c in r.prompt.choices] == ["yes", "no"]


def test_vehicle_id_unknown_stays() -> None:
    s = make_session(ChatStep.VEHICLE_ID, vehicle_id="")
    r = process_step(s, req(action="select_vehicle", action_value="nope"), make_deps())
    assert s.current_step == ChatStep.VEHICLE_ID and "見つかりません" in r.prompt.message


def test_photo_confirm_yes_to_free_text_and_no_back() -> None:
    s = make_session(ChatStep.PHOTO_CONFIRM)
    process_step(s, req(action="photo_confirm", action_value="yes"), make_deps())
    assert s.current_step == ChatStep.FREE_TEXT
    s2 = make_session(ChatStep.PHOTO_CONFIRM)
    process_step(s2, req(action="photo_confirm", action_value="no"), make_deps())
    assert s2.current_step == ChatStep.VEHICLE_ID and s2.vehicle_id == ""


def test_free_text_critical_goes_straight_to_reservation_without_llm() -> None:
    deps = make_deps([])
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, req(message="ブレーキが効かない"), deps)
    assert s.current_step == ChatStep.RESERVATION
    assert deps.client.requests == []  # type: ignore[attr-defined]
    assert (s.urgency_level, s.can_drive, s.visit_urgency) == ("critical", False, "immediate")
    assert r.prompt.type == "reservation_choice"
    assert [c["value"] for c in r.prompt.choices] == ["dispatch", "skip"]  # no visit: can't drive
    assert r.urgency is not None and r.urgency.message.startswith("今すぐ")


def test_free_text_to_spec_check_shows_explanation() -> None:
    rag = FakeRag([src("セレクトレバーの操作", "procedure", 0.7), src("シフトロック解除", "procedure", 0.35)])
    deps = make_deps([spec_json()], rag=rag)
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, req(message="セレクトレバーが動かない"), deps)
    assert s.current_step == ChatStep.SPEC_CHECK and s.spec_check_shown
    assert r.prompt.action == "spec_check"
    assert [c["value"] for c in r.prompt.choices] == ["resolved", "not_resolved", "already_tried"]
    assert deps.client.requests[0].json_schema.name == "spec_classification"  # type: ignore[attr-defined]
    assert deps.client.requests[0].tags == {"flow": "diagnosis", "step": "spec_check"}  # type: ignore[attr-defined]


def test_free_text_to_diagnosing() -> None:
    deps = make_deps([diag()], rag=FakeRag([src("異音", "warning", 0.5, warning=True)]))
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, req(message="エンジンルームから音がする"), deps)
    assert s.current_step == ChatStep.DIAGNOSING and s.diagnostic_turn == 1
    assert r.prompt.type == "single_choice" and r.prompt.action == "choice"
    assert s.symptom_text == "エンジンルームから音がする"


def test_spec_check_not_spec_falls_through_to_diagnosing() -> None:
    rag = FakeRag([src("セレクトレバーの操作", "procedure", 0.7), src("シフトロック解除", "procedure", 0.35)])
    deps = make_deps([spec_json(is_spec=False, confidence="low"), diag()], rag=rag)
    s = make_session(ChatStep.FREE_TEXT)
    process_step(s, req(message="セレクトレバーが動かない"), deps)
    assert s.current_step == ChatStep.DIAGNOSING and s.diagnostic_turn == 1


@pytest.mark.parametrize("value", ["not_resolved", "already_tried"])
def test_spec_check_phase2_to_diagnosing(value: str) -> None:
    deps = make_deps([diag()], rag=FakeRag())
    s = make_session(ChatStep.SPEC_CHECK, spec_check_shown=True)
    process_step(s, req(action="spec_check", action_value=value), deps)
    assert s.current_step == ChatStep.DIAGNOSING and s.collected_symptoms[-1].startswith(
        ("仕様の説明", "説明された")
    )


def test_spec_check_phase2_resolved_to_done() -> None:
    s = make_session(ChatStep.SPEC_CHECK, spec_check_shown=True)
    process_step(s, req(action="spec_check", action_value="resolved"), make_deps())
    assert s.current_step == ChatStep.DONE


def test_diagnosing_keyword_critical_to_reservation_before_llm() -> None:
    deps = make_deps([])
    s = make_session()
    process_step(s, req(message="ボンネットから煙が出てきた"), deps)
    assert s.current_step == ChatStep.RESERVATION and deps.client.requests == []  # type: ignore[attr-defined]


def test_diagnosing_urgency_flag_critical_to_reservation() -> None:
    deps = make_deps([diag(action="ask_question", urgency_flag="critical", can_drive=False)])
    s = make_session()
    process_step(s, req(message="走行中にときどき"), deps)
    assert s.current_step == ChatStep.RESERVATION and s.urgency_level == "critical" and not s.can_drive


def test_diagnosing_too_many_failed_solutions_to_urgency_then_reservation() -> None:
    deps = make_deps([urgency_json("high", True, "today")])
    s = make_session(solutions_tried=3)
    r = process_step(s, req(action="resolved", action_value="no"), deps)
    assert s.solutions_tried == 4 and s.current_step == ChatStep.RESERVATION
    assert deps.client.requests[0].json_schema.name == "urgency"  # type: ignore[attr-defined]
    assert r.urgency is not None and r.urgency.message == "本日中の来場をおすすめします"


def test_urgency_check_low_medium_to_done_with_advice() -> None:
    deps = make_deps([urgency_json("medium", True, "this_week")])
    s = make_session(ChatStep.URGENCY_CHECK, symptom_text="ラジオの音が小さい")
    r = process_step(s, req(), deps)
    assert s.current_step == ChatStep.DONE
    assert "点検をおすすめします。" in r.prompt.message and "今週中の来場をおすすめします" in r.prompt.message


def test_urgency_check_merges_keyword_and_llm_higher_wins() -> None:
    deps = make_deps([urgency_json("medium", True, "this_week", ["LLM理由"])])
    s = make_session(ChatStep.URGENCY_CHECK, symptom_text="警告灯が点灯した")
    process_step(s, req(), deps)
    assert s.current_step == ChatStep.RESERVATION and s.urgency_level == "high"
    assert s.urgency_reasons == ["警告灯の点灯", "LLM理由"]


def test_reservation_dispatch_and_visit_to_booking_info() -> None:
    for value in ("dispatch", "visit"):
        s = make_session(ChatStep.RESERVATION, can_drive=True)
        r = process_step(s, req(action="reservation", action_value=value), make_deps())
        assert s.current_step == ChatStep.BOOKING_INFO and s.booking_type == value
        assert r.prompt.type == "booking_form"
        names = [f["name"] for f in r.prompt.booking_fields]
        assert names == (
            ["name", "phone", "address", "note"]
            if value == "dispatch"
            else ["name", "phone", "preferred_time", "note"]
        )


def test_reservation_visit_refused_when_cannot_drive() -> None:
    s = make_session(ChatStep.RESERVATION, can_drive=False, urgency_level="critical")
    r = process_step(s, req(action="reservation", action_value="visit"), make_deps())
    assert s.current_step == ChatStep.RESERVATION and s.booking_type == ""
    assert "来店予約はお受けできません" in r.prompt.message
    assert "visit" not in [c["value"] for c in r.prompt.choices]


def test_reservation_skip_to_done() -> None:
    s = make_session(ChatStep.RESERVATION)
    process_step(s, req(action="reservation", action_value="skip"), make_deps())
    assert s.current_step == ChatStep.DONE


def test_booking_info_to_confirm_and_errors_stay() -> None:
    s = make_session(ChatStep.BOOKING_INFO, booking_type="visit")
    bad = json.dumps({"name": "", "phone": "12345", "preferred_time": "2026-11-20 10:00"})
    r = process_step(s, req(action="submit_booking", action_value=bad), make_deps())
    assert s.current_step == ChatStep.BOOKING_INFO and r.prompt.type == "booking_form"
    assert "お名前を入力してください。" in r.prompt.message and "電話番号の形式" in r.prompt.message
    assert "現在より後" in r.prompt.message
    good = json.dumps(
        {"name": "山田 太郎", "phone": "０９０−１２３４−５６７８", "preferred_time": "2026-11-25 10:00"}
    )
    r = process_step(s, req(action="submit_booking", action_value=good), make_deps())
    assert s.current_step == ChatStep.BOOKING_CONFIRM and r.prompt.type == "booking_confirm"
    assert r.prompt.booking_summary["電話番号"] == "090-1234-5678"
    assert r.prompt.booking_summary["来店希望日時"] == "2026-11-25 10:00"


def test_booking_confirm_confirm_saves_and_done() -> None:
    store = FakeStore()
    s = make_session(
        ChatStep.BOOKING_CONFIRM,
        booking_type="dispatch",
        urgency_level="critical",
        can_drive=False,
        booking_data={"name": "山田", "phone": "090-1234-5678", "address": "港区", "note": ""},
    )
    r = process_step(s, req(action="booking_confirm", action_value="confirm"), make_deps(store=store))
    assert s.current_step == ChatStep.DONE and s.booking_id == 1
    saved = store.saved[0]
    assert (saved["booking_type"], saved["vehicle_id"], saved["phone"], saved["urgency_level"]) == (
        "dispatch",
        "minato-soleil-2022",
        "090-1234-5678",
        "critical",
    )
    assert "D-000001" in r.prompt.message


def test_booking_confirm_edit_back_to_form_prefilled() -> None:
    s = make_session(
        ChatStep.BOOKING_CONFIRM,
        booking_type="visit",
        booking_data={
            "name": "山田",
            "phone": "090-1234-5678",
            "preferred_time": "2026-11-25 10:00",
            "note": "",
        },
    )
    r = process_step(s, req(action="booking_confirm", action_value="edit"), make_deps())
    assert s.current_step == ChatStep.BOOKING_INFO
    assert {f["name"]: f["value"] for f in r.prompt.booking_fields}["name"] == "山田"


# --- §4 B resolved, C empty input, fallback ------------------------------------------------


def test_resolved_yes_done_book_reservation_no_reinterviews() -> None:
    s = make_session()
    process_step(s, req(action="resolved", action_value="yes"), make_deps())
    assert s.current_step == ChatStep.DONE
    s = make_session()
    process_step(s, req(action="resolved", action_value="book"), make_deps())
    assert s.current_step == ChatStep.RESERVATION
    deps = make_deps([diag()])
    s = make_session(solutions_tried=1)
    process_step(s, req(action="resolved", action_value="no"), deps)
    assert s.current_step == ChatStep.DIAGNOSING and s.solutions_tried == 2 and s.diagnostic_turn == 1
    assert "解決しませんでした（2回目）" in deps.client.requests[0].messages[1]["content"]  # type: ignore[attr-defined]


def test_empty_input_asks_for_symptom_without_a_turn() -> None:
    s = make_session()
    r = process_step(s, req(message="   "), make_deps())
    assert r.prompt.message == EMPTY_INPUT_MESSAGE and s.diagnostic_turn == 0 and not s.state_snapshots


def test_guard_failure_shows_fallback() -> None:
    deps = make_deps(["not json", "still not", "nope"])
    s = make_session()
    r = process_step(s, req(message="走行中"), deps)
    assert r.prompt.message == FALLBACK_MESSAGE and s.current_step == ChatStep.DIAGNOSING
    assert len(deps.client.requests) == 3  # type: ignore[attr-defined]


def test_provider_error_shows_fallback() -> None:
    s = make_session()
    r = process_step(s, req(message="走行中"), make_deps([ProviderError("timeout")]))
    assert r.prompt.message == FALLBACK_MESSAGE


# --- §4 action table -----------------------------------------------------------------------


def test_action_escalate_to_reservation() -> None:
    s = make_session()
    process_step(
        s, req(message="ときどき"), make_deps([diag(action="escalate", choices=None, urgency_flag="medium")])
    )
    assert s.current_step == ChatStep.RESERVATION and s.urgency_level == "high"
    assert s.urgency_reasons == ["問診の内容からの判断"]


def test_action_escalate_that_cannot_drive_offers_no_visit() -> None:
    s = make_session()
    r = process_step(
        s, req(message="ときどき"), make_deps([diag(action="escalate", choices=None, can_drive=False)])
    )
    assert s.current_step == ChatStep.RESERVATION and not s.can_drive
    assert [c["value"] for c in r.prompt.choices] == ["dispatch", "skip"]
    assert r.urgency is not None and r.urgency.message == "今すぐロードサービスまたは来場が必要です"


def test_action_spec_answer_to_spec_check() -> None:
    s = make_session()
    r = process_step(
        s, req(message="ときどき"), make_deps([diag(action="spec_answer", choices=None, message="仕様です")])
    )
    assert s.current_step == ChatStep.SPEC_CHECK and s.spec_check_shown and r.prompt.action == "spec_check"


def test_action_provide_answer_low_offers_resolution_choices() -> None:
    s = make_session()
    r = process_step(
        s,
        req(message="ときどき"),
        make_deps(
            [
                diag(
                    action="provide_answer",
                    choices=None,
                    urgency_flag="low",
                    manual_coverage="partially_covered",
                    message="原因はAです",
                )
            ]
        ),
    )
    assert s.current_step == ChatStep.DIAGNOSING and r.prompt.action == "resolved"
    assert [c["value"] for c in r.prompt.choices] == ["yes", "no", "book"]
    assert "取扱説明書の記載に一部" in r.prompt.message


@pytest.mark.parametrize(
    ("can_drive", "banner", "values"),
    [
        (False, "今すぐロードサービスまたは来場が必要です", ["dispatch", "skip"]),
        (True, "本日中の来場をおすすめします", ["visit", "dispatch", "skip"]),
    ],
)
def test_action_provide_answer_high_to_reservation(can_drive: bool, banner: str, values: list[str]) -> None:
    s = make_session()
    r = process_step(
        s,
        req(message="ときどき"),
        make_deps(
            [
                diag(
                    action="provide_answer",
                    choices=None,
                    urgency_flag="high",
                    can_drive=can_drive,
                    visit_urgency="today",
                )
            ]
        ),
    )
    assert s.current_step == ChatStep.RESERVATION and banner in r.prompt.message
    assert [c["value"] for c in r.prompt.choices] == values


def test_action_provide_answer_not_covered_raises_to_medium_and_notes() -> None:
    s = make_session()
    r = process_step(
        s,
        req(message="ときどき"),
        make_deps(
            [diag(action="provide_answer", choices=None, urgency_flag="none", manual_coverage="not_covered")]
        ),
    )
    assert s.urgency_level == "medium" and "取扱説明書に該当する記載がないため" in r.prompt.message
    # the banner says why it appeared
    assert r.urgency is not None and r.urgency.reasons == ["取扱説明書に記載のない症状"]
    assert r.urgency.message == "今週中の来場をおすすめします"
    # nothing to try was given: it does not ask whether "this remedy" worked, it offers what can be done next
    assert "解決しましたか" not in r.prompt.message
    assert r.prompt.message.endswith("点検のご予約か、別の可能性の確認ができます。どちらにしますか？")
    assert [(c["value"], c["label"]) for c in r.prompt.choices] == [
        ("book", "点検を予約したい"),
        ("no", "別の可能性を調べる"),
    ]


def test_action_provide_answer_covered_asks_whether_the_remedy_worked() -> None:
    s = make_session()
    r = process_step(
        s,
        req(message="ときどき"),
        make_deps(
            [diag(action="provide_answer", choices=None, urgency_flag="low", manual_coverage="covered")]
        ),
    )
    assert r.prompt.message.endswith("この対処で解決しましたか？")
    assert [c["value"] for c in r.prompt.choices] == ["yes", "no", "book"]


def test_an_answer_that_only_sends_the_car_to_a_workshop_does_not_ask_whether_it_worked() -> None:
    s = make_session()
    message = "ブレーキパッドの摩耗のおそれがあります。早めに販売店で点検・交換を受けてください。"
    r = process_step(
        s,
        req(message="キーキー鳴る"),
        make_deps([diag(action="provide_answer", message=message, choices=None, manual_coverage="covered")]),
    )
    assert "解決しましたか" not in r.prompt.message
    assert [c["value"] for c in r.prompt.choices] == ["book", "no"]


@pytest.mark.parametrize("action", ["clarify_term", "ask_question"])
def test_action_clarify_term_and_ask_question_stay_with_choices(action: str) -> None:
    s = make_session()
    r = process_step(
        s, req(message="ガタガタする"), make_deps([diag(action=action, term_to_clarify="ガタガタ")])
    )
    assert s.current_step == ChatStep.DIAGNOSING and r.prompt.action == "choice"
    assert [c["label"] for c in r.prompt.choices] == ["走行中", "停車中", "わからない", "自由入力"]
    assert s.asked_questions == ["いつ症状が出ますか？"]


def test_booking_info_back_to_reservation_keeps_the_entries() -> None:
    s = make_session(
        ChatStep.BOOKING_INFO, booking_type="visit", booking_data={"name": "山田"}, can_drive=True
    )
    r = process_step(s, req(action="back"), make_deps())
    assert s.current_step == ChatStep.RESERVATION and r.prompt.type == "reservation_choice"
    process_step(s, req(action="reservation", action_value="visit"), make_deps())
    assert s.current_step == ChatStep.BOOKING_INFO and s.booking_data == {"name": "山田"}


def test_done_stays_done_without_calling_the_model() -> None:
    deps = make_deps([])
    s = make_session(ChatStep.DONE)
    r = process_step(s, req(message="もう一つ相談"), deps)
    assert s.current_step == ChatStep.DONE and "最初からやり直す" in r.prompt.message
    assert deps.client.requests == []  # type: ignore[attr-defined]


def test_a_symptom_critical_by_meaning_alone_is_not_told_in_another_owners_words() -> None:
    """The chat names the rules' reasons; judged by meaning alone, it says the symptom is like a dangerous one
    (the banner's 判定理由 quotes the example), never 「お伺いした症状「意味の近い症状例「…」」」."""
    deps = make_deps([])
    deps.urgency_judge = UrgencyJudge(BundledEmbedder())
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(
        s,
        req(
            message="高速走行中、ブレーキを踏んだらシューと音がして効きがすごく弱い。次のSAまで行けば大丈夫？"
        ),
        deps,
    )
    assert s.current_step == ChatStep.RESERVATION and s.urgency_level == "critical"
    assert r.prompt.message.startswith(
        "ご不便をおかけしています。お伺いした症状は、走行に危険がある症状によく似ています。\n\n"
    )
    assert s.urgency_reasons[0].startswith("意味の近い症状例「")  # the banner's reason keeps the example
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, req(message="ブレーキが効かない"), make_deps([]))
    assert r.prompt.message.startswith(
        "ご不便をおかけしています。お伺いした症状「ブレーキの故障・効き不良の疑い」は走行に危険がある可能性があります。"
    )
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, req(message="ボンネットから煙が出て、ブレーキも効かない"), make_deps([]))
    assert r.prompt.message.startswith(
        "ご不便をおかけしています。お伺いした症状「ブレーキの故障・効き不良の疑い」「発煙（煙が出ている）」は"
        "走行に危険がある可能性があります。"
    )


@pytest.mark.parametrize(
    ("flag", "level", "reasons"),
    [
        # the model raises the session: the rule's reason stays, its note of a cap at medium does not
        ("critical", "critical", ["火災・発火の恐れ", "問診の内容からの判断"]),
        # nothing raises it: the note says why the banner is only medium
        ("none", "medium", ["火災・発火の恐れ" + FRAME_NOTE]),
    ],
)
def test_a_cap_note_leaves_the_banner_once_another_judgement_raises_the_level(
    flag: str, level: str, reasons: list[str]
) -> None:
    """The rules cap a danger told as news at medium and say so (FRAME_NOTE); the model's urgency_flag still raises
    the session (spec 04 §6, the higher level wins). A red 今すぐ banner then never says 「…緊急度は中まで」."""
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, req(message="ニュースで車が燃えてる映像を見た"), make_deps([diag(urgency_flag=flag)]))
    assert s.urgency_level == level and s.urgency_reasons == reasons
    assert r.urgency is not None and r.urgency.reasons == reasons
