"""The demo model's diagnosis persona: deterministic, reads the manual excerpts in the prompt.

It asks 2 questions with choices drawn from the retrieved chunks that share a key noun with the
symptom, raises its confidence as answers come, then gives a provide_answer citing the manual page;
after a failed solution it cites another relevant chunk, or says the manual has nothing more. It
escalates when the best relevant chunk is a danger item — unless the symptom tells the danger in a harmless frame (a
scare only feared, somebody else's car, the news: `in_harmless_frame`), says the car works, or asks whether what it
saw is normal without naming a danger, which a real model reads from the words and the demo cannot — and echoes the
keyword rules in the urgency check. It only ever quotes the excerpts it was given.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.flows.diagnosis.urgency_frames import in_harmless_frame
from core.flows.diagnosis.urgency_grammar import doubts_a_fault
from core.flows.diagnosis.urgency_rules import names_a_danger, says_it_works
from core.llm.base import LLMRequest

_EXCERPT = re.compile(
    r"^- p\.(?P<page>\d+)「(?P<section>[^」]+)」\((?P<type>\w+)\)(?P<warn>【警告あり】)? 関連度 (?P<score>[\d.]+)\n  (?P<content>.+)$",
    re.M,
)
_TURN = re.compile(r"問診ターン: (\d+) / (\d+)")
_KEYWORD = re.compile(r"level=(\w+), can_drive=(\w+), visit_urgency=(\w+)")
TIMING_CHOICES = ["走行中", "停車中・アイドリング中", "エンジン（電源）を入れた直後"]
_KEY_TERM = re.compile(r"[ァ-ヴー]{2,}|[一-龥々]{2,}|[A-Za-z0-9]{2,}")
_CITED = re.compile(r"「([^」]+)」によると")


def _section(prompt: str, title: str) -> str:
    match = re.search(rf"## {re.escape(title)}[^\n]*\n(.*?)(?=\n## |\Z)", prompt, re.S)
    return match.group(1).strip() if match else ""


def _excerpts(prompt: str) -> list[dict[str, Any]]:
    return [
        {
            "page": int(m["page"]),
            "section": m["section"],
            "type": m["type"],
            "warning": bool(m["warn"]),
            "score": float(m["score"]),
            "content": m["content"],
        }
        for m in _EXCERPT.finditer(prompt)
    ]


def _answers(prompt: str) -> list[str]:
    block = _section(prompt, "これまでに伺った内容")
    return [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]


def _diagnostic(base: dict[str, Any]) -> dict[str, Any]:
    data = {
        "action": "ask_question",
        "message": "",
        "urgency_flag": "none",
        "reasoning": "（デモ）",
        "choices": None,
        "can_drive": None,
        "confidence_to_answer": 0.2,
        "rewritten_query": "",
        "question_topic": "",
        "manual_coverage": "covered",
        "visit_urgency": None,
        "term_to_clarify": None,
    }
    data.update(base)
    return data


def _key_terms(text: str) -> set[str]:
    """Katakana, kanji and Latin runs of 2+ characters: the nouns a symptom is about (エアコン, 警告灯, ABS)."""
    return set(_KEY_TERM.findall(text))


def _relevant(excerpts: list[dict[str, Any]], symptom: str) -> list[dict[str, Any]]:
    """The excerpts whose section shares a key noun with the symptom (all of them when none does).

    The character-gram search also returns near misses (「エアコンの効きが悪い」 finds
    「ブレーキの効きが悪いとき」); a reader would skip those, and so does the persona.
    """
    terms = _key_terms(symptom)
    hits = [
        e
        for e in excerpts
        if any(t in e["section"] for t in terms) or any(t in symptom for t in _key_terms(e["section"]))
    ]
    return hits or excerpts


def _cited(prompt: str) -> set[str]:
    """Sections the persona already answered with (visible in the recent turns or the summary)."""
    text = _section(prompt, "直近の会話") + "\n" + _section(prompt, "会話の要約")
    return set(_CITED.findall(text))


def _no_more_answer() -> dict[str, Any]:
    return _diagnostic(
        {
            "action": "provide_answer",
            "message": "（デモ）取扱説明書には、ほかに該当しそうな記載が見つかりませんでした。"
            "部品の点検が必要な可能性があるため、販売店での点検をおすすめします。",
            "urgency_flag": "medium",
            "confidence_to_answer": 0.4,
            "manual_coverage": "not_covered",
            "question_topic": "回答",
            "can_drive": True,
            "visit_urgency": "this_week",
        }
    )


def _answer_from(chunk: dict[str, Any] | None, symptom: str, retry: bool) -> dict[str, Any]:
    if chunk is None and retry:
        return _no_more_answer()
    if chunk is None:
        return _diagnostic(
            {
                "action": "provide_answer",
                "message": f"（デモ）取扱説明書に「{symptom}」に該当する記載は見つかりませんでした。一般的には部品の劣化や調整不良が考えられます。",
                "urgency_flag": "low",
                "confidence_to_answer": 0.5,
                "manual_coverage": "not_covered",
                "question_topic": "回答",
                "can_drive": True,
            }
        )
    flag = {"danger": "critical", "warning": "high"}.get(chunk["type"], "low")
    lead = "別の可能性として、" if retry else ""
    return _diagnostic(
        {
            "action": "provide_answer",
            "message": f"（デモ）{lead}取扱説明書 p.{chunk['page']}「{chunk['section']}」によると:\n\n{chunk['content']}",
            "urgency_flag": flag,
            "confidence_to_answer": 0.8,
            "manual_coverage": "covered",
            "question_topic": chunk["section"],
            # a later retry searches the whole symptom again, not just this section
            "rewritten_query": symptom,
            "can_drive": flag != "critical",
            "visit_urgency": {"critical": "immediate", "high": "today"}.get(flag, "when_convenient"),
            "reasoning": f"（デモ）p.{chunk['page']} の記載と回答が一致",
        }
    )


def _timing_choices(symptom: str, chosen: dict[str, Any] | None) -> list[str]:
    about_brakes = "ブレーキ" in symptom or (chosen is not None and "ブレーキ" in chosen["section"])
    return [*TIMING_CHOICES, "ブレーキを踏んだとき" if about_brakes else "いつも（常に）"]


def _tells_no_danger(symptom: str) -> bool:
    """The symptom names a danger without having one, as far as the demo can read the words: a harmless frame (a
    scare only feared, somebody else's car, the news), the car said to work (「サイドブレーキを下ろしたら消えました」:
    `says_it_works`), or a question whether it is normal that names no danger by the rules (「これで合ってますか？」)."""
    return (
        in_harmless_frame(symptom)
        or says_it_works(symptom)
        or (doubts_a_fault(symptom) and not names_a_danger(symptom))
    )


def diagnostic_reply(prompt: str) -> dict[str, Any]:
    """One DIAGNOSTIC_SCHEMA reply from what the prompt shows (turn, excerpts, answers)."""
    turn_match = _TURN.search(prompt)
    turn = int(turn_match.group(1)) if turn_match else 1
    symptom = _section(prompt, "お客様が最初に伝えた症状")
    excerpts = _relevant(_excerpts(prompt), symptom)
    answers = _answers(prompt)
    retries = sum("解決しませんでした" in a or "変わりません" in a for a in answers)
    force = "provide_answer にして" in prompt or "問診ターンの上限" in prompt
    if (
        excerpts
        and excerpts[0]["type"] == "danger"
        and excerpts[0]["score"] >= 0.5
        and not _tells_no_danger(symptom)
    ):
        top = excerpts[0]
        return _diagnostic(
            {
                "action": "escalate",
                "message": f"（デモ）取扱説明書 p.{top['page']}「{top['section']}」に危険の記載があります。{top['content']}",
                "urgency_flag": "high",
                "can_drive": False,
                "visit_urgency": "immediate",
                "confidence_to_answer": 0.9,
                "question_topic": top["section"],
            }
        )
    chosen = next((e for a in reversed(answers) for e in excerpts if e["section"] in a), None)
    if retries:
        cited = _cited(prompt)
        pool = [e for e in excerpts if e["section"] not in cited and e is not chosen]
        return _answer_from(pool[0] if pool else None, symptom, retry=True)
    if turn >= 3 or force:
        return _answer_from(chosen or (excerpts[0] if excerpts else None), symptom, retry=False)
    if turn == 1:
        sections = list(dict.fromkeys(e["section"] for e in excerpts))[:3]
        if not sections:
            return _diagnostic(
                {
                    "message": "（デモ）症状はどのくらいの頻度で起きますか？",
                    "choices": ["毎回", "ときどき", "一度だけ"],
                    "question_topic": "症状の頻度",
                    "manual_coverage": "not_covered",
                }
            )
        lights = "警告灯" in symptom or "ランプ" in symptom
        return _diagnostic(
            {
                "message": "（デモ）取扱説明書では次の項目が関係しそうです。いちばん近いものはどれですか？",
                "choices": sections,
                "question_topic": "点灯している警告灯の種類" if lights else "該当する症状の項目",
                "confidence_to_answer": 0.3,
                "rewritten_query": symptom,
            }
        )
    return _diagnostic(
        {
            "message": "（デモ）その症状が出るのはどんなときですか？",
            "choices": _timing_choices(symptom, chosen),
            "question_topic": "症状の発生タイミング",
            "confidence_to_answer": 0.55,
            "rewritten_query": chosen["section"] if chosen else symptom,
        }
    )


def _spec_reply(prompt: str) -> dict[str, Any]:
    spec = [
        e
        for e in _excerpts(prompt)
        if e["type"] in ("procedure", "specification", "general") and not e["warning"]
    ]
    if not spec or spec[0]["score"] < 0.5:
        return {
            "is_spec": False,
            "confidence": "low",
            "explanation": "（デモ）故障の可能性があります。",
            "manual_reference": None,
            "reasoning": "（デモ）仕様の記載なし",
        }
    top = spec[0]
    return {
        "is_spec": True,
        "confidence": "high",
        "explanation": f"（デモ）故障ではなく仕様の可能性が高いです。{top['content']}",
        "manual_reference": f"p.{top['page']} {top['section']}",
        "reasoning": "（デモ）取扱説明書の仕様の記載と一致",
    }


def _urgency_reply(prompt: str) -> dict[str, Any]:
    match = _KEYWORD.search(prompt)
    level, can_drive, visit = (
        (match.group(1), match.group(2) == "True", match.group(3))
        if match
        else ("low", True, "when_convenient")
    )
    if level == "low":
        level, visit = "medium", "this_week"
    return {
        "level": level,
        "can_drive": can_drive,
        "visit_urgency": visit,
        "reasons": ["（デモ）対処を何度か試しても解決していないため"],
        "recommendation": "（デモ）販売店で点検を受けることをおすすめします。",
    }


def _rag_text(prompt: str) -> str:
    excerpts = _excerpts(prompt)
    if not excerpts:
        return "（デモ）取扱説明書に該当する記載はありませんでした。一般的な点検をおすすめします。"
    refs = "、".join(f"「{e['section']}」（p.{e['page']}）" for e in excerpts[:3])
    return f"（デモ）取扱説明書の{refs}に関連する記載があります。"


def persona(request: LLMRequest) -> str:
    """Route by step tag / schema name (core.llm.demo persona contract)."""
    prompt = next((m["content"] for m in reversed(request.messages) if m["role"] == "user"), "")
    step = request.tags.get("step", "")
    name = request.json_schema.name if request.json_schema else ""
    if name == "diagnostic_response":
        return json.dumps(diagnostic_reply(prompt), ensure_ascii=False)
    if name == "spec_classification":
        return json.dumps(_spec_reply(prompt), ensure_ascii=False)
    if name == "urgency":
        return json.dumps(_urgency_reply(prompt), ensure_ascii=False)
    if step == "summary":
        answers = _answers(prompt) or [line for line in prompt.splitlines() if line.startswith("お客様: ")]
        return "\n".join(["- （デモ）これまでの回答:", *[f"  - {a}" for a in answers[-5:]]])
    return _rag_text(prompt)
