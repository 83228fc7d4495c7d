"""spec 04 §6 keyword rules: Japanese phrasings with expected levels, negatives, and the merge."""

from __future__ import annotations

import json
import re

import pytest

from core.flows.diagnosis.responses import urgency_banner, urgency_info
from core.flows.diagnosis.step_shared import reservation_prompt
from core.flows.diagnosis.urgency import UrgencyResult, keyword_urgency_check, merge_urgency
from core.flows.diagnosis.urgency_frames import in_harmless_frame
from core.flows.diagnosis.urgency_rules import (
    CRITICAL_RULES,
    HIGH_RULES,
    MEDIUM_RULES,
    RULES_FILE,
    harmless_frames_pattern,
    load_rules,
)
from tests.core.diagnosis_fixtures import make_session

CASES = [
    # critical: brake failure, fire, smoke, oil leak (+ related)
    ("ブレーキが効かない", "critical"),
    ("ブレーキの効きが悪い気がする", "critical"),
    ("ブレーキペダルが床まで沈む", "critical"),
    ("ブレーキがスカスカで止まりにくい", "critical"),
    ("ボンネットから煙が出ている", "critical"),
    ("マフラーから黒煙が出る", "critical"),
    ("エンジンルームから火が出た", "critical"),
    ("車の下からオイルが漏れている", "critical"),
    ("駐車場にオイル漏れの跡がある", "critical"),
    ("焦げ臭いにおいがする", "critical"),
    ("ガソリンのにおいが車内でする", "critical"),
    ("水温計が振り切れてオーバーヒートした", "critical"),
    ("走行中にエンジンが止まった", "critical"),
    ("ハンドルが効かない感じがする", "critical"),
    ("ＢＲＡＫＥではなくブレーキが故障したみたい", "critical"),
    ("ゴムが焼けるようなにおいがする", "critical"),
    ("エンジンルームから炎が見えた", "critical"),
    # high: warning light, abnormal noise, vibration
    ("エンジン警告灯が点灯した", "high"),
    ("メーターにオレンジのランプが点いた", "high"),
    ("ABSの警告灯がついている", "high"),
    ("ブレーキを踏むとキーキー音がする", "high"),
    ("走行中に異音がする", "high"),
    ("エンジンからカラカラと変な音", "high"),
    ("高速で走るとハンドルがブルブル振動する", "high"),
    ("段差でガタガタする", "high"),
    ("タイヤがパンクしたかもしれない", "high"),
    # medium: fuel economy, air conditioner
    ("最近燃費が悪くなった", "medium"),
    ("エアコンが効かない", "medium"),
    ("冷房の効きが悪い", "medium"),
    ("ヒーターが温まらない", "medium"),
    ("エアコンからカビ臭いにおい", "medium"),
    ("ワイパーがビビる", "medium"),
    # negatives: not critical (and mostly nothing at all)
    ("ブレーキの交換時期を知りたい", "low"),
    ("ブレーキパッドの交換費用はいくら？", "low"),
    ("オイル交換の時期を教えて", "low"),
    ("煙は出ていません", "low"),
    ("オイル漏れはありません", "low"),
    ("警告灯は点いていない", "low"),
    ("タイヤの空気圧はいくつですか", "low"),
    ("ナビの地図を更新したい", "low"),
    # words that merely contain 炎 / 火災 / 煙 are not fire or smoke
    ("炎天下に駐車したらエアコンが効かない", "medium"),
    ("発炎筒の使い方を教えて", "low"),
    ("火災保険で修理できますか", "low"),
    ("煙草のにおいが取れない", "low"),
    ("タバコの煙のにおいが残っている", "low"),
]


