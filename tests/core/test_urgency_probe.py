"""The urgency probe (core.flows.diagnosis.urgency_probe): a ridge-regularized logistic regression over example
vectors, fitted by Newton's method, and how much it needs before it says anything; and the probe in the fast path
(fast_urgency_check), with the bundled model."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.flows.diagnosis.urgency_fast_path import fast_urgency_check, harmless_throughout
from core.flows.diagnosis.urgency_frames import danger_clauses
from core.flows.diagnosis.urgency_meaning import (
    EXEMPLARS_FILE,
    SHIPPED_VECTORS,
    UrgencyJudge,
)
from core.flows.diagnosis.urgency_probe import PROBE_MIN_EACH, fit_probe, probe_score
from core.flows.diagnosis.urgency_reasons import (
    LEVEL_NOTE,
    MEANING_REASON,
    PROBE_NOTE,
    quote,
    without_cap_note,
    without_level_or_cap_note,
)
from core.flows.diagnosis.urgency_thresholds import THRESHOLDS
from core.search.embedders import BundledE5Embedder, BundledEmbedder


def _two_sides(urgent: int, calm: int, dim: int = 8, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors leaning along +axis 0 (urgent) or -axis 0 (calm), with noise on the other axes."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(0, 0.3, (urgent + calm, dim))
    rows[:urgent, 0] += 1.0
    rows[urgent:, 0] -= 1.0
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32), np.array([True] * urgent + [False] * calm)


def test_the_probe_reads_the_side_a_vector_leans_to() -> None:
    vectors, urgent = _two_sides(120, 200)
    weights = fit_probe(vectors, urgent)
    assert weights is not None
    assert weights.shape == (9,)  # one per dimension, then the bias
    axis = np.eye(8, dtype=np.float32)[0]
    assert probe_score(weights, axis) > 0.95
    assert probe_score(weights, -axis) < 0.05
    # every training row on its own side of one half
    scores = np.array([probe_score(weights, v) for v in vectors])
    assert ((scores > 0.5) == urgent).all()


def test_the_bias_is_not_shrunk_so_a_vector_that_says_nothing_gets_the_share_of_urgent_rows() -> None:
    """All-zero vectors carry no evidence: with the weights shrunk and the bias free, the probability is the share
    of urgent rows (the maximum-likelihood bias), 90 of 300 = 0.3."""
    vectors = np.zeros((300, 4), dtype=np.float32)
    urgent = np.array([True] * 90 + [False] * 210)
    weights = fit_probe(vectors, urgent)
    assert weights is not None
    assert probe_score(weights, np.zeros(4)) == pytest.approx(0.3, abs=1e-9)


@pytest.mark.parametrize(
    ("urgent", "calm", "fitted"), [(PROBE_MIN_EACH - 1, 300, False), (PROBE_MIN_EACH, 300, True)]
)
def test_no_probe_from_too_few_examples_of_either_side(urgent: int, calm: int, fitted: bool) -> None:
    vectors, labels = _two_sides(urgent, calm)
    assert (fit_probe(vectors, labels) is not None) is fitted
    flipped = fit_probe(vectors, ~labels)  # the same counts the other way round
    assert (flipped is not None) is fitted


def test_a_stronger_ridge_makes_the_probe_less_sure() -> None:
    vectors, urgent = _two_sides(120, 200)
    axis = np.eye(8, dtype=np.float32)[0]
    loose, tight = fit_probe(vectors, urgent, ridge=0.01), fit_probe(vectors, urgent, ridge=10.0)
    assert loose is not None and tight is not None
    assert 0.5 < probe_score(tight, axis) < probe_score(loose, axis)


# ---- the probe in the fast path, with the bundled model and the shipped examples ----

HABIT = "台風の日は車出さない派です。理由はシンプルに水没が怖いから"  # v39: a habit explained by a fear, low
# v34's son praised for 「ブレーキのきかないドリブル」 was the second case here until v51 joined the examples: its calm
# neighbours now cap it at medium without the probe.
# v36's boss's lecture that 「オーバーヒートして」 was the second case here until v63's lessons: the rules read a lecture's
# overheating as no engine's now.
TEASE = (  # a friend's warning about the oil light, which has never come on, low
    "友達が「オイルランプ点いたらエンジン焼き付くぞ」って脅してくるけど、点いたことは一度もない。普通に交換だけでいい？"
)

PROBE_DEFAULT = THRESHOLDS["e5q4-chive"].probe_below


@pytest.fixture(scope="module")
def judge() -> UrgencyJudge:
    return UrgencyJudge(BundledEmbedder())


def _judge_without(tmp_path: Path, text: str, probe_below: float | None = PROBE_DEFAULT) -> UrgencyJudge:
    """The default judge over the shipped examples less `text` (as a fresh set's phrasing would be judged), with the
    probe at `probe_below` (None: no probe)."""
    for shipped in EXEMPLARS_FILE.parent.glob(SHIPPED_VECTORS.format(key="*")):
        shutil.copy(shipped, tmp_path / shipped.name)
    levels = json.loads(EXEMPLARS_FILE.read_text(encoding="utf-8"))["levels"]
    path = tmp_path / "examples.json"
    kept = {level: [t for t in texts if t != text] for level, texts in levels.items()}
    path.write_text(json.dumps({"description": "", "levels": kept}, ensure_ascii=False), encoding="utf-8")
    judge = UrgencyJudge(BundledEmbedder(), path)
    judge.thresholds = dataclasses.replace(judge.thresholds, probe_below=probe_below)
    return judge


def test_each_bundled_embedder_fits_a_probe_of_its_own(judge: UrgencyJudge) -> None:
    assert PROBE_DEFAULT == THRESHOLDS["e5small-q4"].probe_below == 0.15
    weights = judge.probe()
    assert weights is not None and weights.shape == (judge.embedder.dim + 1,)
    assert judge.probe() is weights  # fitted once
    e5 = UrgencyJudge(BundledE5Embedder())
    e5_weights = e5.probe()
    assert e5_weights is not None and e5_weights.shape == (e5.embedder.dim + 1,)
    assert e5.embedder.dim != judge.embedder.dim


def test_no_critical_or_high_example_reads_as_harmless_throughout(judge: UrgencyJudge) -> None:
    """The critical and high examples lie on the urgent side of the probe's threshold (a probe fitted so that many
    of them read as harmless would cap their kind); the few that do not, as a whole (v45's report between two
    questions in one sentence), are kept by the guards: a sentence or a clause of them reads as urgent."""
    weights = judge.probe()
    assert weights is not None
    matrix = judge._matrix()
    scores = np.array([probe_score(weights, row) for row in matrix])
    levels = np.array(judge.levels)
    urgent = np.flatnonzero(np.isin(levels, ["critical", "high"]))
    below = [i for i in urgent if scores[i] < PROBE_DEFAULT]
    assert len(below) <= len(urgent) / 1000
    for i in below:
        assert not harmless_throughout(judge, judge.texts[i], matrix[i]), judge.texts[i]
    assert (scores[levels == "low"] < PROBE_DEFAULT).sum() > len(levels) / 10  # it does read some as harmless


def test_a_habit_explained_by_a_fear_is_low_by_its_sentences_before_the_probe(tmp_path: Path) -> None:
    """v39's habit lies near a flooded car as a whole (critical by meaning, which the probe capped once); neither of
    its two sentences is critical on its own, so the judgement by meaning no longer finds it critical, probe or not."""
    assert fast_urgency_check(HABIT, _judge_without(tmp_path, HABIT, None)).level == "low"
    assert fast_urgency_check(HABIT, _judge_without(tmp_path, HABIT)).level == "low"


@pytest.mark.parametrize(
    ("text", "before", "reason"),
    [(TEASE, "critical", "赤い警告灯の点灯（油圧・水温・ブレーキ・充電など）")],
)
def test_a_harmless_telling_the_fast_path_found_critical_is_capped_by_the_probe(
    tmp_path: Path, text: str, before: str, reason: str
) -> None:
    """Judged as a phrasing of a fresh set would be (itself not among the examples): without the probe the rules or
    the nearest examples find it critical; the probe reads it as a habit or a joke and caps it at medium.
    The reason keeps what was found, without the level it named, and says why it stopped at medium."""
    without = fast_urgency_check(text, _judge_without(tmp_path, text, None))
    assert without.level == before
    assert without.reasons[0].startswith(reason)
    result = fast_urgency_check(text, _judge_without(tmp_path, text))
    assert (result.level, result.can_drive, result.visit_urgency) == ("medium", True, "this_week")
    assert result.reasons == [reason + PROBE_NOTE]


def test_a_report_is_never_capped_by_the_probe(judge: UrgencyJudge) -> None:
    for text in ("ブレーキが効かない、止まらない！今坂道を下ってる", "ボンネットから煙が出てきた"):
        assert not judge.reads_as_harmless(judge.query_vector(text))
        assert fast_urgency_check(text, judge).level == "critical"


def test_a_plea_for_help_now_is_never_capped_even_when_the_probe_reads_it_as_harmless(
    judge: UrgencyJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judge, "reads_as_harmless", lambda vector: True)
    assert fast_urgency_check("ブレーキが効かない", judge).reasons == [
        "ブレーキの故障・効き不良の疑い" + PROBE_NOTE
    ]
    result = fast_urgency_check("ブレーキが効かない、今どうしたらいい？", judge)
    assert (result.level, result.reasons[0]) == ("critical", "ブレーキの故障・効き不良の疑い")


def test_the_probes_cap_note_leaves_the_banner_above_medium() -> None:
    assert without_cap_note("ブレーキの故障・効き不良の疑い" + PROBE_NOTE) == "ブレーキの故障・効き不良の疑い"
    quoted = MEANING_REASON + quote("ボンネットから煙")
    assert without_level_or_cap_note(quoted + LEVEL_NOTE.format(level="緊急")) == quoted
    assert without_level_or_cap_note(quoted + PROBE_NOTE) == quoted
    assert without_level_or_cap_note("発煙（煙が出ている）") == "発煙（煙が出ている）"


@pytest.mark.parametrize(
    "text",
    [
        "ブレーキが効かなくなった。教習所で習ったことを思い出してます",  # a bare report, then a harmless sentence
        "サッカー部の息子が監督に褒められたらしいです笑 ブレーキが効かない、坂道で止まれない",  # a story, then a report
        # questions on either side of a report now, in one sentence (v45 taught: its part from the danger on reads as
        # a question about an oil change, its clause does not)
        "車検の予約をしたいんですが、それとは別にさっきから足元から電線が焼けるようなにおいがずっとしてて、あと"
        "オイル交換の時期も教えてください",
    ],
)
def test_a_report_beside_a_harmless_telling_is_never_capped_by_the_probe(
    judge: UrgencyJudge, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """Whatever the probe reads in the whole text, the report's own sentence, the text from its danger on, or its
    danger's clause, is read too: these stay critical even when the whole text reads as harmless."""
    whole = judge.query_vector(text)
    real = judge.reads_as_harmless
    monkeypatch.setattr(judge, "reads_as_harmless", lambda v: v is whole or real(v))
    assert judge.reads_as_harmless(whole)
    assert not harmless_throughout(judge, text, whole)
    assert fast_urgency_check(text, judge).level == "critical"


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        (
            "車検の予約をしたいんですが、さっきから電線が焼けるようなにおいがずっとしてて、あとオイル交換の時期も教えて",
            ["さっきから電線が焼けるようなにおいがずっとしてて"],
        ),
        ("雨の中を走ってたら、ブレーキが効かなくなった。煙も出てる", ["ブレーキが効かなくなった"]),
        (
            "ブレーキが効かない。煙も出てる",
            [],
        ),  # each danger is its whole sentence: the sentences are read already
        ("オイル交換の時期を教えて", []),
    ],
)
def test_a_dangers_clause_is_the_part_of_its_sentence_between_commas(text: str, clauses: list[str]) -> None:
    assert danger_clauses(text) == clauses


KIT_MENDED = "ぱんくしゅうりきっとで おうきゅうしょち したんですけど これで なんきろくらい はしれますか きょうじゅうに なおしたいです"


def test_a_puncture_mended_with_a_kit_is_high_as_a_fresh_phrasing(tmp_path: Path) -> None:
    """v74's puncture mended with a kit, typed in kana, judged as a fresh set's phrasing (itself not among the
    examples): high by rule, as the kit examples written in kanji are. Before the rules knew a kit used on the car and
    「ぱんく」 in kana it was low, and as an example (high) it read as harmless throughout on the probe, which was then
    fitted without the kit messages among the examples that name a danger."""
    result = fast_urgency_check(KIT_MENDED, _judge_without(tmp_path, KIT_MENDED))
    assert (result.level, result.reasons[0]) == ("high", "タイヤの損傷・パンク")
