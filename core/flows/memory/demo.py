"""Demo persona of the memory flow: 灯 replies in character with a valid trailer, and the extraction and
summary calls are answered from Japanese patterns (names with さん, 好き / 苦手, 次回 / 明日 / 来週)."""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

from core.flows.memory import demo_patterns as pat
from core.flows.memory.constants import TRAILER_MARKER
from core.llm.base import LLMRequest
from core.llm.demo import last_user_text

_UNIT_ID_RE = re.compile(r"\[unit_id=(\d+)\]")

REACTIONS = {
    "joy": (
        "それは嬉しいですね！聞いているこちらまで楽しくなりました。",
        "よかったですね！声が弾んでいるのが伝わってきます。",
        "素敵です！そういう日があると元気が出ますね。",
    ),
    "sadness": (
        "それは大変でしたね…。今日は無理せず、温かいものでも飲んで休んでくださいね。",
        "つらかったですね。話してくれてありがとうございます。",
        "そんな日もありますよね。今夜はゆっくりしてください。",
    ),
    "anger": (
        "それは腹が立ちますね。そう感じるのは当然だと思います。",
        "それはもやもやしますね。話して少しでも軽くなるといいのですが。",
    ),
    "fear": (
        "不安になりますよね。一つずつ片付けていけば、きっと大丈夫です。",
        "緊張しますよね。でも、ここまで準備してきたあなたなら大丈夫です。",
        "心配な気持ち、わかります。私にできることがあれば言ってくださいね。",
    ),
    "neutral": (
        "なるほど、そうだったんですね。",
        "教えてくれてありがとうございます。",
        "へえ、いいですね。",
        "そうなんですね。話してくれてうれしいです。",
    ),
}
ABOUT_PERSON = (
    "{}のお話、もっと聞かせてください。",
    "{}とは仲が良いんですね。",
    "{}もきっと喜んでいますよ。",
)
ABOUT_TOPIC = (
    "{}のこと、覚えておきますね。",
    "{}、いいですね。どんなところが気に入っていますか？",
    "{}の話、また聞かせてください。",
)
ABOUT_DISLIKE = (
    "{}が苦手なんですね。覚えておきます。",
    "{}は好き嫌いが分かれますよね。",
)
ANSWERS = (
    "私はデモの相棒なので食べられませんが、話を聞くのは大好きです。",
    "私ですか？あなたの話を聞いている時間が一番好きです。",
)
FACT_RECALL = {
    "が好きなもの": ("{}がお好きでしたよね。", "{}が好きだと前に話してくれましたね。"),
    "が苦手なもの": (
        "{}は苦手でしたよね。無理はしないでくださいね。",
        "そういえば{}は苦手だと言っていましたね。",
    ),
    "が取り組むもの": ("{}、続いていますか？", "{}を頑張っているんでしたね。"),
}
SHARED_RECALL = (
    "{0}といえば、前に「{1}」と話してくれましたね。",
    "{0}の話、前にも「{1}」と聞きました。",
    "そういえば{0}のことで「{1}」とも言っていましたね。",
)
LOOP_ASKS = (
    "ところで「{}」の件はどうなりましたか？",
    "そういえば「{}」と話していましたが、その後どうですか？",
)
MEMORY_RECALL = (
    "そういえば、前に「{}」と話してくれましたね。",
    "前に聞いた「{}」の話も思い出しました。",
    "「{}」と話してくれた日のこと、覚えていますよ。",
)


def _episode(request: LLMRequest) -> str:
    """The user's part of an extraction request (the line after "ユーザー:")."""
    text = last_user_text(request)
    m = re.search(r"ユーザー: (.*?)(?:\n灯: |$)", text, re.S)
    return m.group(1) if m else text


def _now(request: LLMRequest) -> int:
    m = re.search(r"現在時刻（UNIX秒）: (\d+)", request.messages[0]["content"])
    return int(m.group(1)) if m else 0


def _section(system: str, title: str) -> list[str]:
    """The bullet lines of one section of the memory pack (`## 関連する記憶` ...), without the "- "."""
    m = re.search(rf"## {title}\n((?:- .*\n?)+)", system)
    return [ln[2:] for ln in m.group(1).splitlines()] if m else []


def _memories(system: str) -> list[str]:
    """What the person said in each retrieved conversation (the episode's input; summaries and facts are 灯's
    own notes, not something said)."""
    lines = _section(system, "関連する記憶")
    return [re.sub(r"^\[[^\]]+\] ", "", ln).split(" / ")[0] for ln in lines if "・会話]" in ln]


