"""The urgency fast path (spec 04 §6): the keyword rules (core.flows.diagnosis.urgency) and the judgement by meaning
(core.flows.diagnosis.urgency_meaning) combined, the higher level winning, as spec 04 §6 combines rule and model.

The judgement by meaning may also lower the rules, to medium and no further, as a harmless frame does: for a text
told like a known story about a danger, or lying in a calm neighbourhood (cap_note), and for a text the probe reads
as clearly not urgent throughout (harmless_throughout). Each such cap asks again of every sentence and every danger
the rules find urgent on its own: a report told beside a harmless sentence is judged by its own sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.flows.diagnosis.urgency import (
    UrgencyResult,
    capped_at_medium,
    keyword_urgency_check,
    merge_urgency,
    urgency_rank,
)
from core.flows.diagnosis.urgency_frames import (
    danger_clauses,
    from_each_danger,
    reports_a_bare_danger,
    told_after_a_step,
)
from core.flows.diagnosis.urgency_grammar import PLEA_RE, is_question, sentences_of, told_sentences
from core.flows.diagnosis.urgency_meaning import Nearest, UrgencyJudge
from core.flows.diagnosis.urgency_reasons import (
    CALM_NOTE,
    EXAMPLE_NOTE,
    PROBE_NOTE,
    STORY_NOTE,
    quote,
    without_level_or_cap_note,
)
from core.flows.diagnosis.urgency_rules import normalize_symptom
from core.flows.diagnosis.urgency_thresholds import K_CALM, K_NEAREST
from core.text.romaji import kana_reading

# The level each cap on the rules stops at: a story or a calm neighbourhood, the probe.
STORY_CAP = "medium"
PROBE_CAP = "medium"


def urgent_sentences(text: str) -> list[str]:
    """The sentences of a text of several that the rules find urgent (above medium) on their own; none for a text of
    one sentence. The calm neighbourhood and the probe ask each of them again: a report told beside a harmless
    sentence is judged by its own sentence."""
    sentences = sentences_of(text)
    if len(sentences) < 2:
        return []
    return [s for s in sentences if urgent_by_rule(s)]


def urgent_by_rule(part: str) -> bool:
    """The rules find `part` (a sentence or a clause of a text) urgent on its own: above medium."""
    return urgency_rank(keyword_urgency_check(part).level) > urgency_rank(STORY_CAP)


def story_like(judge: UrgencyJudge, near: list[Nearest]) -> Nearest | None:
    """The nearest example when it is a not-urgent story about a danger (it names one by rule), near enough, and
    no critical example is within the margin (whatever caps the judgement's level afterwards)."""
    if (
        near
        and near[0].text in judge.stories
        and near[0].similarity >= judge.thresholds.story_similarity
        and not judge.critical_within_margin(near)
    ):
        return near[0]
    return None


def calm_after_a_step(judge: UrgencyJudge, text: str, near: list[Nearest]) -> bool:
    """The K_NEAREST nearest examples are all low and the nearest is at least step_calm_similarity near, and so are
    those of the text from each of its dangers on: nothing like the text was ever urgent, even told after a step of
    its story (told_after_a_step). (What is told before a danger can make the whole text read like a story that is
    none: 「教習所の帰りにブレーキが効かなくなった」 lies among driving-school stories, its danger does not; nor does
    the second danger of 「体がオーバーヒートしそうなくらい暑い、車もオーバーヒートして湯気が出てる」.)"""

    def calm(near: list[Nearest]) -> bool:
        return (
            len(near) >= K_NEAREST
            and all(n.level == "low" for n in near[:K_NEAREST])
            and near[0].similarity >= judge.thresholds.step_calm_similarity
        )

    return calm(near) and all(calm(judge.nearest(told)) for told in from_each_danger(text))


def calm_like(judge: UrgencyJudge, text: str, near: list[Nearest]) -> Nearest | None:
    """The nearest example when the K_CALM nearest are all not urgent (low or medium) and the nearest is near
    enough to judge by: nothing like the text was ever urgent (「教習所の学科でフェード現象を習った」). A question
    among them says nothing of a text that is none: 「赤い油さしみたいな警告灯ってどういう意味？」 is not urgent,
    「赤い油さしみたいな警告灯が点いた」 is."""
    asks = is_question(text)
    if (
        len(near) >= K_CALM
        and near[0].similarity >= judge.thresholds.min_similarity
        and all(n.level in ("low", "medium") and (asks or not is_question(n.text)) for n in near[:K_CALM])
    ):
        return near[0]
    return None


def calm_in_each_sentence(judge: UrgencyJudge, text: str) -> bool:
    """Each sentence of a text of several that the rules find urgent on its own has a calm neighbourhood too: a
    danger told first and a harmless sentence after it (「ブレーキが効かなくなった。教習所で習ったことを思い出してます」)
    is judged by the danger's sentence, whose neighbours are urgent."""
    return all(calm_like(judge, s, judge.nearest(s)) is not None for s in urgent_sentences(text))


def reported_beside_the_story(judge: UrgencyJudge, text: str, story: Nearest) -> bool:
    """Some sentence of a text of several, told like a story about a danger (its nearest example `story`), that the
    rules find urgent on its own lies in an urgent neighbourhood, nearer its nearest example than the text lies to the
    story: its K_CALM nearest examples are all urgent (high or critical) and the nearest is near enough to judge by and
    nearer than `story` (a cry or a thought quoted by the sentence after it is no sentence of its own: told_sentences).
    A report told beside a question that reads like a story (「いま走っててボンネットから煙が出てます。消火器って売って
    ますか？」 among 「料理中にフライパンから火が出て…消火器って売ってますか？」, 0.93) is judged by the report's sentence,
    which is like nothing but reports (「ボンネットから煙が出てる」, 0.97). A sentence that only names a danger (「煙？」,
    near both 「煙！」 and 「煙は出ていません」) or tells of one put right (「先月エンジン警告灯が点いてセンサー替えてもらっ
    て…」) is none; nor is one nearer reports than anything else but less near them than the whole text is to its story
    (「…そのとき車の窓を開けっぱなしにしてたせいで、車内が煙臭くなってます」 told after a barbecue)."""
    told = told_sentences(text)
    for sentence in told if len(told) > 1 else []:
        if not urgent_by_rule(sentence):
            continue
        near = judge.nearest(sentence)
        if (
            len(near) >= K_CALM
            and near[0].similarity >= max(judge.thresholds.min_similarity, story.similarity)
            and all(n.level in ("high", "critical") for n in near[:K_CALM])
        ):
            return True
    return False


# How what comes before a danger ends when it tells where, when or after what (reported_from_its_danger).
LEAD_ENDS = ("で", "に", "、", ",", "ら", "て", "と")


def reported_from_its_danger(judge: UrgencyJudge, text: str, story: Nearest) -> bool:
    """What the text tells from its first danger on, when something comes before it, reads as a report: among its
    K_CALM nearest examples a critical one within the critical margin of the nearest, near enough to judge by and
    nearer than `story` is to the whole text. A place or a time before a danger (「ドラマの撮影現場の近くでブレーキが
    効かなくなった」, among drama stories at 0.90 once v82 and v83 joined the examples) does not make the danger a
    story (「ブレーキが効かなくなった」 lies among reports, 0.96). What comes before the danger must end as a place, a
    time or a step does (LEAD_ENDS): 「今月は財布のブレーキが壊れてて使いすぎた」 and 「若い頃はブレーキの効かんボロ車に
    乗っとったもんじゃ」 stay stories (both went critical in leave-one-set-out without it)."""
    normalized = normalize_symptom(text)
    told = from_each_danger(text)
    # what comes before the danger says where, when or after what (「…近くで」「…帰りに」「…たら」), not whose it is
    # (「今月は財布のブレーキが…」) or what the text is about (「若い頃はブレーキの効かんボロ車に…」)
    if not told or told[0] == normalized or not normalized.removesuffix(told[0]).endswith(LEAD_ENDS):
        return False
    near = judge.nearest(told[0])
    t = judge.thresholds
    return bool(near) and any(
        n.level == "critical"
        and n.similarity >= max(t.min_similarity, story.similarity, near[0].similarity - t.critical_margin)
        for n in near[:K_CALM]
    )


def cap_note(judge: UrgencyJudge, text: str, near: list[Nearest], shown: Sequence[str] = ()) -> str | None:
    """Why the rules' level may go down to medium for `text` (its nearest examples `near`): told like a story about
    a danger, or in a calm neighbourhood (the text's and each urgent sentence's); None when it may not. The note
    quotes its example unless one of the reasons `shown` beside it already does. An owner asking what to do now
    (PLEA_RE) gets no cap, nor a text one of whose sentences is a critical danger and nothing else
    (reports_a_bare_danger)."""
    if PLEA_RE.search(text) or reports_a_bare_danger(text):
        return None

    def example(nearest: Nearest) -> str:
        quoted = quote(nearest.text)
        return "" if any(quoted in reason for reason in shown) else EXAMPLE_NOTE.format(quoted=quoted)

    story = story_like(judge, near)
    if (
        story is not None
        and not reported_beside_the_story(judge, text, story)
        and not reported_from_its_danger(judge, text, story)
    ):
        return STORY_NOTE.format(example=example(story))
    calm = calm_like(judge, text, near)
    if calm is not None and calm_in_each_sentence(judge, text):
        return CALM_NOTE.format(example=example(calm))
    return None


def harmless_throughout(judge: UrgencyJudge, text: str, vector: np.ndarray) -> bool:
    """The probe reads `text` (its `vector`) as clearly not urgent, and so each sentence of it the rules find
    urgent on its own, the text from each of its dangers on, and each danger's clause the rules find urgent on its
    own: a harmless sentence after a report (「ブレーキが効かなくなった。教習所で習ったことを思い出してます」), a story
    before one, or a question on either side of it (「車検の予約について聞きたいんですが、さっきから電線が焼けるような
    臭いがずっとしてて、あとオイル交換の時期も教えてください」) does not make the report harmless. A text one of whose
    sentences is a critical danger and nothing else (reports_a_bare_danger) is a report."""
    if not judge.reads_as_harmless(vector) or reports_a_bare_danger(text):
        return False
    parts = urgent_sentences(text)
    parts += [told for told in from_each_danger(text) if told != normalize_symptom(text)]
    parts += [clause for clause in danger_clauses(text) if urgent_by_rule(clause)]
    return all(judge.reads_as_harmless(judge.query_vector(part)) for part in parts)


def fast_urgency_check(text: str, judge: UrgencyJudge | None, vehicle_kind: str = "") -> UrgencyResult:
    """spec 04 §6 fast path (judged_as_written); a message written in romaji is also judged as a Japanese reader reads
    it (core.text.romaji.kana_reading: 「burekiga kikanai」 as 「ブレーキが きかない」), and the more urgent of the two
    judgements is the fast path's: neither the rules nor the examples read Latin letters as Japanese, and a reading
    that is wrong (an English message that happens to spell kana) can only add a judgement, never take one away."""
    as_written = judged_as_written(text, judge, vehicle_kind)
    reading = kana_reading(text)
    if reading == text:
        return as_written
    as_read = judged_as_written(reading, judge, vehicle_kind)
    return as_read if urgency_rank(as_read.level) > urgency_rank(as_written.level) else as_written


def judged_as_written(text: str, judge: UrgencyJudge | None, vehicle_kind: str = "") -> UrgencyResult:
    """spec 04 §6 fast path on the text as written: the keyword rules and, when a judge is given, the judgement by
    meaning; the higher level wins (merge_urgency: can_drive only if both allow it, reasons merged). The rules of the
    owner's kind of car count too (`vehicle_kind`: keyword_urgency_check).

    One exception: a text that opens with the danger (not told_after_a_step) has the rules capped at medium, as a
    harmless frame does, when it is told like a known not-urgent story about a danger (its nearest example names one
    by rule and is not urgent: 「友達がタイヤ外れかけた話を聞いて…」, no critical example within the margin) or when its
    neighbourhood is calm (its K_CALM nearest examples are not urgent, and so are those of each sentence the rules
    find urgent on its own) — unless the owner asks what to do now (PLEA_RE). A text told after a step has the same caps
    only when its neighbourhood is calmer still (calm_after_a_step: the K_NEAREST nearest examples all low, the nearest
    at least step_calm_similarity near).

    Last, the probe reads the whole text (UrgencyJudge.reads_as_harmless, core.flows.diagnosis.urgency_probe): a text
    whose level came out high or critical, and which the probe reads as clearly not urgent, is capped at medium with
    PROBE_NOTE — unless the owner asks what to do now (PLEA_RE), or a sentence of it or the text from one of its
    dangers on is not read so (harmless_throughout)."""
    keyword = keyword_urgency_check(text, vehicle_kind)
    if judge is None:
        return keyword
    vector = judge.query_vector(text)
    meaning, near = judge.judge(text, vector)
    if urgency_rank(keyword.level) > urgency_rank(STORY_CAP) and (
        not told_after_a_step(text) or calm_after_a_step(judge, text, near)
    ):
        note = cap_note(judge, text, near, meaning.reasons)
        if note is not None:
            keyword = capped_at_medium(keyword.reasons, note)
    merged = merge_urgency(keyword, meaning)
    if (
        urgency_rank(merged.level) > urgency_rank(PROBE_CAP)
        and PLEA_RE.search(text) is None
        and harmless_throughout(judge, text, vector)
    ):
        return capped_at_medium([without_level_or_cap_note(r) for r in merged.reasons], PROBE_NOTE)
    return merged
