"""Demo persona of the memory flow: 灯 replies in character with a valid trailer, and the extraction and
summary calls are answered from Japanese patterns (names with さん, 好き / 苦手, 次回 / 明日 / 来週)."""

from __future__ import annotations

import json
import re
from typing import Any

from core.flows.memory import demo_patterns as pat
from core.flows.memory.constants import TRAILER_MARKER
from core.llm.base import LLMRequest
from core.llm.demo import last_user_text

_UNIT_ID_RE = re.compile(r"\[unit_id=(\d+)\]")

_REPLIES = {
    "joy": "それは嬉しいですね！聞いているこちらまで楽しくなりました。",
    "sadness": "それは大変でしたね…。今日は無理せず、温かいものでも飲んで休んでくださいね。",
    "anger": "それは腹が立ちますね。そう感じるのは当然だと思います。",
    "fear": "不安になりますよね。一つずつ片付けていけば、きっと大丈夫です。",
    "neutral": "なるほど、そうだったんですね。",
}


def _episode(request: LLMRequest) -> str:
    """The user's part of an extraction request (the line after "ユーザー:")."""
    text = last_user_text(request)
    m = re.search(r"ユーザー: (.*?)(?:\n灯: |$)", text, re.S)
    return m.group(1) if m else text


def _now(request: LLMRequest) -> int:
    m = re.search(r"現在時刻（UNIX秒）: (\d+)", request.messages[0]["content"])
    return int(m.group(1)) if m else 0


def _memory_line(system: str) -> str | None:
    m = re.search(r"## 関連する記憶\n- \[[^\]]+\] (.+)", system)
    if not m:
        return None
    first = m.group(1).split(" / ")[0]
    return first[:40] + ("…" if len(first) > 40 else "")


def _loop_line(system: str) -> str | None:
    m = re.search(r"## 未完了の約束・続きの話題\n- (.+)", system)
    return m.group(1) if m else None


def chat_reply(request: LLMRequest) -> str:
    text = last_user_text(request)
    system = request.messages[0]["content"] if request.messages else ""
    label, intensity = pat.affect_of(text)
    parts = ["（デモ）" + _REPLIES[label]]
    names, topics = pat.people(text), pat.topics(text) + pat.places(text)
    if names:
        parts.append(f"{names[0]}さんのお話、もっと聞かせてください。")
    elif topics:
        parts.append(f"{topics[0]}のこと、覚えておきますね。")
    memory = _memory_line(system)
    if memory:
        parts.append(f"そういえば、前に「{memory}」と話してくれましたね。")
    loop = _loop_line(system)
    if loop and not memory:
        parts.append(f"ところで「{loop[:30]}」の件はどうなりましたか？")
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
    for name in pat.people(text):
        relation = pat.relation_of(text, name)
        entities.append(
            {
                "type_label": "PERSON",
                "roles": ["person", relation],
                "name": name,
                "aliases": [f"{name}さん"],
                "confidence": 0.85,
            }
        )
        relations.append(
            {
                "src": "PERSON:SPEAKER",
                "relation": relation,
                "dst": f"PERSON:{name}",
                "confidence": 0.7,
                "evidence": f"{name}さん",
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
