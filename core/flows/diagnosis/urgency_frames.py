"""What a text's harmless frames reach (spec 04 §6 fast path): a hypothetical, a preparation, a repair already done,
somebody else's car, the news (`harmless_frames` in `urgency_rules.json`), and how far each covers a danger the rules
find — up to a step of the story, a turn to today or the writer's own car now, or into a later sentence only when it
settles the danger (`frame_reach`). Also where each danger is told: after a step of the story, as a bare report, in
its own clause. core.flows.diagnosis.urgency caps the rules by it, and the judgement by meaning
(core.flows.diagnosis.urgency_meaning) reads what no frame covers.
"""

from __future__ import annotations

import itertools
import re

from core.flows.diagnosis.urgency_rules import (
    CRITICAL_RULES,
    RULES,
    counting_matches,
    danger_starts,
    normalize_symptom,
)

HARMLESS_FRAME_RE: re.Pattern[str] = RULES["frames_re"]
# The writer's own car now, after a frame (「ニュースで冠水した道路の映像見てたけど…、いま私の車が…」): the frame's story
# is not what the text describes. (the rule file's frame_reach.now_my_car)
NOW_MY_CAR_RE: re.Pattern[str] = RULES["now_my_car_re"]
# A step of the story between a frame and a danger (「ラジコンのコントローラーを探してたら、ブレーキが効かなくなった」,
# 「トミカ博の帰りに…」, 「異常なしって言われた翌日に…」): what follows happened, whatever the frame's word was.
# (the rule file's frame_reach.story_step)
STORY_STEP_RE: re.Pattern[str] = RULES["story_step_re"]
# The subject particle of a frame that names a car, with its comma (「友達の車が、高速で…止まれなくなりかけたって聞いた」):
# the frame's own sentence goes on, no step of the story (「…けど、」 is one: the step's 「が、」 follows a verb).
_FRAME_CAR_SUBJECT = re.compile(r"(?:(?<=車)|(?<=クルマ)|(?<=くるま))(?:が|は)[、,]")


# What a frame says when it settles a danger told in an earlier sentence (「…湯気が出て修理した。それ以来まったく問題ない」).
# (the rule file's frame_reach.settled)
SETTLED_RE: re.Pattern[str] = RULES["settled_re"]
_SENTENCE_END = re.compile(r"[。\n]")  # 「ガソリン臭い！と思ったら…だった」: an exclamation goes on


# A clause or a turn to today before a danger (the rule file's frame_reach.turn: 「…てから」「今日」「また」).
TURN_RE: re.Pattern[str] = RULES["turn_re"]


# A clause that turns to the car itself (「…暑い、車もオーバーヒートして…」): what follows is about the owner's car.
# (the rule file's frame_reach.car_turn)
CAR_TURN_RE: re.Pattern[str] = RULES["car_turn_re"]


def in_harmless_frame(text: str) -> bool:
    """A hypothetical, a preparation, a repair already done and fine, somebody else's car, the news, a film or a
    game (`harmless_frames` in the rule file), not followed by the writer's own car now (NOW_MY_CAR_RE): the text
    names a danger without describing one it has."""
    return bool(frame_spans(normalize_symptom(text)))


def frame_spans(normalized: str) -> list[tuple[int, int]]:
    """Where the harmless frames of a normalized text are, each not followed by the writer's own car now. (A frame that
    begins at a sentence's start looks behind for the sentence end before it and does not take it: a sentence end lies
    between the frame and a danger told in the sentence before, 「…排気ガスくさくて…頭がガンガンする。今日は子供も
    気持ち悪いって吐きそう」.)"""
    return [
        m.span()
        for m in HARMLESS_FRAME_RE.finditer(normalized)
        if NOW_MY_CAR_RE.search(normalized, m.end()) is None
    ]


def _settles(text: str, start: int) -> bool:
    """The sentence from a frame at `start` on says the danger is settled (SETTLED_RE)."""
    stop = _SENTENCE_END.search(text, start)
    return SETTLED_RE.search(text, start, stop.start() if stop else len(text)) is not None


def _turns_to_today(text: str, end: int, at: int) -> bool:
    """A sentence after the frame's (which ends at `end`) turns to today before the danger at `at` (「直りました。今朝
    またボンネットから煙が出た」: the rule file's frame_reach.turn)."""
    last_stop = max((m.end() for m in _SENTENCE_END.finditer(text, end, at)), default=None)
    return last_stop is not None and TURN_RE.search(text, last_stop, at) is not None


def told_in_a_frame(text: str, frames: list[tuple[int, int]], at: int) -> bool:
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
    frames = frame_spans(normalized)
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
    the rules only when it settles it (told_in_a_frame). Empty without a frame, or when the first one is in the first
    sentence or settles."""
    normalized = normalize_symptom(text)
    frames = frame_spans(normalized)
    if not frames:
        return ""
    start = frames[0][0]
    sentence_start = max((m.end() for m in _SENTENCE_END.finditer(normalized, 0, start)), default=0)
    if sentence_start == 0 or _settles(normalized, start):
        return ""
    return normalized[:sentence_start]


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
        for match in counting_matches(rule, sentence)
    )


def from_each_danger(text: str) -> list[str]:
    """The text the rules see (normalize_symptom) from where each of its counting critical or high matches begins, in
    order: each danger as told, without what was told before it."""
    normalized = normalize_symptom(text)
    return [normalized[at:] for at in sorted(set(danger_starts(normalized)))]


def danger_clauses(text: str) -> list[str]:
    """The clause (between 「、」 and sentence ends) of each counting critical or high match of the text the rules see
    (normalize_symptom), in order, where it is only part of its sentence: a danger told as happening now in the middle
    of other talk (「車検の予約について聞きたいんですが、さっきから電線が焼けるような臭いがずっとしてて、あとオイル交換
    の時期も教えてください」)."""
    normalized = normalize_symptom(text)
    clauses = []
    for at in sorted(set(danger_starts(normalized))):
        begin = max((m.end() for m in _CLAUSE_BREAK.finditer(normalized, 0, at)), default=0)
        end_mark = _CLAUSE_BREAK.search(normalized, at)
        end = end_mark.start() if end_mark else len(normalized)
        whole_sentence = (begin == 0 or normalized[begin - 1] not in "、,") and (
            end_mark is None or end_mark.group() not in "、,"
        )
        if not whole_sentence:
            clauses.append(normalized[begin:end])
    return clauses


def told_after_a_step(text: str) -> bool:
    """Something comes before the first danger a critical or high rule finds — a clause (「妻が運転してて、」), a step
    of the story (「…探してたら」「…帰りに」「…のに」) or a turn to today (「…てから」「今日」「また」): what follows
    happened, however the text began (a story about a danger opens with it: 「友達がタイヤ外れかけた話を聞いて…」); or a
    later danger comes after a step of the story, a turn to today or a turn to the car itself since the one before
    (「…ってあるけど、今本当に…」「…暑い、車も…」: what the story told first does not cover what happens now)."""
    normalized = normalize_symptom(text)
    starts = sorted(set(danger_starts(normalized)))
    if not starts:
        return False
    if any(pattern.search(normalized, 0, starts[0]) for pattern in (_CLAUSE_BREAK, STORY_STEP_RE, TURN_RE)):
        return True
    return any(
        pattern.search(normalized, before, at)
        for before, at in itertools.pairwise(starts)
        for pattern in (STORY_STEP_RE, TURN_RE, CAR_TURN_RE)
    )
