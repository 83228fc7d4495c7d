"""The labelled urgency set (issue 12 item 3): hard targets, coverage of every rule, the issue's examples."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.flows.diagnosis.urgency import FRAME_NOTE, keyword_urgency_check, urgency_rank
from core.flows.diagnosis.urgency_rules import LEVEL_RULES

PHRASINGS = json.loads(
    (Path(__file__).parents[1] / "data/urgency_phrasings.json").read_text(encoding="utf-8")
)["phrasings"]


def test_the_set_is_large_and_covers_every_rule_with_several_wordings() -> None:
    assert len(PHRASINGS) >= 80
    per_rule = Counter(p["rule"] for p in PHRASINGS if p["rule"])
    rules = {rule.name for _, rules, _, _ in LEVEL_RULES for rule in rules}
    assert set(per_rule) == rules
    assert min(per_rule.values()) >= 2
    assert sum(p["level"] == "low" for p in PHRASINGS) >= 15


def test_no_critical_phrasing_is_rated_below_high() -> None:
    low = [p["text"] for p in PHRASINGS if p["level"] == "critical"]
    assert [t for t in low if urgency_rank(keyword_urgency_check(t).level) < urgency_rank("high")] == []


def test_no_not_urgent_question_is_rated_high_or_critical() -> None:
    questions = [p["text"] for p in PHRASINGS if p["level"] == "low"]
    assert [
        t for t in questions if urgency_rank(keyword_urgency_check(t).level) >= urgency_rank("high")
    ] == []


@pytest.mark.parametrize(
    "text",
    [
        "油圧警告灯が点いた",
        "水温警告灯が点灯している",
        "ブレーキ警告灯がついた",
        "ブレーキが効かない",
        "ハンドルが急に重い",
    ],
)
def test_red_lights_and_loss_of_braking_or_steering_are_critical_without_driving(text: str) -> None:
    result = keyword_urgency_check(text)
    assert (result.level, result.can_drive, result.visit_urgency) == ("critical", False, "immediate")


@pytest.mark.parametrize(
    ("text", "at_least"),
    [
        ("冷却水が漏れている", "critical"),
        ("ラジエーターから湯気", "critical"),
        ("駐車場にオイルのシミ", "critical"),
        ("ハンドルが急に重い", "critical"),
        ("バッテリーが上がった", "high"),
    ],
)
def test_the_issue_examples_no_longer_rate_low(text: str, at_least: str) -> None:
    assert urgency_rank(keyword_urgency_check(text).level) >= urgency_rank(at_least)


@pytest.mark.parametrize(
    "variant",
    ["ブレーキが効かない", "ﾌﾞﾚｰｷが効かない", "ブレーキが 効かない", "⻘いけむりと、ブレーキが効かない"],
)
def test_rules_match_normalized_text(variant: str) -> None:
    assert keyword_urgency_check(variant).level == "critical"


def test_every_labelled_phrasing_gets_its_level() -> None:
    wrong = [(p["text"], p["level"], keyword_urgency_check(p["text"]).level) for p in PHRASINGS]
    assert [w for w in wrong if w[1] != w[2]] == []


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("煙は出ていないし焦げ臭くもない", "low"),  # an adjective's negation (臭くもない) is a denial too
        ("焦げ臭くない", "low"),
        ("ブレーキが効いてないってことはないです", "low"),  # a double negative denies too
        ("煙が出てるってことはない", "low"),
        ("ブレーキが効かないってことは、もう乗れないってこと？", "critical"),
        ("焦げ臭い", "critical"),
        ("給油ランプが点いてから何キロくらい走れますか", "low"),  # the low-fuel lamp is no fault
        ("燃料警告灯が点いた", "low"),
        ("エンジン警告灯が点いた", "high"),
        ("エンジンをかけたら警告灯が全部点いてすぐ消えた", "low"),  # the start-up lamp check (`unless`)
        ("警告灯が点いてすぐ消えた", "high"),  # one lamp that comes and goes still counts
        ("発煙筒の期限が切れていた", "low"),  # a flare is an emergency kit item, no smoke
        ("冬の朝、マフラーから白い煙が出るけどすぐ消える", "low"),  # water vapour from a cold exhaust
        ("マフラーから白い煙がずっと出てる", "critical"),
        ("リーフが浸水した駐車場に一晩あった", "critical"),  # an EV by its model name
        (
            "雪に埋まった車の中でエンジンをかけて待っていたら頭がぼーっとしてきた",
            "critical",
        ),  # carbon monoxide
        ("車の中でエンジンをかけたまま仮眠したら頭が痛くなった", "critical"),
    ],
)
def test_denials_normal_behaviours_and_domain_cases_of_the_rules(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


@pytest.mark.parametrize(
    "text",
    [
        "ニュースで高速道路で車が燃えているのを見た",
        "隣の家の車がボンネットから煙を出していた",
        "もしブレーキが効かなくなったらどうすればいい？",
        "先月ハンドルが重くなった件、直してもらってからは快調です",
    ],
)
def test_a_danger_told_in_a_harmless_frame_goes_no_higher_than_medium(text: str) -> None:
    result = keyword_urgency_check(text)
    assert urgency_rank(result.level) <= urgency_rank("medium")
    assert all(r.endswith(FRAME_NOTE) for r in result.reasons[:1])


def test_the_same_danger_told_as_ones_own_is_critical() -> None:
    assert keyword_urgency_check("高速道路で車が燃えている").level == "critical"
    assert keyword_urgency_check("ボンネットから煙が出ている").level == "critical"