def _pick(options: tuple[str, ...], seed: str) -> str:
    """One of `options`, the same one for the same seed (a reply varies with what was said, never by chance)."""
    return options[zlib.crc32(seed.encode("utf-8")) % len(options)]


def _clip(text: str, limit: int = 36) -> str:
    text = text.strip().rstrip("。")
    return text[:limit] + ("…" if len(text) > limit else "")


def _cues(text: str) -> list[str]:
    return pat.people(text) + pat.kin(text) + pat.topics(text) + pat.places(text)


def _spoken(cue: str, text: str) -> str:
    """A person's name as 灯 says it (田中 -> 田中さん); other cues as they are."""
    return f"{cue}さん" if cue in pat.people(text) + pat.kin(text) else cue


def _recall(text: str, system: str, turn: int, said: str = "") -> str | None:
    """A sentence that uses a retrieved memory: a known like / dislike of a thing mentioned now, else the
    memory that shares the most with what was said, else the first; phrased by turn and content."""
    cues = _cues(text)
    for fact in _section(system, "ユーザーについて知っていること"):
        m = re.match(r"ユーザー(が好きなもの|が苦手なもの|が取り組むもの):(.+)", fact)
        if m and any(c in m.group(2) or m.group(2) in c for c in cues):
            return _pick(FACT_RECALL[m.group(1)], text + str(turn)).format(m.group(2))
    # what this chat already holds is no memory to bring up ("前に" would be a minute ago)
    memories = [mem for mem in _memories(system) if mem and mem not in text and mem not in said]
    if not memories:
        return None
    best = max(memories, key=lambda mem: sum(c in mem for c in cues))
    shared = [c for c in cues if c in best]
    if shared:
        return _pick(SHARED_RECALL, text + str(turn)).format(_spoken(shared[0], text), _clip(best))
    return _pick(MEMORY_RECALL, text + str(turn)).format(_clip(best)) if not cues else None


def chat_reply(request: LLMRequest) -> str:
    """灯's reply: a reaction to the feeling, a word on who or what was mentioned, a retrieved memory put to
    use (or an open promise asked about), and the trailer. Which phrasing is used depends on the words and the
    turn number, so five turns read as five different replies and the same request gets the same reply."""
    text = last_user_text(request)
    system = request.messages[0]["content"] if request.messages else ""
    turn = sum(m["role"] == "assistant" for m in request.messages)
    label, intensity = pat.affect_of(text)
    parts = ["（デモ）" + _pick(REACTIONS[label], text + str(turn))]
    names, kin, topics = pat.people(text), pat.kin(text), pat.topics(text) + pat.places(text)
    if names:
        parts.append(_pick(ABOUT_PERSON, text).format(names[0] + "さん"))
    elif kin:
        parts.append(_pick(ABOUT_PERSON, text).format(kin[0] + "さん"))
    elif disliked := [f["object_text"] for f in pat.facts(text) if f["predicate"] == "dislikes"]:
        parts.append(_pick(ABOUT_DISLIKE, text).format(disliked[0]))
    elif topics:
        parts.append(_pick(ABOUT_TOPIC, text).format(topics[0]))
    if pat.is_question(text):
        parts.append(_pick(ANSWERS, text))
    said = "\n".join(m["content"] for m in request.messages[1:-1])
    recall = _recall(text, system, turn, said)
    if recall:
        parts.append(recall)
    loops = _section(system, "未完了の約束・続きの話題")
    if loops and not recall:
        loop = re.sub(r" \(期限 [^)]*\)$", "", loops[0])
        parts.append(_pick(LOOP_ASKS, text).format(_clip(loop, 30)))
    if pat.is_promise(text):
        parts.append("約束のこと、覚えておきますね。")
    trailer = _reflection(text, label, intensity)
    trailer["persona_response_policy"] = {
        "cooperation": 0.9 if label != "anger" else 0.6,
        "refusal_bias": 0.1,
        "refusal_allowed": False,
    }
    return "".join(parts) + "\n" + TRAILER_MARKER + "\n" + json.dumps(trailer, ensure_ascii=False)


