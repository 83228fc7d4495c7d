"""The demo persona: choices stay on the symptom's subject, retries never repeat an answer, no fake escalation."""

from __future__ import annotations

from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.state_machine import process_step
from core.flows.registry import demo_client
from tests.core.diagnosis_fixtures import NOW_TS, FakeRag, make_session, src

AIRCON = [
    src("エアコンが効かないとき", "procedure", 0.46, page=54),
    src("ブレーキの効きが悪いとき", "danger", 0.34, warning=True, page=70),
    src("エアコンから異臭がする", "procedure", 0.32, page=55),
]


def deps(sources):  # type: ignore[no-untyped-def]
    return DiagnosisDeps(demo_client(), rag=FakeRag(sources), clock=lambda: NOW_TS)


def labels(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [c["label"] for c in response.prompt.choices]


def test_choices_share_the_symptoms_subject_and_retries_cite_new_sections() -> None:
    d = deps(AIRCON)
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message="エアコンの効きが悪い"), d)
    assert labels(r) == ["エアコンが効かないとき", "エアコンから異臭がする", "わからない", "自由入力"]
    r = process_step(s, ChatRequest("s1", action="choice", action_value="エアコンが効かないとき"), d)
    assert "ブレーキを踏んだとき" not in labels(r) and "いつも（常に）" in labels(r)
    r = process_step(s, ChatRequest("s1", action="choice", action_value="走行中"), d)
    assert "p.54「エアコンが効かないとき」" in r.prompt.message and r.prompt.action == "resolved"
    r = process_step(s, ChatRequest("s1", action="resolved", action_value="no"), d)
    assert "別の可能性として" in r.prompt.message and "p.55「エアコンから異臭がする」" in r.prompt.message
    r = process_step(s, ChatRequest("s1", action="resolved", action_value="no"), d)
    assert "ほかに該当しそうな記載が見つかりませんでした" in r.prompt.message
    assert "p.54" not in r.prompt.message and s.current_step == ChatStep.DIAGNOSING
    assert s.urgency_level == "medium"  # the keyword rule (air conditioner), never the brake chunk


def test_an_unrelated_danger_chunk_does_not_escalate() -> None:
    sources = [src("ブレーキの効きが悪いとき", "danger", 0.55, warning=True), *AIRCON[::2]]
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message="エアコンの効きが悪い"), deps(sources))
    assert s.current_step == ChatStep.DIAGNOSING and r.prompt.action == "choice"


def test_a_related_danger_chunk_escalates() -> None:
    sources = [src("ハンドルが重い", "danger", 0.63, warning=True, page=74)]
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message="ハンドルが重い"), deps(sources))
    assert s.current_step == ChatStep.RESERVATION and "p.74「ハンドルが重い」" in r.prompt.message
    assert not s.can_drive and [c["value"] for c in r.prompt.choices] == ["dispatch", "skip"]


SMOKE = [src("煙が出たとき・焦げたにおいがするとき", "danger", 0.63, warning=True, page=74)]


def test_a_danger_told_in_a_harmless_frame_does_not_escalate_the_demo() -> None:
    """A scare only feared (v49: a spark at a self-service pump) lies near the manual's smoke chunk; the demo, which
    cannot read the story as a model does, asks its questions instead of sending the owner to the roadside service."""
    s = make_session(ChatStep.FREE_TEXT)
    message = "セルフスタンドで静電気でバチッときて、火が出るかと思って焦りました"
    r = process_step(s, ChatRequest("s1", message=message), deps(SMOKE))
    assert s.current_step == ChatStep.DIAGNOSING and r.prompt.action == "choice"
    assert s.urgency_level == "medium" and s.can_drive


def test_the_same_danger_told_as_happening_still_goes_to_the_roadside_service() -> None:
    """Real smoke before a feared fire is no frame: the fast path sends the owner to the roadside service before the
    demo is asked (its own escalation on a related danger chunk: test_a_related_danger_chunk_escalates)."""
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message="ボンネットから煙が出てて火事かと思った"), deps(SMOKE))
    assert s.current_step == ChatStep.RESERVATION and "「発煙（煙が出ている）」" in r.prompt.message
    assert not s.can_drive and [c["value"] for c in r.prompt.choices] == ["dispatch", "skip"]


def test_brake_symptoms_keep_the_brake_timing_choice() -> None:
    sources = [src("ブレーキ時にキーキー音がする", "warning", 0.67, warning=True)]
    d = deps(sources)
    s = make_session(ChatStep.FREE_TEXT)
    process_step(s, ChatRequest("s1", message="ブレーキを踏むとキーキー音がする"), d)
    r = process_step(s, ChatRequest("s1", action="choice", action_value="ブレーキ時にキーキー音がする"), d)
    assert "ブレーキを踏んだとき" in labels(r)


BRAKE_LIGHT = [src("ブレーキ警告灯（赤）", "danger", 0.61, warning=True, page=31)]
LET_DOWN = (
    "赤いビックリマークのランプが点いて焦ったけど、サイドブレーキを下ろしたら消えました。これで合ってますか？"
)


def test_a_light_gone_once_the_parking_brake_is_let_down_does_not_escalate_the_demo() -> None:
    """v68: the owner says the red light went out once the parking brake was let down and asks whether that is right.
    The manual's red brake light is a danger item; the demo, which cannot read the story, sees the car said to work
    (`says_it_works`) and asks its questions instead of calling the roadside service."""
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message=LET_DOWN), deps(BRAKE_LIGHT))
    assert s.current_step == ChatStep.DIAGNOSING and r.prompt.action == "choice"
    assert labels(r)[0] == "ブレーキ警告灯（赤）"
    assert (s.urgency_level, s.can_drive) == ("none", True)  # these deps read rules only: low, nothing raised


def test_a_question_whether_it_is_normal_asks_on_but_a_named_danger_still_escalates() -> None:
    """「…これって普通ですか？」 that names no danger by the rules is asked about; a light lit again after the brake
    was let down is the danger the chunk warns of, and the demo escalates as before."""
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(
        s,
        ChatRequest("s1", message="ハンドルが少し重い気がします。これって普通ですか？"),
        deps([src("ハンドルが重い", "danger", 0.63, warning=True, page=74)]),
    )
    assert s.current_step == ChatStep.DIAGNOSING and r.prompt.action == "choice"
    s = make_session(ChatStep.FREE_TEXT)
    lit_again = "サイドブレーキを下ろしたのに、赤いブレーキのランプがまた点いて消えません"
    r = process_step(s, ChatRequest("s1", message=lit_again), deps(BRAKE_LIGHT))
    assert s.current_step == ChatStep.RESERVATION and not s.can_drive
    assert [c["value"] for c in r.prompt.choices] == ["dispatch", "skip"]
