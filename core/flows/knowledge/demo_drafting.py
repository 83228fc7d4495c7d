"""The demo interviewer's drafting of an entry from what it was told: the clause's topic, a short title that
names the case (never a sentence cut with 「…」), and a clause sample that reads as the agreed outcome."""

from __future__ import annotations

import re
from collections.abc import Mapping


def clause_topic(clause: str) -> str:
    """「第5条（秘密保持）」 -> 「秘密保持条項」 (the clause itself when it names no topic)."""
    m = re.search(r"（(.+?)）", clause)
    if m and "未確認" not in m.group(1):
        return f"{m.group(1)}条項"
    return clause.split("（")[0] or "契約条項"


def suggest_sample(slots: Mapping[str, str], bodies: Mapping[str, list[str]]) -> str:
    """A clause the agreed outcome reads as: the attached clause (`bodies`: 第N条 -> its lines) with the agreed
    years, else a wording built from the outcome (a term of years, or the outcome itself as the clause's rule),
    marked as a draft."""
    number = slots.get("target_clause", "").split("（")[0]
    body = " ".join(bodies.get(number, []))
    action = slots.get("action", "")
    years = re.search(r"(\d+)\s*年", action)
    if body and years and re.search(r"\d+年間", body):
        return re.sub(r"\d+年間", f"{years.group(1)}年間", body, count=1)
    if years and "期間" in action + slots.get("target_clause", "") + slots.get("issue", ""):
        sample = f"前項の義務は、本契約終了後{years.group(1)}年間存続する。"
        if "個人情報" in action and "期間の定め" in action:
            sample += "ただし、個人情報については期間の定めなく存続する。"
        return f"（修正例）{sample}"
    rule = _agreed_rule(action)
    return (
        f"（修正例）{number + '　' if number else ''}{rule}"
        if rule
        else "（修正例）合意した内容を条文の形で記載してください。"
    )


def _agreed_rule(action: str) -> str:
    """The agreed outcome as a clause sentence: 「…とすることで合意しました」 -> 「…とする。」."""
    sentence = re.split(r"(?<=。)", action.strip())[0].rstrip("。")
    sentence = re.sub(r"(?:ことで|ことに|と|で)(?:合意|決着|落ち着き)(?:しました|した|済み)?$", "", sentence)
    sentence = re.sub(r"^(?:相手方|先方)(?:と|に)(?:交渉し|協議し)?、?", "", sentence)
    sentence = sentence.split("求め、")[-1]
    if not sentence:
        return ""
    return sentence + ("" if sentence.endswith(("する", "とする", "ない", "できる")) else "ものとする") + "。"


_TITLE_CORE = re.compile(r"^(.+?)(?:案|提案|修正案|要求|条件|内容)(?:が|を|に)")
_TITLE_LEAD = re.compile(r"^.*?(?:相手方|先方|取引先)(?:から|が|より)、?")
TITLE_CORE_CHARS = 40


def _as_noun_phrase(sentence: str) -> str:
    """「上限を代金額に限定してきました」 -> 「上限を代金額に限定する提示」 (the request as a thing)."""
    for pattern, ending in (
        (r"(?:してきま?した|してきています|してきた|されました|しました|した)$", "する提示"),
        (r"(?<=[めえけせてねべれ])てきま?した$", "る提示"),
    ):
        if re.search(pattern, sentence):
            return re.sub(pattern, ending, sentence)
    return sentence.removesuffix("ました").removesuffix("です")


def case_title(topic: str, issue: str) -> str:
    """A short title that says the case: 「秘密保持条項：存続期間を「契約終了後3年」に限定する提示への対応」 (never a
    sentence cut with 「…」)."""
    sentence = re.split(r"[。\n]", issue.strip())[0]
    sentence = _TITLE_LEAD.sub("", sentence)
    core = m.group(1) + "提示" if (m := _TITLE_CORE.match(sentence)) else _as_noun_phrase(sentence)
    core = re.sub(r"^(?:秘密保持義務|本契約)の", "", core) if topic.startswith("秘密保持") else core
    if len(core) > TITLE_CORE_CHARS:
        cut = core.rfind("、", 0, TITLE_CORE_CHARS)
        core = core[:cut] if cut > 0 else ""
    return f"{topic}：{core}への対応" if core else f"{topic}の修正提示への対応"