def _reflection(text: str, label: str | None = None, intensity: float | None = None) -> dict[str, Any]:
    if label is None or intensity is None:
        label, intensity = pat.affect_of(text)
    tags = (pat.topics(text) + pat.places(text))[:5]
    cues = len(pat.people(text)) + len(pat.facts(text)) + len(pat.loops(text, 0))
    return {
        "reflection_text": f"ユーザーが{('「' + tags[0] + '」について') if tags else '日常のこと'}話してくれた。",
        "persona_affect_label": label,
        "persona_affect_intensity": round(intensity, 2),
        "topic_tags": tags,
        "salience": round(min(0.9, 0.35 + 0.15 * cues + (0.1 if label != "neutral" else 0.0)), 2),
        "confidence": 0.7,
    }


def _entities(text: str) -> dict[str, Any]:
    entities: list[dict[str, Any]] = [
        {"type_label": "PERSON", "roles": ["speaker"], "name": "SPEAKER", "aliases": [], "confidence": 0.9}
    ]
    relations = []
    for name in pat.people(text) + pat.kin(text):
        relation = pat.relation_of(text, name)
        entities.append(
            {
                "type_label": "PERSON",
                "roles": ["person", relation],
                "name": name,
                "aliases": [f"{name}さん"] if name not in pat.KIN else [],
                "confidence": 0.85,
            }
        )
        relations.append(
            {
                "src": "PERSON:SPEAKER",
                "relation": relation,
                "dst": f"PERSON:{name}",
                "confidence": 0.7,
                "evidence": f"{name}さん" if name not in pat.KIN else name,
            }
        )
    entities += [
        {"type_label": "PLACE", "roles": ["place"], "name": p, "aliases": [], "confidence": 0.8}
        for p in pat.places(text)
    ]
    entities += [
        {"type_label": "TOPIC", "roles": ["topic"], "name": t, "aliases": [], "confidence": 0.7}
        for t in pat.topics(text)
    ]
    return {"entities": entities, "relations": relations}


def _summary(request: LLMRequest, kind: str) -> dict[str, Any]:
    lines = [ln for ln in last_user_text(request).splitlines() if ln.startswith("[unit_id=")]
    ids = [int(m.group(1)) for ln in lines if (m := _UNIT_ID_RE.match(ln))]
    joined = "\n".join(lines)
    topics = sorted(set(pat.topics(joined)), key=lambda t: -joined.count(t))[:3]
    names = sorted(set(pat.people(joined)), key=lambda n: -joined.count(n))[:2]
    events = [{"unit_id": i, "why": "印象に残ったやり取り"} for i in ids[-3:]]
    name = re.search(r"(?:人物|話題)「(.+?)」", request.messages[0]["content"])
    target = name.group(1) if name else ""
    topic_text = "、".join(topics) or "日常のこと"
    if kind == "bond":
        text = f"（デモ）この7日間で{len(ids)}回お話ししました。よく出た話題は{topic_text}です。" + (
            f"{'さん、'.join(names)}さんの話もよく聞きました。" if names else ""
        )
        return {
            "summary_text": text,
            "key_events": events,
            "bond_state": "打ち解けてきた" if len(ids) >= 5 else "知り合ったばかり",
        }
    text = f"（デモ）「{target}」は最近{len(ids)}回話題に出ました。関連する話題: {topic_text}。"
    if kind == "person":
        return {
            "summary_text": text,
            "favorability_score": 0.6,
            "favorability_reasons": events[:2],
            "key_events": events,
            "notes": None,
        }
    return {"summary_text": text, "key_events": events, "notes": None}


def memory_persona(request: LLMRequest) -> str:
    """Answer each call of the memory flow by its step tag."""
    step = request.tags.get("step", "")
    if step == "chat":
        return chat_reply(request)
    text = _episode(request)
    if step == "reflection":
        data: dict[str, Any] = _reflection(text)
    elif step == "extract_entities":
        data = _entities(text)
    elif step == "extract_facts":
        data = {"facts": pat.facts(text)}
    elif step == "extract_loops":
        data = {"loops": pat.loops(text, _now(request))}
    elif step == "extract_all":  # the three spec shapes in one answer (schemas/memory_extraction)
        data = {
            "entities": _entities(text),
            "facts": {"facts": pat.facts(text)},
            "loops": {"loops": pat.loops(text, _now(request))},
        }
    elif step.startswith("summary_"):
        data = _summary(request, step.removeprefix("summary_"))
    else:
        return "（デモモデル）この呼び出しには対応していません。"
    return json.dumps(data, ensure_ascii=False)
