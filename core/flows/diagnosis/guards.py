"""Guards on the model's diagnostic output (spec 04 §11, §12 step 5).

Pure functions: the diagnosing handler decides what to do when one fires (ask again, replace the
message, raise the urgency).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.flows.diagnosis.constants import (
    CANDIDATE_CONFIDENCE,
    CANDIDATE_TURN,
    DONT_KNOW,
    DONT_KNOW_VALUE,
    FREE_INPUT,
    FREE_INPUT_VALUE,
    ICON_DIR_NAME,
)

# spec 04 §4: icons are attached only when the question is about warning lights.
WARNING_LIGHT_TOPIC_WORDS = ("警告灯", "ランプ", "表示灯", "インジケーター")
# Keyword in a choice label -> icon file under core/samples/diagnosis/icons/warning-lights/.
ICON_KEYWORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ABS", "アンチロック"), "abs.svg"),
    (("エアバッグ", "SRS"), "airbag.svg"),
    (("油圧", "オイル"), "oil.svg"),
    (("充電", "バッテリー"), "battery.svg"),
    (("ブレーキ", "パーキング"), "brake.svg"),
    (("水温", "冷却"), "coolant.svg"),
    (("空気圧", "タイヤ"), "tire.svg"),
    (("シートベルト",), "seatbelt.svg"),
    (("パワーステアリング", "EPS", "ステアリング"), "eps.svg"),
    (("EVシステム", "パワーシステム", "高電圧"), "ev_system.svg"),
    (("エンジン", "チェックランプ"), "engine.svg"),
)

# Words that make a question topic about the symptom in general (never "irrelevant").
GENERIC_TOPIC_WORDS = (
    "症状",
    "状況",
    "発生",
    "タイミング",
    "時期",
    "頻度",
    "条件",
    "場所",
    "部位",
    "音",
    "におい",
    "臭",
    "振動",
    "警告",
    "ランプ",
    "表示",
    "走行",
    "停車",
    "始動",
    "速度",
    "天候",
    "気温",
    "温度",
    "操作",
    "点検",
    "整備",
    "交換",
    "履歴",
    "走行距離",
    "使用",
    "いつ",
    "どこ",
    "程度",
    # answers: the topic of a provide_answer is the answer itself
    "回答",
    "原因",
    "対処",
)
# Topics outside vehicle diagnosis; irrelevant unless the user brought them up.
OFF_DOMAIN_TOPIC_WORDS = (
    "保険",
    "ローン",
    "下取り",
    "買い替え",
    "買い換え",
    "購入",
    "値引き",
    "税金",
    "天気予報",
    "料理",
    "旅行",
    "趣味",
    "契約",
    "クレジット",
    "ポイント",
)

# spec 04 §4 D.11: filler such as 「まとめます」 or 「少々お待ちください」 instead of content.
WAITING_PATTERNS = re.compile(
    r"(まとめます|まとめますね|整理します|確認します|確認いたします|調べます|お調べします|検索します|"
    r"少々お待ち|しばらくお待ち|お待ちください|考えます|分析します|診断します|これから.{0,10}(します|いたします))"
    r"[。！!…\s]*$"
)

GENERIC_DUPLICATE_MESSAGE = "念のため別の角度からお伺いします。症状が出るのはどのような場面ですか？"
GENERIC_DUPLICATE_CHOICES = ("走行中", "停車中・アイドリング中", "エンジン始動時", "常に出ている")


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text or "").lower().split())


def _bigrams(text: str) -> set[str]:
    text = _norm(re.sub(r"[、。？?！!・「」（）()\s]", "", text or ""))
    return {text[i : i + 2] for i in range(len(text) - 1)}


def _append_default_choices(choices: Sequence[str] | None) -> list[dict[str, str]]:
    """spec 04 §4: dedupe the model's choices (value = label = its string), then add わからない and 自由入力."""
    seen: set[str] = set()
    result: list[dict[str, str]] = []
    for raw in choices or []:
        label = (raw or "").strip()
        key = _norm(label)
        if not label or key in seen or key in (_norm(DONT_KNOW), _norm(FREE_INPUT), _norm("✏️ 自由入力")):
            continue
        seen.add(key)
        result.append({"value": label, "label": label})
    result.append({"value": DONT_KNOW_VALUE, "label": DONT_KNOW})
    result.append({"value": FREE_INPUT_VALUE, "label": FREE_INPUT})
    return result


