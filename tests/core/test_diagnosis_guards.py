"""spec 04 §11 guards, plus the guard-driven retries inside DIAGNOSING."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.flows.diagnosis.catalog import sample_path
from core.flows.diagnosis.constants import CANDIDATE_CONFIDENCE
from core.flows.diagnosis.guards import (
    GENERIC_DUPLICATE_MESSAGE,
    ICON_KEYWORDS,
    _append_default_choices,
    _attach_icons,
    _is_duplicate_question,
    _is_irrelevant_topic,
    _is_waiting_message,
    raise_urgency_for_coverage,
    should_show_candidates,
)
from core.flows.diagnosis.handlers.step3_free_text import _should_route_to_spec_check
from core.flows.diagnosis.models import ChatRequest
from core.flows.diagnosis.prompting import FORCE_ANSWER, TOPIC_RESTRICTION
from core.flows.diagnosis.state_machine import process_step
from core.flows.diagnosis.urgency import UrgencyResult
from tests.core.diagnosis_fixtures import diag, make_deps, make_session, src

LOW = UrgencyResult("low", True, "when_convenient", [])


def test_defaults_appended_once_and_duplicates_removed() -> None:
    out = _append_default_choices(["走行中", " 走行中 ", "停車中", "わからない", "自由入力", ""])
    assert out == [
        {"value": "走行中", "label": "走行中"},
        {"value": "停車中", "label": "停車中"},
        {"value": "dont_know", "label": "わからない"},
        {"value": "free_input", "label": "自由入力"},
    ]
    assert _append_default_choices(None)[-2:] == out[-2:]


@given(st.lists(st.text(max_size=8), max_size=8))
def test_defaults_property(choices: list[str]) -> None:
    out = _append_default_choices(choices)
    labels = [c["label"] for c in out]
    assert labels[-2:] == ["わからない", "自由入力"]
    assert labels.count("わからない") == 1 and labels.count("自由入力") == 1
    assert len(labels) == len(set(labels))
    assert all(c["value"] == c["label"] for c in out[:-2])


def test_icons_only_for_warning_light_topics() -> None:
    choices = _append_default_choices(
        ["エンジン警告灯", "ABS警告灯", "油圧警告灯", "シートベルトの表示", "その他"]
    )
    lit = _attach_icons([dict(c) for c in choices], "点灯している警告灯の種類")
    assert [c.get("icon") for c in lit] == [
        "icons/warning-lights/engine.svg",
        "icons/warning-lights/abs.svg",
        "icons/warning-lights/oil.svg",
        "icons/warning-lights/seatbelt.svg",
        None,
        None,
        None,
    ]
    for topic in ("ランプの色", "表示灯", "インジケーター"):
        assert _attach_icons([dict(c) for c in choices], topic)[0].get("icon")
    plain = _attach_icons([dict(c) for c in choices], "異音の発生タイミング")
    assert all("icon" not in c for c in plain)


def test_icon_files_exist() -> None:
    for _, filename in ICON_KEYWORDS:
        assert sample_path(f"icons/warning-lights/{filename}").read_text().startswith("<svg")


def test_manual_coverage_raise() -> None:
    assert raise_urgency_for_coverage("none", "not_covered") == "medium"
    assert raise_urgency_for_coverage("low", "not_covered") == "medium"
    assert raise_urgency_for_coverage("high", "not_covered") == "high"
    assert raise_urgency_for_coverage("low", "partially_covered") == "low"


def test_candidate_trigger() -> None:
    assert should_show_candidates(CANDIDATE_CONFIDENCE, 1)
    assert should_show_candidates(0.0, 4)
    assert not should_show_candidates(0.69, 3)


def test_waiting_and_irrelevant_and_duplicate() -> None:
    assert _is_waiting_message("これまでの内容をまとめます。")
    assert _is_waiting_message("少々お待ちください")
    assert not _is_waiting_message("いつ音がしますか？まとめます")
    assert not _is_waiting_message("原因はブレーキパッドの摩耗です。")
    assert _is_irrelevant_topic("自動車保険の見直し", "異音がする", [])
    assert not _is_irrelevant_topic("保険の等級", "保険で修理できるか知りたい", [])
    assert not _is_irrelevant_topic("異音の発生タイミング", "異音がする", [])
    assert _is_irrelevant_topic("カーナビ地図更新", "ブレーキがキーキー鳴る", [])
    assert not _is_irrelevant_topic("回答", "ドアがきしむ", [])  # an answer's topic is never off-topic
    assert _is_duplicate_question("いつ音がしますか？", ["いつ音がしますか?"])
    assert not _is_duplicate_question("どこから音がしますか？", ["いつ音がしますか？"])


def test_spec_gates_block_dangerous_cases() -> None:
    spec_ok = [src("セレクトレバーの操作", "procedure", 0.7), src("シフトロック", "procedure", 0.4)]
    assert _should_route_to_spec_check(LOW, spec_ok)
    assert not _should_route_to_spec_check(UrgencyResult("high", True, "today", ["x"]), spec_ok)
    assert not _should_route_to_spec_check(UrgencyResult("critical", False, "immediate", ["x"]), spec_ok)
    assert not _should_route_to_spec_check(LOW, [*spec_ok, src("ブレーキ", "procedure", 0.4, warning=True)])
    danger = [src("a", "procedure", 0.6), src("b", "danger", 0.4), src("c", "warning", 0.35)]
    assert not _should_route_to_spec_check(LOW, danger)
    assert not _should_route_to_spec_check(
        LOW, [src("a", "procedure", 0.49), src("b", "general", 0.45)]
    )  # score
    assert not _should_route_to_spec_check(LOW, [src("a", "procedure", 0.7)])  # count
    mixed = [
        src("a", "procedure", 0.7),
        src("b", "general", 0.4),
        src("c", "danger", 0.4),
        src("d", "danger", 0.35),
        src("e", "warning", 0.33),
    ]
    assert not _should_route_to_spec_check(LOW, mixed)  # share 40% (and danger > spec)


def test_irrelevant_topic_triggers_one_retry_with_restriction() -> None:
    deps = make_deps([diag(question_topic="自動車保険の見直し"), diag()])
    s = make_session()
    process_step(s, ChatRequest("s1", message="ときどき"), deps)
    second = deps.client.requests[1].messages[1]["content"]  # type: ignore[attr-defined]
    assert TOPIC_RESTRICTION.format(topic="自動車保険の見直し", symptom=s.symptom_text) in second
    assert len(deps.client.requests) == 2  # type: ignore[attr-defined]


def test_waiting_message_triggers_forced_answer() -> None:
    deps = make_deps(
        [
            diag(message="内容をまとめます。"),
            diag(action="provide_answer", choices=None, message="原因はAです"),
        ]
    )
    s = make_session()
    r = process_step(s, ChatRequest("s1", message="ときどき"), deps)
    assert FORCE_ANSWER in deps.client.requests[1].messages[1]["content"]  # type: ignore[attr-defined]
    assert r.prompt.message.startswith("原因はAです")


def test_duplicate_question_replaced_by_generic() -> None:
    deps = make_deps([diag(message="いつ症状が出ますか？")])
    s = make_session(asked_questions=["いつ症状が出ますか？"])
    r = process_step(s, ChatRequest("s1", message="ときどき"), deps)
    assert r.prompt.message == GENERIC_DUPLICATE_MESSAGE
    assert [c["label"] for c in r.prompt.choices][:2] == ["走行中", "停車中・アイドリング中"]
