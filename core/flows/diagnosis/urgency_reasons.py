"""How the urgency judgement's reasons read (spec 04 §6 fast path): the quoted example, the level it named, and the note
a cap at medium ends a reason with (a denial, a question, a story, a calm neighbourhood, the owner's word that it can
wait, the probe; the rules' harmless frame has its own, FRAME_NOTE). Above medium, once another judgement raised the
session, a banner shows a reason without its cap note (without_cap_note).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.flows.diagnosis.urgency import FRAME_NOTE

LEVEL_NAMES = {"critical": "緊急", "high": "高", "medium": "中", "low": "低"}
MEANING_REASON = "意味の近い症状例"  # how every reason of this judgement begins (it quotes the example)
LEVEL_NOTE = "（緊急度: {level}）"  # how an uncapped reason of this judgement ends
# Characters of an example a reason quotes (half the examples are longer; the longest is 113).
QUOTE_LIMIT = 30


def quote(example: str) -> str:
    """An example as a reason quotes it: 「…」, cut at QUOTE_LIMIT characters (the banner stays a few lines)."""
    cut = example if len(example) <= QUOTE_LIMIT else example[: QUOTE_LIMIT - 1] + "…"
    return f"「{cut}」"


DENIAL_NOTE = "（症状がないこと・正常に動くことを述べる文のため、この判定では緊急度は中まで）"
QUESTION_NOTE = "（正常かどうか・起こりうるか・何の表示かを尋ねる文のため、緊急度は{level}まで）"
STORY_NOTE = (
    "（人から聞いた話・昔の話・たとえ話など、危険を話題にしているだけの文に意味が近いため、この判定では緊急度は中まで"
    "{example}）"
)
CALM_NOTE = "（意味の近い症状例がどれも急ぎではないため、この判定では緊急度は中まで{example}）"
WAIT_NOTE = "（急ぎではないと書かれており、危険を示す言葉もないため、この判定では緊急度は中まで）"
PROBE_NOTE = (
    "（文全体が、危険を報告する文よりも危険を話題にしているだけの文に近いため、この判定では緊急度は中まで）"
)
# How a cap's note names its example, unless a reason of the judgement by meaning already quotes it
EXAMPLE_NOTE = "。近い例: {quoted}"
# How each note of a cap at medium opens (the note ends its reason). It says why one judgement stopped at medium: once
# another judgement (the model's, spec 04 §6) raises the session above medium, the banner leaves it out.
CAP_NOTE_OPENINGS = tuple(
    note.split("{")[0]
    for note in (FRAME_NOTE, DENIAL_NOTE, QUESTION_NOTE, STORY_NOTE, CALM_NOTE, WAIT_NOTE, PROBE_NOTE)
)


def without_cap_note(reason: str) -> str:
    """A reason without the note of a cap at medium that ends it (「ブレーキの故障・効き不良の疑い（仮定・備え…中まで）」
    -> 「ブレーキの故障・効き不良の疑い」); any other reason as it is."""
    return reason[: len(reason) - len(cap_note_of(reason))]


def cap_note_of(reason: str) -> str:
    """The note of a cap at medium that ends `reason` (CAP_NOTE_OPENINGS), or "" for a reason without one."""
    cuts = [reason.find(opening) for opening in CAP_NOTE_OPENINGS if opening in reason]
    return reason[min(cuts) :] if cuts else ""


def joined_reasons(reasons: Sequence[str]) -> str:
    """The reasons as the banner and the advisor's message list them, 「、」 between; a cap note that ends a reason and
    the next one alike (the rules' frame and the judgement by meaning stopped at medium for the same frame) is said
    once, after the last of them: 「発煙（煙が出ている）、意味の近い症状例「…」（仮定・備え…中まで）」, not the note twice."""
    shown = []
    for reason, following in zip(reasons, [*reasons[1:], ""], strict=False):
        note = cap_note_of(reason)
        shown.append(without_cap_note(reason) if note and following.endswith(note) else reason)
    return "、".join(shown)


def without_level_or_cap_note(reason: str) -> str:
    """A reason as the probe's cap shows it: without a cap note (without_cap_note) and, when it is this judgement's,
    without the level it named (「意味の近い症状例「…」（緊急度: 緊急）」 -> 「意味の近い症状例「…」」): the cap's note
    says the level now."""
    reason = without_cap_note(reason)
    opening = LEVEL_NOTE.split("{")[0]
    if reason.startswith(MEANING_REASON) and opening in reason:
        return reason[: reason.rindex(opening)]
    return reason