def icon_for_label(label: str) -> str | None:
    """The warning-light icon path (relative to the samples dir) whose keyword the label mentions."""
    norm = _norm(label)
    for keywords, filename in ICON_KEYWORDS:
        if any(_norm(word) in norm for word in keywords):
            return f"{ICON_DIR_NAME}/{filename}"
    return None


def _attach_icons(choices: list[dict[str, str]], question_topic: str | None) -> list[dict[str, str]]:
    """spec 04 §4: when the topic is about warning lights, give each matching choice an icon path."""
    topic = question_topic or ""
    if not any(word in topic for word in WARNING_LIGHT_TOPIC_WORDS):
        return choices
    for choice in choices:
        if choice["value"] in (DONT_KNOW_VALUE, FREE_INPUT_VALUE):
            continue
        icon = icon_for_label(choice["label"])
        if icon:
            choice["icon"] = icon
    return choices


def _is_irrelevant_topic(
    question_topic: str | None, symptom_text: str, history: Iterable[Mapping[str, Any]]
) -> bool:
    """spec 04 §11: a question topic unrelated to the symptom and the conversation so far.

    Irrelevant when it names an off-domain subject the user never mentioned, or when it shares no
    character bigram with what was said and is not a generic diagnostic topic.
    """
    topic = (question_topic or "").strip()
    if not topic:
        return False
    said = symptom_text + "\n" + "\n".join(str(m.get("content", "")) for m in history)
    said_norm = _norm(said)
    if any(word in topic and _norm(word) not in said_norm for word in OFF_DOMAIN_TOPIC_WORDS):
        return True
    if any(word in topic for word in GENERIC_TOPIC_WORDS):
        return False
    return not (_bigrams(topic) & _bigrams(said))


def _is_waiting_message(message: str | None) -> bool:
    """spec 04 §4 D.11: a message that only announces work (「まとめます」) and asks or answers nothing."""
    text = (message or "").strip()
    if not text:
        return True
    if "？" in text or "?" in text:
        return False
    return bool(WAITING_PATTERNS.search(text))


def _is_duplicate_question(message: str, asked_questions: Iterable[str], threshold: float = 0.9) -> bool:
    """spec 04 §11: the question was already asked (same text, or bigram Jaccard >= threshold)."""
    grams = _bigrams(message)
    if not grams:
        return False
    for asked in asked_questions:
        other = _bigrams(asked)
        if not other:
            continue
        if _norm(asked) == _norm(message) or len(grams & other) / len(grams | other) >= threshold:
            return True
    return False


def raise_urgency_for_coverage(urgency_flag: str, manual_coverage: str | None) -> str:
    """spec 04 §4 D.12 (F3): not_covered with urgency none/low is raised to medium."""
    if manual_coverage == "not_covered" and urgency_flag in ("none", "low"):
        return "medium"
    return urgency_flag


def should_show_candidates(confidence: float, turn: int) -> bool:
    """spec 04 §4 D.6: candidates once confidence >= 0.7 or from turn 4."""
    return confidence >= CANDIDATE_CONFIDENCE or turn >= CANDIDATE_TURN


def validate_diagnostic(data: Any) -> list[str]:
    """App-side checks strict mode cannot express (spec 04 §12: range, required-by-action fields)."""
    errors = []
    confidence = data.get("confidence_to_answer")
    if isinstance(confidence, int | float) and not 0.0 <= confidence <= 1.0:
        errors.append("$.confidence_to_answer: 0.0〜1.0 の範囲で指定してください")
    if data.get("action") in ("ask_question", "clarify_term") and not data.get("choices"):
        errors.append("$.choices: ask_question / clarify_term では選択肢を指定してください")
    if data.get("action") == "clarify_term" and not data.get("term_to_clarify"):
        errors.append("$.term_to_clarify: clarify_term では確認する用語を指定してください")
    return errors
