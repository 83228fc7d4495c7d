"""Urgency by meaning (spec 04 §6 fast path, beside the keyword rules): the nearest labelled example phrasings.

The rules (core.flows.diagnosis.urgency) only see the words they were written for; an owner who writes
「下り坂で止まれなくなった」 names no brake and no failure. Here the symptom text is embedded with the app's
embedder and compared with labelled example phrasings (`urgency_exemplars.json`, embedded once per embedder):
the level is the one of the nearest example, raised to critical when a critical example among the four nearest is
almost as near and itself near enough (a safety margin: a critical-sounding description must never come out low).
A text of several sentences no rule finds a danger in is critical by meaning only when one of its sentences is, each
judged on its own (long messages lie near long messages by their shape); a text of one sentence meets a critical
example of several by the example's sentence nearest it, which counts only where the rules find the example's danger,
when they find it at all (a booking lies near a long booking with a fault buried in it by the booking); a request is
judged by the sentences beside it that tell of now; negated or hypothetical wording (「煙は出ていません」「もし…」) is
decided by the rules' exceptions and the low examples that say so. The judge also holds the linear probe over the
examples (core.flows.diagnosis.urgency_probe), which reads a whole text as clearly not urgent or not: a danger told as a story,
a plan, a joke or a habit (「台風の日は車出さない派です。理由はシンプルに水没が怖いから」), which neither the rules'
frames nor the nearest examples tell from a report.

How the rules and this judgement are combined, and when the judgement lowers the rules, is the fast path's
(core.flows.diagnosis.urgency_fast_path).
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
    not_urgent,
    urgency_rank,
)
from core.flows.diagnosis.urgency_frames import (
    in_harmless_frame,
    told_after_the_frames,
    told_before_the_frames,
)
from core.flows.diagnosis.urgency_grammar import (
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
    DENIAL_NOTE,
    LEVEL_NAMES,
    LEVEL_NOTE,
    MEANING_REASON,
    QUESTION_NOTE,
    WAIT_NOTE,
    quote,
)
from core.flows.diagnosis.urgency_rules import LEVEL_ACTIONS, names_a_danger, says_it_works
from core.flows.diagnosis.urgency_thresholds import (
    DEFAULT_THRESHOLDS,
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
# The level a question about normal behaviour, a denial or a harmless frame stops the judgement at.
QUESTION_CAP = "medium"


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
        self._sentence_vectors: dict[str, Matrix] = {}

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
        return np.asarray(self.query_vectors([text])[0])

    def query_vectors(self, texts: Sequence[str]) -> Matrix:
        """`texts` embedded as the examples are, in one batch."""
        return self.embedder.embed_queries([with_katakana_loanwords(t) for t in texts])

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
        sentence's; for a text of one sentence, a critical example of several counts only by its danger:
        _meets_its_danger) and the nearest examples (`vector`: the text's, when already embedded)."""
        if vector is None and text.strip():
            vector = self.query_vector(text)
        near = self.nearest(text, vector=vector)
        if is_a_request(text):
            return self._reports_beside_a_request(text), near
        t = self.thresholds
        if not near or near[0].similarity < t.min_similarity:
            return not_urgent(), near
        # a sentence meets a long example's sentences, not its whole
        counted = near
        if vector is not None and len(sentences_of(text)) == 1:
            counted = [n for n in near if self._meets_its_danger(n, vector)] or near
        level = "critical" if self.critical_within_margin(counted) else counted[0].level
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
            reason = (
                f"{MEANING_REASON}{quote(counted[0].text)}{QUESTION_NOTE.format(level=LEVEL_NAMES[level])}"
            )
        elif capped and framed:
            reason = f"{MEANING_REASON}{quote(counted[0].text)}{FRAME_NOTE}"
        elif capped:
            reason = f"{MEANING_REASON}{quote(counted[0].text)}{DENIAL_NOTE}"
        elif waits:
            reason = f"{MEANING_REASON}{quote(counted[0].text)}{WAIT_NOTE}"
        else:
            basis = next(n for n in counted if n.level == level)
            reason = f"{MEANING_REASON}{quote(basis.text)}{LEVEL_NOTE.format(level=LEVEL_NAMES[level])}"
        return UrgencyResult(level, can_drive, visit, [reason]), near

    def _most_urgent_sentence(self, text: str) -> UrgencyResult | None:
        """The judgement of the most urgent sentence of a text of several, each judged on its own (None for one
        sentence). A text no rule finds a danger in is critical by meaning only when one of its sentences is: a long
        message lies near the long messages among the examples by its shape (a holiday booking near a booking with a
        failure buried in it) before its meaning, its sentences do not."""
        sentences = sentences_of(text)
        return self._most_urgent_of(sentences) if len(sentences) > 1 else None

    def _most_urgent_of(self, parts: Sequence[str]) -> UrgencyResult:
        """The most urgent of the judgements of `parts` (sentences of a text), each judged on its own and all embedded
        in one batch; not urgent for none."""
        if not parts:
            return not_urgent()
        vectors = self.query_vectors(parts)
        judged = [self.judge(p, vector=np.asarray(v))[0] for p, v in zip(parts, vectors, strict=True)]
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
        return self._most_urgent_of(reports)

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

    def _meets_its_danger(self, example: Nearest, vector: np.ndarray) -> bool:
        """Whether a critical `example` counts for a text of one sentence (its `vector`): an example of several
        sentences whose danger the rules find in some of them counts only when its sentence nearest the text is one of
        those. A booking sentence lies near a long booking message with a fault buried in it by the booking, not by
        the fault (「…その前に軽く点検してもらえたら安心です」 near 「…練習用に中古を探してまして…あとハンドルが
        ガクッと取られて…」)."""
        if example.level != "critical":
            return True
        sentences = sentences_of(example.text)
        if len(sentences) < 2:
            return True
        dangers = [names_a_danger(s) for s in sentences]
        if not any(dangers):
            return True  # its danger is in words the rules do not know: where it lies is not known
        with self._lock:
            vectors = self._sentence_vectors.get(example.text)
        if vectors is None:
            vectors = self.query_vectors(sentences)
            with self._lock:
                self._sentence_vectors[example.text] = vectors
        return dangers[int(np.argmax(np.asarray(vectors) @ vector))]

    def critical_within_margin(self, near: list[Nearest]) -> bool:
        """A critical example among the nearest is almost as near as the nearest one, and itself near enough (and the
        nearest one does not say the same thing)."""
        t = self.thresholds
        return near[0].similarity < t.same_similarity and any(
            n.level == "critical"
            and n.similarity >= max(near[0].similarity - t.critical_margin, t.margin_floor)
            for n in near
        )
