"""A message typed in romaji read as kana: 「jidou brake no keikoku ga zutto natte」 -> 「じどう ブレーキの けいこくが ずっと なって」.

Owners sometimes write Japanese in Latin letters (a phone without a Japanese keyboard, a foreign keyboard abroad).
Neither the urgency rules, which are written in Japanese, nor the examples the judgement by meaning compares with
read such a message as Japanese. `kana_reading` gives the reading a Japanese reader would: each word that spells
Japanese syllables (Hepburn, Nihon-shiki and the IME's spellings: shi / si, tsu / tu, chi / ti, ja / zya, n / nn,
doubled consonants for っ) becomes hiragana, the car words owners type in English become the katakana Japanese uses
(brake -> ブレーキ, engine -> エンジン), and the particles は, へ, を written as they sound (wa, e, o) are read as
particles and joined to the word before them, as bunsetsu are in a Japanese message typed in hiragana.

Only a message that is mostly romaji is read so: most of its characters are Latin letters and most of its words
spell Japanese syllables. A Japanese message with a few Latin letters (「BBQの煙」「ABSのランプ」) and a message in
English stay exactly as written.
"""

from __future__ import annotations

import re

# syllables by spelling, longest first when read (three letters, then two, then one)
_VOWELS = {"a": "あ", "i": "い", "u": "う", "e": "え", "o": "お"}
_ROWS = {
    "k": "かきくけこ",
    "g": "がぎぐげご",
    "s": "さしすせそ",
    "z": "ざじずぜぞ",
    "t": "たちつてと",
    "d": "だぢづでど",
    "n": "なにぬねの",
    "h": "はひふへほ",
    "b": "ばびぶべぼ",
    "p": "ぱぴぷぺぽ",
    "m": "まみむめも",
    "r": "らりるれろ",
}
_SMALL = {"a": "ゃ", "u": "ゅ", "o": "ょ"}


def _syllables() -> dict[str, str]:
    table: dict[str, str] = dict(_VOWELS)
    for consonant, kana in _ROWS.items():
        for vowel, letter in zip("aiueo", kana, strict=True):
            table[consonant + vowel] = letter
        i_kana = kana[1]
        for vowel, small in _SMALL.items():
            table[consonant + "y" + vowel] = i_kana + small
    table |= {
        "ya": "や", "yu": "ゆ", "yo": "よ", "wa": "わ", "wo": "を", "wi": "うぃ", "we": "うぇ",
        "shi": "し", "chi": "ち", "tsu": "つ", "fu": "ふ", "ji": "じ",
        "sha": "しゃ", "shu": "しゅ", "sho": "しょ", "she": "しぇ",
        "cha": "ちゃ", "chu": "ちゅ", "cho": "ちょ", "che": "ちぇ",
        "ja": "じゃ", "ju": "じゅ", "jo": "じょ", "je": "じぇ",
        "jya": "じゃ", "jyu": "じゅ", "jyo": "じょ",
        "cya": "ちゃ", "cyu": "ちゅ", "cyo": "ちょ",
        "fa": "ふぁ", "fi": "ふぃ", "fe": "ふぇ", "fo": "ふぉ",
        "thi": "てぃ", "dhi": "でぃ", "vu": "ゔ",
    }  # fmt: skip
    return table


