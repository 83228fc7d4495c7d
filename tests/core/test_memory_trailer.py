"""Trailer splitting (issue 5 Tests: any chunking hides the marker and JSON; no marker shows all text)."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.flows.memory.constants import TRAILER_MARKER
from core.flows.memory.trailer import TrailerSplitter, parse_trailer

TRAILER = {
    "reflection_text": "嬉しそうだった",
    "persona_affect_label": "joy",
    "persona_affect_intensity": 0.7,
    "topic_tags": ["ラーメン"],
    "salience": 0.6,
    "confidence": 0.8,
    "persona_response_policy": {"cooperation": 0.9, "refusal_bias": 0.1, "refusal_allowed": False},
}
# Reply text without '<' so "no part of the marker" is checkable character-wise.
reply_text = st.text(
    alphabet=st.characters(blacklist_characters="<>{}", blacklist_categories=("Cs",)), max_size=80
)


def chunked(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def run(chunks: list[str]) -> tuple[list[str], str, str | None]:
    splitter = TrailerSplitter()
    shown = [splitter.feed(c) for c in chunks]
    rest, trailer = splitter.finish()
    return [*shown, rest], splitter.visible_text, trailer


@settings(max_examples=300, deadline=None)
@given(reply_text, st.lists(st.integers(min_value=0, max_value=10_000), max_size=30))
def test_any_chunking_hides_marker_and_json(reply: str, cuts: list[int]) -> None:
    full = reply + "\n" + TRAILER_MARKER + "\n" + json.dumps(TRAILER, ensure_ascii=False)
    pieces, visible, trailer = run(chunked(full, cuts))
    shown = "".join(pieces)
    assert shown == reply + "\n"
    assert "<" not in shown and "{" not in shown
    assert visible == reply.rstrip()
    data, errors = parse_trailer(trailer)
    assert errors == [] and data == TRAILER


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120), st.lists(st.integers(min_value=0, max_value=10_000), max_size=20))
def test_no_marker_shows_all_text(reply: str, cuts: list[int]) -> None:
    if TRAILER_MARKER in reply:
        return
    pieces, _, trailer = run(chunked(reply, cuts))
    assert "".join(pieces) == reply
    assert trailer is None


def test_marker_split_mid_way_is_held_back() -> None:
    splitter = TrailerSplitter()
    assert splitter.feed("こんにちは" + TRAILER_MARKER[:10]) == ""  # still could be the marker
    assert splitter.feed(TRAILER_MARKER[10:] + '\n{"a": 1}') == "こんにちは"
    assert splitter.finish() == ("", '{"a": 1}')


def test_text_after_a_long_enough_prefix_is_released() -> None:
    splitter = TrailerSplitter()
    text = "あ" * (len(TRAILER_MARKER) + 5)
    assert splitter.feed(text) == "あ" * 6
    assert splitter.finish() == ("あ" * (len(TRAILER_MARKER) - 1), None)


def test_parse_trailer_errors() -> None:
    assert parse_trailer(None) == (None, ["trailer marker not found"])
    assert parse_trailer("  ")[1] == ["trailer is empty"]
    data, errors = parse_trailer('{"reflection_text": "x"}')
    assert data is None and any("persona_affect_label" in e for e in errors)
    bad = dict(TRAILER, salience="high")  # a wrong type still rejects the trailer
    assert parse_trailer(json.dumps(bad))[0] is None
    # issue 12: a number just out of range is clamped with a note (was: the whole trailer rejected)
    data, notes = parse_trailer(json.dumps(dict(TRAILER, salience=1.5)))
    assert data == dict(TRAILER, salience=1.0) and notes == ["salience: 1.5 は範囲外のため 1.0 に丸めました"]
    # Local repair (code fence) is applied without another call.
    assert parse_trailer("```json\n" + json.dumps(TRAILER) + "\n```")[0] == TRAILER
