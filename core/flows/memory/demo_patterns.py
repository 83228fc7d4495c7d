"""Japanese patterns the demo model uses to play the memory flow: affect lexicon, names, likes, plans."""

from __future__ import annotations

import re
from typing import Any

AFFECT_LEXICON = {
    "joy": (
        "嬉しい",
        "うれしい",
        "楽しい",
        "楽しかった",
        "良かった",
        "よかった",
        "最高",
        "合格",
        "美味しかった",
        "おいしかった",
        "ありがとう",
        "幸せ",
        "わくわく",
        "ワクワク",
        "やった",
    ),
    "sadness": ("悲しい", "寂しい", "さみしい", "残念", "落ち込", "つらい", "辛い", "疲れ", "泣", "しんどい"),
    "anger": ("ムカ", "腹が立", "怒", "イライラ", "ひどい", "最悪", "許せない"),
    "fear": ("不安", "怖い", "こわい", "心配", "緊張", "焦", "ドキドキ"),
}
PLACES = (
    "新宿",
    "渋谷",
    "池袋",
    "吉祥寺",
    "下北沢",
    "鎌倉",
    "横浜",
    "京都",
    "大阪",
    "札幌",
    "福岡",
    "箱根",
    "高尾山",
    "中目黒",
    "神保町",
    "秋葉原",
    "代々木公園",
    "井の頭公園",
    "上野",
    "浅草",
)
TOPICS = (
    "ラーメン",
    "カレー",
    "寿司",
    "コーヒー",
    "ほうじ茶",
    "読書",
    "ミステリー",
    "小説",
    "ランニング",
    "ジム",
    "ヨガ",
    "料理",
    "映画",
    "ゲーム",
    "Unity",
    "プログラミング",
    "仕事",
    "締切",
    "企画書",
    "会議",
    "英語",
    "ピアノ",
    "ギター",
    "キャンプ",
    "登山",
    "猫",
    "犬",
    "旅行",
    "引越",
    "転職",
    "資格",
    "試験",
    "筋トレ",
    "カメラ",
    "写真",
    "パン",
    "ケーキ",
    "温泉",
    "アニメ",
    "漫画",
    "サウナ",
    "パクチー",
    "納豆",
    "お弁当",
    "結婚式",
)
RELATION_WORDS = {
    "同僚": "colleague",
    "上司": "colleague",
    "後輩": "colleague",
    "先輩": "colleague",
    "友達": "friend",
    "友人": "friend",
    "親友": "friend",
    "幼なじみ": "friend",
    "母": "family",
    "父": "family",
    "姉": "family",
    "兄": "family",
    "妹": "family",
    "弟": "family",
    "彼女": "romantic",
    "彼氏": "romantic",
}
_NOUN = r"[一-龥々ァ-ヶーA-Za-z0-9ａ-ｚＡ-Ｚ]+"
NAME_SAN = re.compile(r"([一-龥々ァ-ヶー]{1,4})さん")
LIKE = re.compile(rf"({_NOUN})(?:が|は|も)(?:大|とても|すごく|やっぱり)?好き")
DISLIKE = re.compile(rf"({_NOUN})(?:が|は|も)(?:ちょっと|やっぱり|どうも)?(?:苦手|嫌い)")
USES = re.compile(rf"({_NOUN})を(?:使って|愛用)")
WORKS = re.compile(rf"({_NOUN})(?:で働いて|に勤めて)")
LIVES = re.compile(rf"({_NOUN})に住んで")
GOAL = re.compile(r"目標は(.+?)(?:です|こと|。|$)")
CALLED = re.compile(rf"({_NOUN})って呼んで")
STARTED = re.compile(rf"({_NOUN})を(?:始めた|始めて|習い始め|続けて)")
# Family members named by the word alone (妹の結婚式): a person entity of their own.
KIN = ("母", "父", "姉", "兄", "妹", "弟")
_KIN = re.compile(r"(?<![一-龥々])(母|父|姉|兄|妹|弟)(?=の|が|は|と|に|から|へ)")
# A real promise or plan to follow up: a commitment, not just a time word (来月の結婚式 is news, not a promise).
PROMISE = re.compile(r"約束|つもり|予定|なきゃ|なくちゃ|ないと|頑張ります|がんばります|続き")
_QUESTION = re.compile(r"(?:[?？]|ですか。?|ますか。?|かな。?)\s*$")
PLAN_WORDS = {"明日": 1, "明後日": 2, "週末": 4, "来週": 7, "来月": 28, "次回": None, "今度": None}
_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")
# Time and stance words that the noun pattern swallows at the front (最近ヨガが好き -> ヨガ).
_LEADING_WORDS = ("最近", "今は", "今も", "今", "実は", "昔から", "ずっと", "前から", "やっぱり")


