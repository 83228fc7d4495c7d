"""Rule-based urgency (spec 04 §6): CRITICAL / HIGH / MEDIUM regular expressions over Japanese symptoms.

The rules are data (`CRITICAL_RULES`, `HIGH_RULES`, `MEDIUM_RULES`); `keyword_urgency_check` walks
them from the most to the least urgent level. A match directly followed by a negation
(「煙は出ていません」「警告灯は点いていない」) does not count.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from core.flows.diagnosis.models import URGENCY_ORDER, VISIT_URGENCY_ORDER


@dataclass(frozen=True)
class UrgencyRule:
    """One named pattern; `reason` is the Japanese text shown to staff when it matches."""

    name: str
    pattern: re.Pattern[str]
    reason: str


@dataclass
class UrgencyResult:
    """spec 04 §6: level (low | medium | high | critical), can_drive, visit_urgency, reasons."""

    level: str
    can_drive: bool
    visit_urgency: str
    reasons: list[str] = field(default_factory=list)


def _rule(name: str, pattern: str, reason: str) -> UrgencyRule:
    return UrgencyRule(name, re.compile(pattern), reason)


CRITICAL_RULES: tuple[UrgencyRule, ...] = (
    _rule(
        "brake_failure",
        r"ブレーキ.{0,8}?(効かな|効きません|利かな|きかな|効きが(悪|弱|甘)|効きにく|抜け|スカスカ|(床|奥)まで(沈|踏め|入)|故障|壊れ)",
        "ブレーキの故障・効き不良の疑い",
    ),
    _rule("brake_fluid_leak", r"ブレーキ(液|フルード).{0,4}(漏れ|もれ)", "ブレーキ液漏れの疑い"),
    # 炎天下 / 発炎筒 / 火災保険 / 炎症 are not fires.
    _rule("fire", r"(火が(出|つい)|出火|発火|火災(?!保険)|燃えて|(?<!発)炎(?!天|筒|症))", "火災・発火の恐れ"),
    # 煙草 and タバコ・たばこの煙 are not the car smoking.
    _rule("smoke", r"(?<!タバコの)(?<!たばこの)(?<!煙草の)(白煙|黒煙|発煙|煙(?!草))", "発煙（煙が出ている）"),
    _rule("oil_leak", r"(オイル|油).{0,6}?(漏れ|もれ|垂れ|たれ|にじ)", "オイル漏れの疑い"),
    _rule("fuel_leak", r"(ガソリン|燃料).{0,6}?(漏れ|もれ|臭|くさ|におい|匂い)", "燃料漏れの疑い"),
    _rule(
        "burning_smell",
        r"(焦げ|こげ|焼け|燃え)(る|た)?(ような)?.{0,3}(臭|くさ|におい|匂い)",
        "焦げたにおい（過熱・発火の恐れ）",
    ),
    _rule(
        "steering_failure",
        r"(ハンドル|ステアリング).{0,6}?(効かな|切れな|回らな|取られ)",
        "ステアリングの故障の疑い",
    ),
    _rule("overheat", r"(オーバーヒート|水温計.{0,6}(振り切|上限|H|赤))", "オーバーヒート"),
    _rule(
        "engine_stall_driving",
        r"走行中.{0,10}?(エンジンが(止ま|停止)|エンスト|電源が(切れ|落ち))",
        "走行中のエンジン停止",
    ),
)

HIGH_RULES: tuple[UrgencyRule, ...] = (
    _rule(
        "warning_light",
        r"(警告灯|警告ランプ|チェックランプ|表示灯|インジケーター|ランプ).{0,8}?(点灯|点滅|つい|つき|点い|光|出て|出た)",
        "警告灯の点灯",
    ),
    _rule(
        "abnormal_noise",
        r"(異音|変な音|キーキー|キーッ|ガラガラ|ゴトゴト|カラカラ|キュルキュル|ゴー(ッ)?という|ガタガタ(と)?音|カタカタ|ギー)",
        "異音",
    ),
    _rule("vibration", r"(振動|ブルブル|ガタガタ|揺れ(る|が)|震え)", "振動"),
    _rule("flat_tire", r"(パンク|空気が抜け|バースト)", "タイヤの損傷・パンク"),
    _rule("stall", r"(エンスト|エンジンが(かからな|止ま)|始動しな|加速しな|力が出な)", "エンジン不調"),
)

MEDIUM_RULES: tuple[UrgencyRule, ...] = (
    _rule("fuel_economy", r"(燃費|電費).{0,6}?(悪|落ち|低下|下が)", "燃費の悪化"),
    _rule(
        "air_conditioner",
        r"(エアコン|冷房|暖房|ヒーター|送風).{0,8}?(効かな|効きが(悪|弱)|冷えな|温まらな|暖まらな|風が弱|出な|不調|臭)",
        "エアコンの不調",
    ),
    _rule("wiper", r"ワイパー.{0,6}?(動かな|拭けな|すじ|ビビ)", "ワイパーの不調"),
    _rule("light_out", r"(ライト|ランプ|電球).{0,4}?(切れ|つかな|点かな)", "灯火類の球切れ"),
    _rule("odor", r"(カビ|かび|酸っぱい).{0,3}(臭|くさ|におい|匂い)", "車内の異臭"),
)

LEVEL_RULES: tuple[tuple[str, tuple[UrgencyRule, ...], bool, str], ...] = (
    # level, rules, can_drive, visit_urgency (spec 04 §6 table)
    ("critical", CRITICAL_RULES, False, "immediate"),
    ("high", HIGH_RULES, True, "today"),
    ("medium", MEDIUM_RULES, True, "this_week"),
)

# A match immediately followed by 「は出ていない」「はありません」「なし」... is a denial, not a symptom.
_NEGATION = re.compile(
    r"^[はがもの]?(出て|出|して|し|点いて|ついて|点灯して|点滅して|あり|見当たら|感じ|聞こえ|漏れて)?(て)?(い)?(ない|ません|なし|なかった|無い|無し)"
)


def _normalize(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def _matches(rule: UrgencyRule, text: str) -> bool:
    return any(not _NEGATION.match(text[match.end() :]) for match in rule.pattern.finditer(text))


def keyword_urgency_check(text: str) -> UrgencyResult:
    """spec 04 §6 (1): match the symptom text against the rules; the most urgent matching level wins.

    No match gives level "low" (can drive, when_convenient, no reasons).
    """
    normalized = _normalize(text)
    for level, rules, can_drive, visit_urgency in LEVEL_RULES:
        reasons = [rule.reason for rule in rules if _matches(rule, normalized)]
        if reasons:
            return UrgencyResult(level, can_drive, visit_urgency, reasons)
    return UrgencyResult("low", True, "when_convenient", [])


def urgency_rank(level: str | None) -> int:
    """Position of a level in none < low < medium < high < critical (unknown -> 0)."""
    return URGENCY_ORDER.index(level) if level in URGENCY_ORDER else 0


def visit_rank(visit_urgency: str | None) -> int:
    return VISIT_URGENCY_ORDER.index(visit_urgency) if visit_urgency in VISIT_URGENCY_ORDER else -1


def merge_urgency(keyword: UrgencyResult, llm: UrgencyResult | None) -> UrgencyResult:
    """spec 04 §6 (3): the higher level wins and reasons are merged.

    Safety first where the two disagree: can_drive only if both allow it, and the more urgent
    visit_urgency is kept.
    """
    if llm is None:
        return UrgencyResult(keyword.level, keyword.can_drive, keyword.visit_urgency, list(keyword.reasons))
    level = keyword.level if urgency_rank(keyword.level) >= urgency_rank(llm.level) else llm.level
    visit = (
        keyword.visit_urgency
        if visit_rank(keyword.visit_urgency) >= visit_rank(llm.visit_urgency)
        else llm.visit_urgency
    )
    reasons = list(dict.fromkeys([*keyword.reasons, *llm.reasons]))
    return UrgencyResult(level, keyword.can_drive and llm.can_drive, visit, reasons)
