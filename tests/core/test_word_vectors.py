"""The word vectors (core.search.word_vectors): chiVe as the ja-ginza package ships it, read without spaCy; the
bundled embedder that adds them to e5-small (core.search.embedders.BundledEmbedder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.search import word_vectors as wv
from core.search.embedder_base import EmbeddingError
from core.search.embedders import BundledE5Embedder, BundledEmbedder, build_embedder
from core.settings import EmbeddingSettings

ROOT = Path(__file__).resolve().parents[2]


def test_the_hash_is_spacys_every_listed_word_is_found_by_it() -> None:
    """spaCy keys its vectors by MurmurHash64A (seed 1) of the word: the package's own string list, hashed here,
    gives keys of the vector index (a wrong hash would find none of them)."""
    vectors = wv.word_vectors()
    strings = json.loads((wv.vocab_dir() / "strings.json").read_text(encoding="utf-8"))
    sample = [
        s for s in strings[::300] if s.strip()
    ]  # 598,796 strings (tags too), 480,443 of them with a vector
    found = [s for s in sample if vectors.row(s) is not None]
    assert len(found) > 0.5 * len(sample)
    # words of every length class (a tail of 1-7 bytes, whole 8-byte blocks) are among those found
    assert {len(s.encode()) % 8 for s in found} == set(range(8))


def test_the_index_has_every_word_of_the_package_in_key_order() -> None:
    vectors = wv.word_vectors()
    assert len(vectors.keys) == 480_443 and vectors.vectors.shape == (20_000, wv.DIM)
    assert bool(np.all(vectors.keys[1:] > vectors.keys[:-1]))
    assert int(vectors.rows.min()) >= 0 and int(vectors.rows.max()) < 20_000
    assert np.allclose(np.linalg.norm(vectors.vectors, axis=1), 1.0, atol=1e-5)


def test_word_vectors_know_what_the_sentence_model_does_not() -> None:
    """弦楽器 lies near ギター, リキュール near 梅酒, ニコチン near 禁煙; none of them near the others."""
    v = wv.word_vectors()

    def sim(a: str, b: str) -> float:
        ra, rb = v.row(a), v.row(b)
        assert ra is not None and rb is not None, (a, b)
        return float(v.vectors[ra] @ v.vectors[rb])

    for near, far in (
        (("弦楽器", "ギター"), ("弦楽器", "梅酒")),
        (("リキュール", "梅酒"), ("リキュール", "ギター")),
        (("ニコチン", "禁煙"), ("ニコチン", "映画")),
    ):
        assert sim(*near) > 0.55 and sim(*far) < 0.3, (near, far)


def test_a_text_is_its_content_words_stop_words_left_out_and_a_compound_found_by_its_parts() -> None:
    v = wv.word_vectors()
    assert v.text_rows("最近まだギターを弾いてる") == [v.row("ギター"), v.row("弾く")]
    # つみたてNISA is not in the list as one word: its parts are
    assert v.text_rows("つみたてNISA") == [v.row("積み立て"), v.row("NISA")]
    assert v.text_rows("。。。") == []


def test_each_text_gets_a_unit_row_and_a_text_without_known_words_the_zero_row() -> None:
    rows = wv.word_vectors().embed(["ギターの練習", "。。。", ""])
    assert rows.shape == (3, wv.DIM) and rows.dtype == np.float32
    assert float(np.linalg.norm(rows[0])) == pytest.approx(1.0, abs=1e-5)
    assert not rows[1].any() and not rows[2].any()


def test_without_the_package_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wv.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(wv.WordVectorsMissing, match="ja-ginza") as caught:
        wv.vocab_dir()
    assert isinstance(caught.value, EmbeddingError)  # pages report it like any embedder failure


def test_reading_the_vectors_never_imports_spacy() -> None:
    probe = (
        "import sys; from core.search.word_vectors import word_vectors; word_vectors().embed(['ギター']); "
        "print('spacy' in sys.modules, 'ja_ginza' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]


def test_the_bundled_embedder_is_e5_beside_the_word_vectors() -> None:
    """[√(1−s)·e5 ; √s·words]: a cosine is (1−s)·(e5 cosine) + s·(word-vector cosine), s = WORD_SHARE."""
    bundled, e5, words = BundledEmbedder(), BundledE5Embedder(), wv.word_vectors()
    texts = [
        "弦楽器の練習、指先は痛くならない？",
        "三十年ぶりにギターを弾きたくなって、中古のアコギを買った。",
    ]
    query, doc = bundled.embed_queries(texts[:1])[0], bundled.embed_documents(texts[1:])[0]
    assert query.shape == (684,) and bundled.dim == 684 and bundled.key == "e5q4-chive"
    assert float(np.linalg.norm(query)) == pytest.approx(1.0, abs=1e-5)
    e5_cos = float(e5.embed_queries(texts[:1])[0] @ e5.embed_documents(texts[1:])[0])
    word_cos = float(words.embed(texts[:1])[0] @ words.embed(texts[1:])[0])
    s = BundledEmbedder.WORD_SHARE
    assert float(query @ doc) == pytest.approx((1 - s) * e5_cos + s * word_cos, abs=1e-5)
    assert build_embedder(EmbeddingSettings()).key == "e5q4-chive"
    assert build_embedder(EmbeddingSettings("e5")).key == "e5small-q4"


def test_a_text_without_known_words_keeps_its_e5_part_alone() -> None:
    (row,) = BundledEmbedder().embed_documents(["。。。"])
    (e5,) = BundledE5Embedder().embed_documents(["。。。"])
    assert np.allclose(row[:384], e5, atol=1e-5) and not row[384:].any()


def test_the_word_vectors_move_a_question_in_other_words_nearer_its_memory() -> None:
    """The sentence model alone puts 「弦楽器の練習」 barely nearer the guitar than an unrelated errand; with the word
    vectors the margin grows."""
    question = "弦楽器の練習、指先は痛くならない？"
    memories = [
        "三十年ぶりにギターを弾きたくなって、中古のアコギを買った。",
        "駅前の郵便局で荷物を受け取ってきた。",
    ]

    def margin(embedder: BundledEmbedder | BundledE5Embedder) -> float:
        q = embedder.embed_queries([question])[0]
        right, wrong = embedder.embed_documents(memories)
        return float(q @ right - q @ wrong)

    assert margin(BundledEmbedder()) > margin(BundledE5Embedder()) + 0.02