def _strip_leading(obj: str) -> str:
    for word in _LEADING_WORDS:
        if obj.startswith(word) and len(obj) > len(word) + 1:
            return obj[len(word) :]
    return obj


def affect_of(text: str) -> tuple[str, float]:
    """The strongest affect label of the lexicon in the text, with an intensity."""
    counts = {label: sum(text.count(w) for w in words) for label, words in AFFECT_LEXICON.items()}
    label = max(counts, key=lambda k: counts[k])
    if counts[label] == 0:
        return "neutral", 0.2
    return label, min(0.95, 0.45 + 0.2 * counts[label])


def people(text: str) -> list[str]:
    names = []
    for m in NAME_SAN.finditer(text):
        name = m.group(1)
        for word in RELATION_WORDS:
            if name.startswith(word) and len(name) > len(word):
                name = name[len(word) :]
        if name.startswith("の"):
            name = name[1:]
        if name and name not in names:
            names.append(name)
    return names


def kin(text: str) -> list[str]:
    """Family members named by the word alone (妹の…), not as part of a name with さん."""
    return list(dict.fromkeys(m.group(1) for m in _KIN.finditer(text) if f"{m.group(1)}さん" not in text))


def is_question(sentence: str) -> bool:
    """Whether a sentence asks something (it files no fact and no promise)."""
    return bool(_QUESTION.search(sentence.strip()))


def is_promise(text: str) -> bool:
    """Whether a statement (not a question) commits to something to follow up."""
    return any(PROMISE.search(s) and not is_question(s) for s in _SENTENCE.findall(text))


def relation_of(text: str, name: str) -> str:
    if name in KIN:
        return RELATION_WORDS[name]
    for word, relation in RELATION_WORDS.items():
        if f"{word}の{name}さん" in text or f"{word}{name}さん" in text:
            return relation
    return "related"


def places(text: str) -> list[str]:
    return [p for p in PLACES if p in text]


def topics(text: str) -> list[str]:
    return [t for t in TOPICS if t in text]


def facts(text: str) -> list[dict[str, Any]]:
    """likes / dislikes / uses / affiliated_with / located_in / goal_is / is_addressed_as facts."""
    out: list[dict[str, Any]] = []
    for sentence in _SENTENCE.findall(text):
        if is_question(sentence):
            continue
        names = people(sentence)
        subject = {
            "type_label": "PERSON",
            "name": names[0] if names and f"{names[0]}さんは" in sentence else "SPEAKER",
        }
        for pattern, predicate, conf in (
            (LIKE, "likes", 0.8),
            (DISLIKE, "dislikes", 0.8),
            (USES, "uses", 0.7),
            (STARTED, "operates_on", 0.7),
            (WORKS, "affiliated_with", 0.75),
            (LIVES, "located_in", 0.75),
            (CALLED, "is_addressed_as", 0.85),
        ):
            for m in pattern.finditer(sentence):
                obj = _strip_leading(m.group(1))
                if obj in ("の", "こと", "それ", "これ") or len(obj) < 2:
                    continue
                out.append(
                    {
                        "subject": subject,
                        "predicate": predicate,
                        "object_text": obj,
                        "object": None,
                        "confidence": conf,
                        "validity": {"from": None, "to": None},
                    }
                )
        goal = GOAL.search(sentence)
        if goal:
            out.append(
                {
                    "subject": subject,
                    "predicate": "goal_is",
                    "object_text": goal.group(1).strip("、 "),
                    "object": None,
                    "confidence": 0.7,
                    "validity": {"from": None, "to": None},
                }
            )
    return out


def loops(text: str, now: int) -> list[dict[str, Any]]:
    """Sentences that promise or plan something (約束, つもり, 予定, 続き ...; never a question) become open
    loops; a time word (明日, 来週 ...) gives the due date from the current time."""
    out = []
    for sentence in _SENTENCE.findall(text):
        if is_question(sentence) or not PROMISE.search(sentence):
            continue
        days = next((d for word, d in PLAN_WORDS.items() if word in sentence), None)
        due = now + days * 86_400 if days is not None else None
        out.append({"due_at": due, "loop_text": sentence.strip()[:80], "confidence": 0.7})
    return out
