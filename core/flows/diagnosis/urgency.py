"""Rule-based urgency (spec 04 §6): CRITICAL / HIGH / MEDIUM rules over the normalized symptom text.

The rules are data: `urgency_rules.json` beside this module holds the levels (can_drive,
visit_urgency), a vocabulary of spellings (ブレーキ / ぶれーき, 漏れ / もれ / 垂れ / シミ, ...) and each rule's
name, level, reason and patterns. Patterns run on core.text.textnorm.fold of the text with whitespace removed, so
full-width, half-width and radical spellings meet. `keyword_urgency_check` walks the levels from the most to
the least urgent. A match directly followed by a negation (「煙は出ていません」「警告灯は点いていない」) or
in a hypothetical (「もし…」「…場合はどうすれば」) does not count, nor does a rule whose `unless` pattern
describes a normal behaviour in the same text (every warning light lit for a moment at start-up). A text in a
harmless frame (a hypothetical, a preparation, a repair already done, somebody else's car, the news) goes no
higher than medium.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.flows.diagnosis.models import URGENCY_ORDER, VISIT_URGENCY_ORDER
from core.text.textnorm import fold

RULES_FILE = Path(__file__).with_name("urgency_rules.json")
LEVELS = ("critical", "high", "medium")


@dataclass(frozen=True)
class UrgencyRule:
    """One named pattern; `reason` is the Japanese text shown to staff when it matches."""

    name: str
    pattern: re.Pattern[str]
    reason: str
    # a text this matches describes a normal behaviour (「警告灯が全部点いてすぐ消える」): the rule does not count
    unless: re.Pattern[str] | None = None


@dataclass
class UrgencyResult:
    """spec 04 §6: level (low | medium | high | critical), can_drive, visit_urgency, reasons."""

    level: str
    can_drive: bool
    visit_urgency: str
    reasons: list[str] = field(default_factory=list)


def _expand(pattern: str, vocabulary: dict[str, list[str]]) -> str:
    return re.sub(r"\{([A-Z_]+)\}", lambda m: "(?:" + "|".join(vocabulary[m.group(1)]) + ")", pattern)


def _with_guards(pattern: str, guards: dict[str, str]) -> str:
    """`pattern` with each {NAME} of `guards` written out."""
    return re.sub(r"\{([A-Z_]+)\}", lambda m: guards[m.group(1)], pattern)


def harmless_frames_pattern(frames: dict[str, Any]) -> str:
    """One alternation of the named harmless frames, each guard ({NO_DANGER_AFTER}: no danger told after the frame in
    its sentence; {NOT_ABOUT_THE_CAR}: a frame's words the settled reach shares) written out. The frames are tried in
    the file's order."""
    return "|".join(_with_guards(frame["pattern"], frames["guards"]) for frame in frames["frames"])


def load_rules(path: Path = RULES_FILE) -> dict[str, Any]:
    """The rule file with every pattern expanded and compiled, rules grouped by level."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    vocabulary = {name: [fold(w) for w in words] for name, words in data["vocabulary"].items()}
    by_level: dict[str, list[UrgencyRule]] = {level: [] for level in LEVELS}
    for rule in data["rules"]:
        pattern = "|".join(f"(?:{_expand(p, vocabulary)})" for p in rule["patterns"])
        unless = "|".join(f"(?:{_expand(p, vocabulary)})" for p in rule.get("unless", []))
        by_level[rule["level"]].append(
            UrgencyRule(
                rule["name"], re.compile(pattern), rule["reason"], re.compile(unless) if unless else None
            )
        )
    data["by_level"] = {level: tuple(rules) for level, rules in by_level.items()}
    data["negation_re"] = re.compile(data["negation"])
    data["before_re"] = re.compile(data["hypothetical"]["before"])
    data["after_re"] = re.compile(data["hypothetical"]["after"])
    data["clause_end_re"] = re.compile(data["hypothetical"]["clause_end"])
    data["story_step_re"] = re.compile(data["frame_reach"]["story_step"])
    data["settled_re"] = re.compile(
        _with_guards(data["frame_reach"]["settled"], data["harmless_frames"]["guards"])
    )
    data["turn_re"] = re.compile(data["frame_reach"]["turn"])
    data["car_turn_re"] = re.compile(data["frame_reach"]["car_turn"])
    data["now_my_car_re"] = re.compile(data["frame_reach"]["now_my_car"])
    data["frames_re"] = re.compile(harmless_frames_pattern(data["harmless_frames"]))
    data["function_ok_re"] = re.compile(data["function_ok"])
    return data


_RULES = load_rules()
CRITICAL_RULES: tuple[UrgencyRule, ...] = _RULES["by_level"]["critical"]
HIGH_RULES: tuple[UrgencyRule, ...] = _RULES["by_level"]["high"]
MEDIUM_RULES: tuple[UrgencyRule, ...] = _RULES["by_level"]["medium"]
# level, rules, can_drive, visit_urgency (spec 04 §6 table, from the rule file)
LEVEL_RULES: tuple[tuple[str, tuple[UrgencyRule, ...], bool, str], ...] = tuple(
    (
        level,
        _RULES["by_level"][level],
        bool(_RULES["levels"][level]["can_drive"]),
        str(_RULES["levels"][level]["visit_urgency"]),
    )
    for level in LEVELS
)
# level -> (can_drive, visit_urgency), low included: what a judgement of that level tells the owner
LEVEL_ACTIONS: dict[str, tuple[bool, str]] = {
    level: (can_drive, visit) for level, _, can_drive, visit in LEVEL_RULES
} | {"low": (True, "when_convenient")}
# A hypothetical's もし reaches to the end of its clause: 「もし…と思ってたけど、今本当にブレーキが効かない」 is no hypothetical.
_CLAUSE_END: re.Pattern[str] = _RULES["clause_end_re"]
HARMLESS_FRAME_RE: re.Pattern[str] = _RULES["frames_re"]
FRAME_CAP = "medium"
FRAME_NOTE = (
    "（仮定・備え・修理済み・他人の車・ニュースなどの話として書かれているため、この判定では緊急度は中まで）"
)


def capped_at_medium(reasons: list[str], note: str) -> UrgencyResult:
    """The rules' finding capped at medium (FRAME_CAP): its first reason says why with `note`."""
    return UrgencyResult(FRAME_CAP, *LEVEL_ACTIONS[FRAME_CAP], [reasons[0] + note, *reasons[1:]])


# The writer's own car now, after a frame (「ニュースで冠水した道路の映像見てたけど…、いま私の車が…」): the frame's story
# is not what the text describes. (the rule file's frame_reach.now_my_car)
NOW_MY_CAR_RE: re.Pattern[str] = _RULES["now_my_car_re"]


def in_harmless_frame(text: str) -> bool:
    """A hypothetical, a preparation, a repair already done and fine, somebody else's car, the news, a film or a
    game (`harmless_frames` in the rule file), not followed by the writer's own car now (NOW_MY_CAR_RE): the text
    names a danger without describing one it has."""
    return bool(_frame_spans(normalize_symptom(text)))


def _frame_spans(normalized: str) -> list[tuple[int, int]]:
    """Where the harmless frames of a normalized text are, each not followed by the writer's own car now. (A frame that
    begins at a sentence's start looks behind for the sentence end before it and does not take it: a sentence end lies
    between the frame and a danger told in the sentence before, 「…排気ガスくさくて…頭がガンガンする。今日は子供も
    気持ち悪いって吐きそう」.)"""
    return [
        m.span()
        for m in HARMLESS_FRAME_RE.finditer(normalized)
        if NOW_MY_CAR_RE.search(normalized, m.end()) is None
    ]


def says_it_works(text: str) -> bool:
    """The owner says the car works (`function_ok`: 「ブレーキはちゃんと効いてる」) or denies a critical symptom
    (「煙は出ていない」: a critical rule's match followed by a negation), and no critical rule counts: the text
    names a danger to say it is not there."""
    normalized = normalize_symptom(text)
    if any(_matches(rule, normalized) for rule in CRITICAL_RULES):
        return False
    if _RULES["function_ok_re"].search(normalized):
        return True
    return any(
        _RULES["negation_re"].match(normalized[m.end() :])
        for rule in CRITICAL_RULES
        for m in rule.pattern.finditer(normalized)
    )


def normalize_symptom(text: str) -> str:
    """The text the rules see: core.text.textnorm.fold (NFKC, lower case, radicals repaired), whitespace removed."""
    return "".join(fold(text).split())


def _counts(text: str, match: re.Match[str]) -> bool:
    """Not a denial (「…はありません」) and not a hypothetical (「もし…」「…場合は」)."""
    if _RULES["negation_re"].match(text[match.end() :]) or _RULES["after_re"].match(text[match.end() :]):
        return False
    clause = _CLAUSE_END.split(text[: match.start()])[-1]
    return not _RULES["before_re"].search(clause)


def _counting_matches(rule: UrgencyRule, text: str) -> list[re.Match[str]]:
    """The rule's matches that count (none when its `unless` names a normal behaviour)."""
    if rule.unless is not None and rule.unless.search(text):
        return []
    return [match for match in rule.pattern.finditer(text) if _counts(text, match)]


def _match_starts(rule: UrgencyRule, text: str) -> list[int]:
    """Where the rule's counting matches begin."""
    return [match.start() for match in _counting_matches(rule, text)]


def _matches(rule: UrgencyRule, text: str) -> bool:
    return bool(_match_starts(rule, text))


# A step of the story between a frame and a danger (「ラジコンのコントローラーを探してたら、ブレーキが効かなくなった」,
# 「トミカ博の帰りに…」, 「異常なしって言われた翌日に…」): what follows happened, whatever the frame's word was.
# (the rule file's frame_reach.story_step)
STORY_STEP_RE: re.Pattern[str] = _RULES["story_step_re"]
# The subject particle of a frame that names a car, with its comma (「友達の車が、高速で…止まれなくなりかけたって聞いた」):
# the frame's own sentence goes on, no step of the story (「…けど、」 is one: the step's 「が、」 follows a verb).
_FRAME_CAR_SUBJECT = re.compile(r"(?:(?<=車)|(?<=クルマ)|(?<=くるま))(?:が|は)[、,]")


# What a frame says when it settles a danger told in an earlier sentence (「…湯気が出て修理した。それ以来まったく問題ない」).
# (the rule file's frame_reach.settled)
SETTLED_RE: re.Pattern[str] = _RULES["settled_re"]
_SENTENCE_END = re.compile(r"[。\n]")  # 「ガソリン臭い！と思ったら…だった」: an exclamation goes on


def _settles(text: str, start: int) -> bool:
    """The sentence from a frame at `start` on says the danger is settled (SETTLED_RE)."""
    stop = _SENTENCE_END.search(text, start)
    return SETTLED_RE.search(text, start, stop.start() if stop else len(text)) is not None


def _turns_to_today(text: str, end: int, at: int) -> bool:
    """A sentence after the frame's (which ends at `end`) turns to today before the danger at `at` (「直りました。今朝
    またボンネットから煙が出た」: the rule file's frame_reach.turn)."""
    last_stop = max((m.end() for m in _SENTENCE_END.finditer(text, end, at)), default=None)
    return last_stop is not None and TURN_RE.search(text, last_stop, at) is not None


def _told_in_a_frame(text: str, frames: list[tuple[int, int]], at: int) -> bool:
    """A harmless frame covers the danger found at `at`: it ends before the danger with no step of the story between
    (「ニュースで高速道路で車が燃えているのを見た」), it reaches into it (「隣の家の車がボンネットから煙を出していた」),
    or it follows it — in the same sentence (「…と思ったら、ほこりが焼けるにおいだった」), or in a later one when it
    settles it (「…修理した。それ以来まったく問題ない」; not 「…。ニュースで見たのと同じ症状です」)."""
    for start, end in frames:
        if end <= at:
            subject = _FRAME_CAR_SUBJECT.match(text, end)
            step_from = subject.end() if subject else end
            if STORY_STEP_RE.search(text, step_from, at) is None and not _turns_to_today(text, end, at):
                return True
        elif start <= at or _SENTENCE_END.search(text, at, start) is None or _settles(text, start):
            return True
    return False


def told_after_the_frames(text: str) -> str:
    """What the text (normalize_symptom) tells after its last harmless frame and the next step of the story, turn to
    today or sentence end after it (「異常なしって言われたのに、下り坂で止まれなくなった」 -> 「下り坂で止まれなくなった」):
    what no frame covers. Empty without a frame, or when nothing follows one."""
    normalized = normalize_symptom(text)
    frames = _frame_spans(normalized)
    if not frames:
        return ""
    end = frames[-1][1]
    breaks = [
        m.end() for m in (p.search(normalized, end) for p in (STORY_STEP_RE, TURN_RE, _SENTENCE_END)) if m
    ]
    return normalized[min(breaks) :].lstrip("、,") if breaks else ""


def told_before_the_frames(text: str) -> str:
    """What the text (normalize_symptom) tells in the sentences before its first harmless frame's sentence, when that
    frame does not settle it (「…家族がみんな眠くなって頭が痛いって言うんです。前にマフラーに穴あいてるって言われたことが
    あって…」 -> 「…頭が痛いって言うんです。」): what no frame covers, as a frame in a later sentence covers a danger for
    the rules only when it settles it (_told_in_a_frame). Empty without a frame, or when the first one is in the first
    sentence or settles."""
    normalized = normalize_symptom(text)
    frames = _frame_spans(normalized)
    if not frames:
        return ""
    start = frames[0][0]
    sentence_start = max((m.end() for m in _SENTENCE_END.finditer(normalized, 0, start)), default=0)
    if sentence_start == 0 or _settles(normalized, start):
        return ""
    return normalized[:sentence_start]


def _danger_starts(normalized: str) -> list[int]:
    """Where the critical and high rules' counting matches begin, whatever frame they are told in."""
    return [at for rule in (*CRITICAL_RULES, *HIGH_RULES) for at in _match_starts(rule, normalized)]


# What is left of a sentence once its danger is taken out, when the sentence says nothing else (「ブレーキが効かなく
# なった。」 leaves 「くなった。」, 「エンジンから火が出た。」 「エンジンからた。」): at most this many characters, marks not
# counted. (8 and 10 find the same sentences of the sets and examples, none of them not urgent; 12 finds six.)
BARE_REST = 8
# Where a clause ends: a comma or a sentence's end.
_CLAUSE_BREAK = re.compile(r"[、。,!?！？\n]")
_MARKS = re.compile(r"[。、,!?！？…ー〜w笑\n]")


def reports_a_bare_danger(text: str) -> bool:
    """A text of several sentences one of which is a critical danger and nothing else (「ブレーキが効かなくなった。
    教習所で習ったことを思い出してます」): a report, however like a story the rest of it reads."""
    normalized = normalize_symptom(text)
    sentences = [s for s in re.findall(r"[^。]+。*", normalized) if s.strip()]
    if len(sentences) < 2:
        return False
    return any(
        len(_MARKS.sub("", sentence[: match.start()] + sentence[match.end() :])) <= BARE_REST
        for sentence in sentences
        for rule in CRITICAL_RULES
        for match in _counting_matches(rule, sentence)
    )


def from_each_danger(text: str) -> list[str]:
    """The text the rules see (normalize_symptom) from where each of its counting critical or high matches begins, in
    order: each danger as told, without what was told before it."""
    normalized = normalize_symptom(text)
    return [normalized[at:] for at in sorted(set(_danger_starts(normalized)))]


def danger_clauses(text: str) -> list[str]:
    """The clause (between 「、」 and sentence ends) of each counting critical or high match of the text the rules see
    (normalize_symptom), in order, where it is only part of its sentence: a danger told as happening now in the middle
    of other talk (「車検の予約について聞きたいんですが、さっきから電線が焼けるような臭いがずっとしてて、あとオイル交換
    の時期も教えてください」)."""
    normalized = normalize_symptom(text)
    clauses = []
    for at in sorted(set(_danger_starts(normalized))):
        begin = max((m.end() for m in _CLAUSE_BREAK.finditer(normalized, 0, at)), default=0)
        end_mark = _CLAUSE_BREAK.search(normalized, at)
        end = end_mark.start() if end_mark else len(normalized)
        whole_sentence = (begin == 0 or normalized[begin - 1] not in "、,") and (
            end_mark is None or end_mark.group() not in "、,"
        )
        if not whole_sentence:
            clauses.append(normalized[begin:end])
    return clauses


def names_a_danger(text: str) -> bool:
    """A critical or high rule counts in the text, whatever frame it is told in (「友達の車のブレーキが効かなくなった話」
    names one; 「煙は出ていません」 and 「もしブレーキが効かなくなったら」 do not)."""
    return bool(_danger_starts(normalize_symptom(text)))


# A clause or a turn to today before a danger (the rule file's frame_reach.turn: 「…てから」「今日」「また」).
TURN_RE: re.Pattern[str] = _RULES["turn_re"]


# A clause that turns to the car itself (「…暑い、車もオーバーヒートして…」): what follows is about the owner's car.
# (the rule file's frame_reach.car_turn)
CAR_TURN_RE: re.Pattern[str] = _RULES["car_turn_re"]


def told_after_a_step(text: str) -> bool:
    """Something comes before the first danger a critical or high rule finds — a clause (「妻が運転してて、」), a step
    of the story (「…探してたら」「…帰りに」「…のに」) or a turn to today (「…てから」「今日」「また」): what follows
    happened, however the text began (a story about a danger opens with it: 「友達がタイヤ外れかけた話を聞いて…」); or a
    later danger comes after a step of the story, a turn to today or a turn to the car itself since the one before
    (「…ってあるけど、今本当に…」「…暑い、車も…」: what the story told first does not cover what happens now)."""
    normalized = normalize_symptom(text)
    starts = sorted(set(_danger_starts(normalized)))
    if not starts:
        return False
    if any(pattern.search(normalized, 0, starts[0]) for pattern in (_CLAUSE_BREAK, STORY_STEP_RE, TURN_RE)):
        return True
    return any(
        pattern.search(normalized, before, at)
        for before, at in itertools.pairwise(starts)
        for pattern in (STORY_STEP_RE, TURN_RE, CAR_TURN_RE)
    )


def keyword_urgency_check(text: str) -> UrgencyResult:
    """spec 04 §6 (1): match the symptom text against the rules; the most urgent matching level wins.

    No match gives level "low" (can drive, when_convenient, no reasons).
    """
    normalized = normalize_symptom(text)
    frames = _frame_spans(normalized)
    for level, rules, can_drive, visit_urgency in LEVEL_RULES:
        found = [(rule, _match_starts(rule, normalized)) for rule in rules]
        reasons = [rule.reason for rule, starts in found if starts]
        framed = bool(frames) and all(
            _told_in_a_frame(normalized, frames, at) for _, starts in found for at in starts
        )
        if reasons and framed and urgency_rank(level) > urgency_rank(FRAME_CAP):
            return capped_at_medium(reasons, FRAME_NOTE)
        if reasons:
            return UrgencyResult(level, can_drive, visit_urgency, reasons)
    return not_urgent()


def not_urgent() -> UrgencyResult:
    """Low: drive on, a visit when convenient, no reason."""
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
