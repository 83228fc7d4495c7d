"""A message typed in romaji read as kana (core.text.romaji), and a message in Japanese or English left as it is."""

from __future__ import annotations

import pytest

from core.text.romaji import kana_reading, reads_as_romaji, word_kana


@pytest.mark.parametrize(
    ("word", "kana"),
    [
        ("kuruma", "くるま"),
        ("shinkansen", "しんかんせん"),  # ん before a consonant and at the end
        ("sinkansen", "しんかんせん"),  # Nihon-shiki
        ("konnnichiha", "こんにちは"),  # the IME's nn
        ("kon'ya", "こんや"),  # an apostrophe parts ん from the y-row
        ("zutto", "ずっと"),  # a doubled consonant
        ("matcha", "まっちゃ"),
        ("kyuu", "きゅう"),
        ("jyouzu", "じょうず"),
        ("tsuzukeru", "つずける"),
        ("tudukeru", "つづける"),
        ("fuan", "ふあん"),
    ],
)
def test_a_word_in_romaji_reads_as_its_syllables(word: str, kana: str) -> None:
    assert word_kana(word) == kana


@pytest.mark.parametrize("word", ["brake", "need", "the", "leak", "x", "shh"])
def test_a_word_that_spells_no_japanese_syllables_has_no_reading(word: str) -> None:
    assert word_kana(word) is None


def test_a_message_in_romaji_reads_as_a_japanese_reader_reads_it() -> None:
    """Syllables to hiragana, the car words in English (or as they sound) to katakana, particles joined to the word
    before them, は / を / へ written as they sound read as particles, 「,」「.」 as 「、」「。」."""
    assert (
        kana_reading(
            "jidou brake no keikoku ga zutto natte, kousoku de kuruma ga katte ni kyuu brake kakeru. "
            "ushiro ni track iru kara kowai"
        )
        == "じどう ブレーキの けいこくが ずっと なって、 こうそくで くるまが かってに きゅう ブレーキ かける。 "
        "うしろに トラック いるから こわい"
    )
    assert kana_reading("Bureeki ga kikanai!! tasukete") == "ブレーキが きかない!! たすけて"
    assert kana_reading("tenken no yoyaku o shitai desu") == "てんけんの よやくを したい です"
    assert kana_reading("kuruma wa daijoubu e iku") == "くるまは だいじょうぶへ いく"


@pytest.mark.parametrize(
    "text",
    [
        "BBQの煙が車に入った",  # Japanese with a few Latin letters
        "ABSのランプが点いた",
        "My car brake is not working",  # English
        "I need to go home",  # English that happens to spell kana (い, と, ご, ほめ)
        "brake oil leak",  # English car words, no Japanese word among them
        "ok",
        "",
    ],
)
def test_a_message_not_in_romaji_stays_as_written(text: str) -> None:
    assert not reads_as_romaji(text)
    assert kana_reading(text) == text