@pytest.mark.parametrize(("text", "level"), CASES)
def test_keyword_levels(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


def test_at_least_30_phrasings() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize(
    ("text", "can_drive", "visit"),
    [
        ("ブレーキが効かない", False, "immediate"),
        ("警告灯が点灯", True, "today"),
        ("燃費が悪い", True, "this_week"),
        ("こんにちは", True, "when_convenient"),
    ],
)
def test_level_table(text: str, can_drive: bool, visit: str) -> None:
    result = keyword_urgency_check(text)
    assert (result.can_drive, result.visit_urgency) == (can_drive, visit)


def test_reasons_name_every_matching_rule_of_the_level() -> None:
    result = keyword_urgency_check("ブレーキが効かないし、煙も出ている")
    assert result.reasons == ["ブレーキの故障・効き不良の疑い", "発煙（煙が出ている）"]


def test_deep_water_names_a_flooded_car_as_well_as_a_flooded_road() -> None:
    """The reason shown for deep water fits a car standing in a flooded garage as well as one driving through water."""
    reason = ["深い冠水・浸水（エンジン停止・故障のおそれ）"]
    assert keyword_urgency_check("大雨で車庫が浸水して、車の座席の上まで水来てました").reasons == reason
    assert keyword_urgency_check("冠水した道で、水がドアの下まで来てる").reasons == reason


def test_rules_are_named_data() -> None:
    names = [r.name for r in (*CRITICAL_RULES, *HIGH_RULES, *MEDIUM_RULES)]
    assert len(names) == len(set(names))
    assert {
        "brake_failure",
        "fire",
        "smoke",
        "oil_leak",
        "warning_light",
        "abnormal_noise",
        "vibration",
        "fuel_economy",
        "air_conditioner",
    } <= set(names)


def test_harmless_frames_are_named_and_their_guards_written_out() -> None:
    data = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    frames, vocabulary = data["harmless_frames"], data["vocabulary"]
    names = [frame["name"] for frame in frames["frames"]]
    assert len(names) == len(set(names)) and all(re.fullmatch(r"[a-z_]+", name) for name in names)
    for frame in frames["frames"]:  # each frame is a pattern of its own, not a piece of its neighbours'
        re.compile(harmless_frames_pattern({"guards": frames["guards"], "frames": [frame]}, vocabulary))
    # a frame that begins at a sentence's start looks behind for the sentence end and does not take it into its span
    # (a span that began at 「。」 covered a danger told in the sentence before it)
    assert [
        n for n, f in zip(names, frames["frames"], strict=True) if re.match(r"\(\??:?\^\|\[", f["pattern"])
    ] == []
    pattern = harmless_frames_pattern(frames, vocabulary)
    assert not re.search(r"\{[A-Z_]+\}", pattern)
    guard = frames["guards"]["NO_DANGER_AFTER"]
    assert pattern.count(guard) == sum(f["pattern"].count("{NO_DANGER_AFTER}") for f in frames["frames"]) > 10
    with pytest.raises(KeyError, match="NO_SUCH_GUARD"):
        harmless_frames_pattern({"guards": {}, "frames": [{"name": "x", "pattern": "a{NO_SUCH_GUARD}"}]})


def test_a_frame_names_the_rules_words_as_the_rules_do(tmp_path) -> None:
    frames = {"guards": {"NO_X": "(?!x)"}, "frames": [{"name": "a", "pattern": "a{LEAK}{NO_X}"}]}
    assert harmless_frames_pattern(frames, {"LEAK": ["漏れ", "シミ"]}) == "a(?:漏れ|シミ)(?!x)"
    with pytest.raises(KeyError, match="LEAK"):  # without the vocabulary, a word list is no guard
        harmless_frames_pattern(frames)
    data = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    data["harmless_frames"]["guards"]["LEAK"] = "(?!x)"  # one name, two meanings: the file does not load
    (tmp_path / "rules.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match=r"share a name: \['LEAK'\]"):
        load_rules(tmp_path / "rules.json")
    # fuel spilled at the filler and wiped is harmless while no leak is told, in any of the rules' spellings of one
    # (「にじんでる」 was not among the frame's own list of them); brakes weak only at first after a wash, while they
    # are not weak again (「再度」「ふたたび」 as the rules' {AGAIN})
    spill = "給油のときガソリンを少しこぼしたけど、すぐ拭き取りました"
    assert in_harmless_frame(spill)
    assert not in_harmless_frame(spill + "。給油口のまわりにまだにじんでる")
    wash = "洗車のあと最初だけブレーキの効きが弱かったけど、すぐ元に戻った"
    assert in_harmless_frame(wash)
    assert not in_harmless_frame(wash + "。でも再度弱くなった")
    assert not in_harmless_frame(wash + "。でもふたたび弱くなった")


def test_merge_higher_level_wins_and_reasons_merge() -> None:
    kw = UrgencyResult("high", True, "today", ["警告灯の点灯"])
    llm = UrgencyResult("medium", True, "this_week", ["LLM", "警告灯の点灯"])
    assert merge_urgency(kw, llm) == UrgencyResult("high", True, "today", ["警告灯の点灯", "LLM"])
    llm2 = UrgencyResult("critical", False, "immediate", ["LLM"])
    assert merge_urgency(kw, llm2) == UrgencyResult("critical", False, "immediate", ["警告灯の点灯", "LLM"])
    assert merge_urgency(kw, None) == kw


@pytest.mark.parametrize(
    ("can_drive", "visit", "banner"),
    [
        (False, "today", "今すぐロードサービスまたは来場が必要です"),  # can_drive=false wins over visit
        (True, "immediate", "今すぐ来場またはロードサービスが必要です"),
        (True, "today", "本日中の来場をおすすめします"),
        (True, "this_week", "今週中の来場をおすすめします"),
    ],
)
def test_reservation_banner_per_spec_table(can_drive: bool, visit: str, banner: str) -> None:
    """spec 04 §7: one row each; the banner heads the reservation prompt and the page's alert."""
    assert urgency_banner(can_drive, visit) == banner
    s = make_session(urgency_level="high", can_drive=can_drive, visit_urgency=visit)
    assert banner in reservation_prompt(s).message
    info = urgency_info(s)
    assert info is not None and info.message == banner


EV_FLOOD = "大雨で冠水した道路を走ってきました。大丈夫でしょうか"


@pytest.mark.parametrize(
    ("text", "petrol", "electric"),
    [
        (EV_FLOOD, "low", "critical"),
        ("台風で車が水没しかけた。今は水は引いてる", "low", "critical"),
        ("昨夜の大雨で車庫が浸水しました", "low", "critical"),
        ("冠水した道は避けて帰りました", "low", "low"),  # no flood it went through
        ("冠水した道路を迂回して帰ってきた", "low", "low"),
        ("水没はしていません", "low", "low"),  # a denial
        ("もし冠水したらどうすればいいですか", "low", "low"),  # a hypothetical
        ("ニュースで冠水した道路の映像見てた", "low", "medium"),  # the news: a harmless frame caps it
    ],
)
def test_an_electric_cars_flood_is_critical_when_the_catalog_knows_the_car(
    text: str, petrol: str, electric: str
) -> None:
    """The owner of the demo's electric car rarely says it is electric: the catalog does (Vehicle.electric), and the
    rules written for an electric car (the rule file's "vehicle": "electric") count for it alone."""
    assert keyword_urgency_check(text).level == petrol
    result = keyword_urgency_check(text, "electric")
    assert result.level == electric
    if electric == "critical":
        assert (result.can_drive, result.visit_urgency, result.reasons) == (
            False,
            "immediate",
            ["冠水・水没した電動車（感電・発火のおそれ）"],
        )
    assert keyword_urgency_check(text, "hydrogen") == keyword_urgency_check(text)  # a kind without rules


def test_the_catalog_names_the_electric_car_and_the_flow_judges_with_it() -> None:
    from core.flows.diagnosis.catalog import load_vehicles, vehicle_kind  # noqa: PLC0415
    from core.flows.diagnosis.deps import DiagnosisDeps  # noqa: PLC0415
    from core.flows.diagnosis.models import ChatRequest, ChatStep  # noqa: PLC0415
    from core.flows.diagnosis.state_machine import process_step  # noqa: PLC0415
    from core.flows.registry import demo_client  # noqa: PLC0415
    from tests.core.diagnosis_fixtures import NOW_TS, FakeRag  # noqa: PLC0415

    assert {v.vehicle_id: v.kind for v in load_vehicles()} == {
        "minato-soleil-2022": "",
        "hokuto-grantz-2021": "",
        "asahi-lumina-2023": "electric",
    }
    assert (
        vehicle_kind("asahi-lumina-2023") == "electric"
        and vehicle_kind("") == vehicle_kind("no-such-car") == ""
    )
    deps = DiagnosisDeps(demo_client(), rag=FakeRag([]), clock=lambda: NOW_TS)
    petrol = make_session(ChatStep.FREE_TEXT)
    process_step(petrol, ChatRequest("s1", message=EV_FLOOD), deps)
    assert petrol.current_step == ChatStep.DIAGNOSING and petrol.urgency_level != "critical"
    ev = make_session(
        ChatStep.FREE_TEXT, vehicle_id="asahi-lumina-2023", make="アサヒEV", model="ルミナ", year=2023
    )
    r = process_step(ev, ChatRequest("s1", message=EV_FLOOD), deps)
    assert (ev.current_step, ev.urgency_level, ev.can_drive) == (ChatStep.RESERVATION, "critical", False)
    assert "冠水・水没した電動車（感電・発火のおそれ）" in r.prompt.message
    assert [c["value"] for c in r.prompt.choices] == ["dispatch", "skip"]
