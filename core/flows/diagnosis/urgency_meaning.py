"""Urgency by meaning (spec 04 §6 fast path, beside the keyword rules): the nearest labelled example phrasings.

The rules (core.flows.diagnosis.urgency) only see the words they were written for; an owner who writes
「下り坂で止まれなくなった」 names no brake and no failure. Here the symptom text is embedded with the app's
embedder and compared with labelled example phrasings (`urgency_exemplars.json`, embedded once per embedder):
the level is the one of the nearest example, raised to critical when a critical example among the four nearest is
almost as near and itself near enough (a safety margin: a critical-sounding description must never come out low).
`fast_urgency_check` takes the higher of the rules and this judgement, as spec 04 §6 combines rule and model; it
lowers the rules only for a text that opens with the danger and is told like a known story about one (its nearest
example is not urgent and names one) or lies in a calm neighbourhood (its three nearest examples are not urgent), to
medium, as a harmless frame does — or, told after a step, lies in a calmer one still (its four nearest examples are
low, the nearest very near). A text of several sentences no rule finds a danger in is critical by meaning only when one
of its sentences is, each judged on its own (long messages lie near long messages by their shape); negated or
hypothetical wording
(「煙は出ていません」「もし…」) is decided by the rules' exceptions and the low examples that say so. Last, a linear
probe over the examples reads the whole text (core.flows.diagnosis.urgency_probe) and caps at medium what it reads as
clearly not urgent: a danger told as a story, a plan, a joke or a habit (「台風の日は車出さない派です。理由はシンプルに
水没が怖いから」), which neither the rules' frames nor the nearest examples tell from a report.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.flows.diagnosis.manual_vectors import precomputed_file, shipped_or_embedded
from core.flows.diagnosis.urgency import (
    FRAME_NOTE,
    UrgencyResult,
    capped_at_medium,
    keyword_urgency_check,
    merge_urgency,
    not_urgent,
    urgency_rank,
)
from core.flows.diagnosis.urgency_frames import (
    danger_clauses,
    from_each_danger,
    in_harmless_frame,
    reports_a_bare_danger,
    told_after_a_step,
    told_after_the_frames,
    told_before_the_frames,
)
from core.flows.diagnosis.urgency_grammar import (
    PLEA_RE,
    asks_what_it_is,
    asks_whether_it_can_happen,
    doubts_a_fault,
    is_a_request,
    is_question,
    says_it_can_wait,
    sentences_of,
    tells_of_now,
    with_katakana_loanwords,
)
from core.flows.diagnosis.urgency_probe import fit_probe, probe_score
from core.flows.diagnosis.urgency_reasons import (
    CALM_NOTE,
    DENIAL_NOTE,
    EXAMPLE_NOTE,
    LEVEL_NAMES,
    LEVEL_NOTE,
    MEANING_REASON,
    PROBE_NOTE,
    QUESTION_NOTE,
    STORY_NOTE,
    WAIT_NOTE,
    quote,
    without_level_or_cap_note,
)
from core.flows.diagnosis.urgency_rules import LEVEL_ACTIONS, names_a_danger, normalize_symptom, says_it_works
from core.flows.diagnosis.urgency_thresholds import (
    DEFAULT_THRESHOLDS,
    K_CALM,
    K_NEAREST,
    REST_SIMILARITY,
    THRESHOLDS,
)
from core.search.embedders import Embedder, Matrix

EXEMPLARS_FILE = Path(__file__).with_name("urgency_exemplars.json")
# The examples' query vectors of the bundled models, computed once and shipped beside the examples
# (core/samples/diagnosis/build_manual_vectors.py): the first diagnosis turn then loads them instead of ~2,400 model
# runs (about 28 s on two cores). An example whose digest is missing (a new one) is embedded at run time.
SHIPPED_VECTORS = "urgency_vectors-{key}.npz"


# The fewest characters of what follows a frame's reach that the judgement reads on its own (「。」 or 「笑」 says nothing).
MIN_REST = 5
# The level each cap stops at: a question about normal behaviour, a story or a calm neighbourhood, the probe.
QUESTION_CAP = "medium"
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


@dataclass(frozen=True)
class Nearest:
    """The nearest example of a judgement: its text, level and cosine similarity (query against query)."""

    text: str
    level: str
    similarity: float


class UrgencyJudge:
    """Nearest-example urgency over `urgency_exemplars.json`, with `embedder` (the app's embedder)."""

    def __init__(self, embedder: Embedder, exemplars_file: Path = EXEMPLARS_FILE) -> None:
        data = json.loads(exemplars_file.read_text(encoding="utf-8"))["levels"]
        self.embedder = embedder
        self.exemplars_file = exemplars_file
        self.thresholds = THRESHOLDS.get(embedder.key, DEFAULT_THRESHOLDS)
        self.texts: list[str] = [t for level in data for t in data[level]]
        self.levels: list[str] = [level for level in data for _ in data[level]]
        # the not-urgent examples that name a danger by rule: stories about one (「友達の車から煙が出てた」)
        self.stories: frozenset[str] = frozenset(
            t
            for t, level in zip(self.texts, self.levels, strict=True)
            if level == "low" and names_a_danger(t)
        )
        self._vectors: Matrix | None = None
        self._probe: np.ndarray | None = None
        self._probe_fitted = False
        self._lock = threading.Lock()

    def _matrix(self) -> Matrix:
        with self._lock:
            if self._vectors is None:  # queries against queries: both are owners' descriptions (e5 prefix)
                self._vectors = self._embed_examples()
            return self._vectors

    def _embed_examples(self) -> Matrix:
        shipped = precomputed_file(
            self.exemplars_file.with_name(SHIPPED_VECTORS.format(key=self.embedder.key))
        )
        texts = [with_katakana_loanwords(t) for t in self.texts]
        return shipped_or_embedded(texts, shipped, self.embedder.embed_queries, self.embedder.dim)

    def query_vector(self, text: str) -> np.ndarray:
        """`text` embedded as the examples are (a query, car words typed in hiragana in katakana)."""
        return np.asarray(self.embedder.embed_queries([with_katakana_loanwords(text)])[0])

    def nearest(self, text: str, k: int = K_NEAREST, vector: np.ndarray | None = None) -> list[Nearest]:
        """The `k` nearest examples to `text` (embedded, unless its `vector` is given), nearest first."""
        if not text.strip():
            return []
        sims = self._matrix() @ (self.query_vector(text) if vector is None else vector)
        order = np.argsort(-sims)[:k]
        return [Nearest(self.texts[i], self.levels[i], float(sims[i])) for i in order]

    def judge(self, text: str, vector: np.ndarray | None = None) -> tuple[UrgencyResult, list[Nearest]]:
        """The level by meaning (low when nothing is near enough; for a request, that of the sentences beside it that
        tell of now; medium at most for a question, a denial or a frame, unless what follows the frame's reach reads
        urgent on its own, and for a high likeness when the owner says it can wait and the rules find no danger; for a
        critical likeness of a text of several sentences no rule finds a danger in, no more than its most urgent
        sentence's) and the examples that decided it (`vector`: the text's, when already embedded)."""
        near = self.nearest(text, vector=vector)
        if is_a_request(text):
            return self._reports_beside_a_request(text), near
        t = self.thresholds
        if not near or near[0].similarity < t.min_similarity:
            return not_urgent(), near
        level = "critical" if self._critical_within_margin(near) else near[0].level
        question = doubts_a_fault(text) or asks_whether_it_can_happen(text) or asks_what_it_is(text)
        above = urgency_rank(level) > urgency_rank(QUESTION_CAP)
        framed = (
            above
            and in_harmless_frame(text)
            and not self._reads_urgent_alone(told_after_the_frames(text))
            and not self._reads_urgent_alone(told_before_the_frames(text))
        )
        works = says_it_works(text)
        capped = above and (question or framed or works)
        # the owner says it can wait and the rules find no danger: a high likeness goes no further (never a critical one)
        waits = level == "high" and says_it_can_wait(text) and not names_a_danger(text)
        if capped or waits:
            level = QUESTION_CAP
        elif level == "critical" and not names_a_danger(text):
            told = self._most_urgent_sentence(text)
            if told is not None and urgency_rank(told.level) < urgency_rank(level):
                return told, near
        if level == "low":
            return not_urgent(), near
        can_drive, visit = LEVEL_ACTIONS[level]
        if capped and question:
            reason = f"{MEANING_REASON}{quote(near[0].text)}{QUESTION_NOTE.format(level=LEVEL_NAMES[level])}"
        elif capped and framed:
            reason = f"{MEANING_REASON}{quote(near[0].text)}{FRAME_NOTE}"
        elif capped:
            reason = f"{MEANING_REASON}{quote(near[0].text)}{DENIAL_NOTE}"
        elif waits:
            reason = f"{MEANING_REASON}{quote(near[0].text)}{WAIT_NOTE}"
        else:
            basis = next(n for n in near if n.level == level)
            reason = f"{MEANING_REASON}{quote(basis.text)}{LEVEL_NOTE.format(level=LEVEL_NAMES[level])}"
        return UrgencyResult(level, can_drive, visit, [reason]), near

    def _most_urgent_sentence(self, text: str) -> UrgencyResult | None:
        """The judgement of the most urgent sentence of a text of several, each judged on its own (None for one
        sentence). A text no rule finds a danger in is critical by meaning only when one of its sentences is: a long
        message lies near the long messages among the examples by its shape (a holiday booking near a booking with a
        failure buried in it) before its meaning, its sentences do not."""
        sentences = sentences_of(text)
        if len(sentences) < 2:
            return None
        vectors = self.embedder.embed_queries([with_katakana_loanwords(s) for s in sentences])  # one batch
        judged = [self.judge(s, vector=np.asarray(v))[0] for s, v in zip(sentences, vectors, strict=True)]
        return max(judged, key=lambda result: urgency_rank(result.level))

    def _reads_urgent_alone(self, rest: str) -> bool:
        """What no frame of a text covers — told after the frames' reach (told_after_the_frames: 「異常なしって言われたのに、
        下り坂で止まれなくなった」) or in the sentences before the first frame's (told_before_the_frames: 「…家族がみんな
        眠くなって頭が痛いって言うんです。前に…言われたことがあって」) — neither a question nor a request, reads critical on
        its own, its nearest example critical and at least REST_SIMILARITY near: the frame does not cap this judgement.
        The rules place each danger against the frames; this judgement, which names none, asks what no frame covers."""
        if len(rest) < MIN_REST or is_question(rest) or is_a_request(rest):
            return False
        result, near = self.judge(rest)
        return (
            result.level == "critical"
            and near[0].level == "critical"
            and near[0].similarity >= REST_SIMILARITY
        )

    def _reports_beside_a_request(self, text: str) -> UrgencyResult:
        """A request (is_a_request) is low by meaning, except for the sentences beside it that tell of now
        (tells_of_now), each judged on its own, the highest winning: 「昨日洗車したばっかりで…今、信号待ちで止まってたら、
        アクセル踏んでないのにエンジンの回転がどんどん上がって…。あとワックスは何がおすすめですか」 is a report."""
        sentences = sentences_of(text)
        reports = (
            [s for s in sentences if not is_a_request(s) and tells_of_now(s)] if len(sentences) > 1 else []
        )
        judged = [self.judge(sentence)[0] for sentence in reports]
        return max(judged, key=lambda result: urgency_rank(result.level), default=not_urgent())

    def probe(self) -> np.ndarray | None:
        """The probe's weights (core.flows.diagnosis.urgency_probe), fitted once over the examples that name a danger
        by rule or are critical, urgent meaning critical or high; None when this embedder has no probe threshold or
        the examples are too few to fit one."""
        if self.thresholds.probe_below is None:
            return None
        matrix = self._matrix()
        with self._lock:
            if not self._probe_fitted:
                rows = [
                    i
                    for i, (text, level) in enumerate(zip(self.texts, self.levels, strict=True))
                    if level == "critical" or names_a_danger(text)
                ]
                urgent = np.array([self.levels[i] in ("critical", "high") for i in rows])
                self._probe = fit_probe(matrix[rows], urgent)
                self._probe_fitted = True
            return self._probe

    def reads_as_harmless(self, vector: np.ndarray) -> bool:
        """The probe reads the text (its `vector`) as clearly not urgent: its probability below probe_below."""
        weights = self.probe()
        below = self.thresholds.probe_below
        return weights is not None and below is not None and probe_score(weights, vector) < below

    def reads_as_harmless_throughout(self, text: str, vector: np.ndarray) -> bool:
        """The probe reads `text` (its `vector`) as clearly not urgent, and so each sentence of it the rules find
        urgent on its own, the text from each of its dangers on, and each danger's clause the rules find urgent on its
        own: a harmless sentence after a report (「ブレーキが効かなくなった。教習所で習ったことを思い出してます」), a story
        before one, or a question on either side of it (「車検の予約について聞きたいんですが、さっきから電線が焼けるような
        臭いがずっとしてて、あとオイル交換の時期も教えてください」) does not make the report harmless. A text one of whose
        sentences is a critical danger and nothing else (reports_a_bare_danger) is a report."""
        if not self.reads_as_harmless(vector) or reports_a_bare_danger(text):
            return False
        parts = urgent_sentences(text)
        parts += [told for told in from_each_danger(text) if told != normalize_symptom(text)]
        parts += [clause for clause in danger_clauses(text) if urgent_by_rule(clause)]
        return all(self.reads_as_harmless(self.query_vector(part)) for part in parts)

    def _critical_within_margin(self, near: list[Nearest]) -> bool:
        """A critical example among the nearest is almost as near as the nearest one, and itself near enough (and the
        nearest one does not say the same thing)."""
        t = self.thresholds
        return near[0].similarity < t.same_similarity and any(
            n.level == "critical"
            and n.similarity >= max(near[0].similarity - t.critical_margin, t.margin_floor)
            for n in near
        )

    def story_like(self, near: list[Nearest]) -> Nearest | None:
        """The nearest example when it is a not-urgent story about a danger (it names one by rule), near enough, and
        no critical example is within the margin (whatever caps the judgement's level afterwards)."""
        if (
            near
            and near[0].text in self.stories
            and near[0].similarity >= self.thresholds.story_similarity
            and not self._critical_within_margin(near)
        ):
            return near[0]
        return None

    def calm_after_a_step(self, text: str, near: list[Nearest]) -> bool:
        """The K_NEAREST nearest examples are all low and the nearest is at least step_calm_similarity near, and so are
        those of the text from each of its dangers on: nothing like the text was ever urgent, even told after a step of
        its story (told_after_a_step). (What is told before a danger can make the whole text read like a story that is
        none: 「教習所の帰りにブレーキが効かなくなった」 lies among driving-school stories, its danger does not; nor does
        the second danger of 「体がオーバーヒートしそうなくらい暑い、車もオーバーヒートして湯気が出てる」.)"""

        def calm(near: list[Nearest]) -> bool:
            return (
                len(near) >= K_NEAREST
                and all(n.level == "low" for n in near[:K_NEAREST])
                and near[0].similarity >= self.thresholds.step_calm_similarity
            )

        return calm(near) and all(calm(self.nearest(told)) for told in from_each_danger(text))

    def calm_like(self, text: str, near: list[Nearest]) -> Nearest | None:
        """The nearest example when the K_CALM nearest are all not urgent (low or medium) and the nearest is near
        enough to judge by: nothing like the text was ever urgent (「教習所の学科でフェード現象を習った」). A question
        among them says nothing of a text that is none: 「赤い油さしみたいな警告灯ってどういう意味？」 is not urgent,
        「赤い油さしみたいな警告灯が点いた」 is."""
        asks = is_question(text)
        if (
            len(near) >= K_CALM
            and near[0].similarity >= self.thresholds.min_similarity
            and all(n.level in ("low", "medium") and (asks or not is_question(n.text)) for n in near[:K_CALM])
        ):
            return near[0]
        return None

    def cap_note(self, text: str, near: list[Nearest], shown: Sequence[str] = ()) -> str | None:
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

        story = self.story_like(near)
        if story is not None:
            return STORY_NOTE.format(example=example(story))
        calm = self.calm_like(text, near)
        if calm is not None and self.calm_in_each_sentence(text):
            return CALM_NOTE.format(example=example(calm))
        return None

    def calm_in_each_sentence(self, text: str) -> bool:
        """Each sentence of a text of several that the rules find urgent on its own has a calm neighbourhood too: a
        danger told first and a harmless sentence after it (「ブレーキが効かなくなった。教習所で習ったことを思い出してます」)
        is judged by the danger's sentence, whose neighbours are urgent."""
        return all(self.calm_like(s, self.nearest(s)) is not None for s in urgent_sentences(text))


def fast_urgency_check(text: str, judge: UrgencyJudge | None, vehicle_kind: str = "") -> UrgencyResult:
    """spec 04 §6 fast path: the keyword rules and, when a judge is given, the judgement by meaning; the
    higher level wins (merge_urgency: can_drive only if both allow it, reasons merged). The rules of the owner's kind of
    car count too (`vehicle_kind`: keyword_urgency_check).

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
    dangers on is not read so (reads_as_harmless_throughout)."""
    keyword = keyword_urgency_check(text, vehicle_kind)
    if judge is None:
        return keyword
    vector = judge.query_vector(text)
    meaning, near = judge.judge(text, vector)
    if urgency_rank(keyword.level) > urgency_rank(STORY_CAP) and (
        not told_after_a_step(text) or judge.calm_after_a_step(text, near)
    ):
        note = judge.cap_note(text, near, meaning.reasons)
        if note is not None:
            keyword = capped_at_medium(keyword.reasons, note)
    merged = merge_urgency(keyword, meaning)
    if (
        urgency_rank(merged.level) > urgency_rank(PROBE_CAP)
        and PLEA_RE.search(text) is None
        and judge.reads_as_harmless_throughout(text, vector)
    ):
        return capped_at_medium([without_level_or_cap_note(r) for r in merged.reasons], PROBE_NOTE)
    return merged