SYLLABLES = _syllables()
_LONGEST = max(map(len, SYLLABLES))
# the car words owners type in English, as Japanese writes them
LOANWORDS = {
    "brake": "ブレーキ", "brakes": "ブレーキ", "engine": "エンジン", "handle": "ハンドル", "steering": "ステアリング",
    "tire": "タイヤ", "tires": "タイヤ", "tyre": "タイヤ", "tyres": "タイヤ", "oil": "オイル",
    "battery": "バッテリー", "light": "ライト", "lights": "ライト", "lamp": "ランプ", "accel": "アクセル",
    "accelerator": "アクセル", "pedal": "ペダル", "gas": "ガス", "gasoline": "ガソリン", "muffler": "マフラー",
    "bonnet": "ボンネット", "meter": "メーター", "track": "トラック", "truck": "トラック", "airbag": "エアバッグ",
    "radiator": "ラジエーター", "wiper": "ワイパー", "bumper": "バンパー", "belt": "ベルト", "chain": "チェーン",
    "motor": "モーター", "car": "車", "navi": "ナビ", "horn": "ホーン", "aircon": "エアコン", "air": "エア",
    # the same words typed as they sound in Japanese (katakana words, which the rules spell in katakana)
    "bureeki": "ブレーキ", "bureki": "ブレーキ", "enjin": "エンジン", "handoru": "ハンドル", "taiya": "タイヤ",
    "oiru": "オイル", "batterii": "バッテリー", "batteri": "バッテリー", "akuseru": "アクセル", "pedaru": "ペダル",
    "gasorin": "ガソリン", "mafuraa": "マフラー", "mafura": "マフラー", "bonnetto": "ボンネット", "meetaa": "メーター",
    "torakku": "トラック", "eabaggu": "エアバッグ", "eakon": "エアコン", "raito": "ライト", "ranpu": "ランプ",
    "panku": "パンク", "hazaado": "ハザード", "supiido": "スピード", "speed": "スピード", "nabi": "ナビ", "waipaa": "ワイパー", "rajieetaa": "ラジエーター",
}  # fmt: skip
# common English words no romaji message has on its own: a message with one is English
ENGLISH = {
    "i", "the", "my", "is", "are", "you", "it", "and", "with", "of", "for", "this", "that", "what", "how",
    "please", "need", "have", "has", "was", "not", "can", "help", "when", "there",
}  # fmt: skip
# particles written as they sound, read as particles when they stand alone
_PARTICLES = {"wa": "は", "e": "へ", "o": "を", "wo": "を"}
_JOINED = {
    "は",
    "へ",
    "を",
    "が",
    "の",
    "に",
    "で",
    "も",
    "と",
    "や",
    "から",
    "まで",
    "って",
    "より",
    "ね",
    "よ",
}
_PUNCTUATION = {",": "、", ".": "。"}
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|[^a-z\s]+|\s+")
_LATIN_RE = re.compile(r"[A-Za-z]")
# a message is read as romaji when at least this share of its characters (spaces aside) are Latin letters
LATIN_SHARE = 0.6
# ... and at least this share of its words, the car words aside (two or more), spell Japanese syllables
ROMAJI_WORD_SHARE = 0.6


def word_kana(word: str) -> str | None:
    """The hiragana of one lower-case word spelled in romaji, or None when it spells no Japanese syllables."""
    out: list[str] = []
    at = 0
    while at < len(word):
        rest = word[at:]
        if rest[0] == "'":  # parts ん from what follows (kon'ya): read with the n before it
            at += 1
            continue
        if rest[0] == "n" and (len(rest) == 1 or rest[1] not in "aiueoy"):
            # ん before a consonant or at the end; 「nn」 before a consonant or at the end is one ん
            out.append("ん")
            at += 2 if rest[:2] == "nn" and (len(rest) == 2 or rest[2] not in "aiueoy") else 1
            continue
        if (len(rest) > 1 and rest[0] == rest[1] and rest[0] not in "aiueon") or rest[:3] == "tch":
            out.append("っ")  # a doubled consonant (kk, tt, ss, pp; tch as in matcha)
            at += 1
            continue
        for size in range(min(_LONGEST, len(rest)), 0, -1):
            if (kana := SYLLABLES.get(rest[:size])) is not None:
                out.append(kana)
                at += size
                break
        else:
            return None
    return "".join(out)


def _read_word(word: str) -> str | None:
    return LOANWORDS.get(word) or _PARTICLES.get(word) or word_kana(word)


def reads_as_romaji(text: str) -> bool:
    """Most of the text's characters are Latin letters, none of its words is a common English one (ENGLISH), and most
    of its words, the car words aside (two or more), spell Japanese syllables, one of them four letters or longer."""
    visible = [c for c in text if not c.isspace()]
    if not visible or sum(bool(_LATIN_RE.match(c)) for c in visible) / len(visible) < LATIN_SHARE:
        return False
    every = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())
    if ENGLISH.intersection(every):
        return False
    words = [w for w in every if w not in LOANWORDS]
    spelled = [w for w in words if word_kana(w) is not None]
    return (
        len(words) >= 2
        and len(spelled) / len(words) >= ROMAJI_WORD_SHARE
        and any(len(w) >= 4 for w in spelled)
    )


def kana_reading(text: str) -> str:
    """The text as a Japanese reader would read it when it is written in romaji (reads_as_romaji), else the text as
    it is. Words that spell no Japanese syllables (a name, an English word not among LOANWORDS) stay as written."""
    if not _LATIN_RE.search(text) or not reads_as_romaji(text):
        return text
    pieces: list[str] = []
    for token in _WORD_RE.findall(text.lower()):
        if token.isspace():
            pieces.append(" ")
            continue
        if not token[0].isalpha() or not token.isascii():
            reading = "".join(_PUNCTUATION.get(c, c) for c in token)
            if pieces and pieces[-1] == " ":
                pieces.pop()  # punctuation closes the word before it
            pieces.append(reading)
            continue
        kana = _read_word(token) or token
        if kana in _JOINED and pieces and pieces[-1] == " " and len(pieces) > 1 and pieces[-2][-1:].isalpha():
            pieces.pop()  # a particle joins the word before it: 「くるま が」 -> 「くるまが」
        pieces.append(kana)
    return "".join(pieces).strip()
