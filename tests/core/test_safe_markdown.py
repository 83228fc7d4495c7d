"""Model output rendered as Markdown never loads an image by itself."""

import re

from hypothesis import given
from hypothesis import strategies as st

from core.safe_markdown import safe_llm_markdown


def test_inline_and_reference_images_become_links():
    text = '結果です ![x](https://evil.example/?q=秘密) と ![](http://a/b.png "t") と ![logo][1]\n\n[1]: http://a/l.png'
    out = safe_llm_markdown(text)
    assert "![" not in out
    assert "[画像: x](https://evil.example/?q=秘密)" in out
    assert '[画像: リンク](http://a/b.png "t")' in out and "[画像: logo][1]" in out


def test_plain_markdown_is_untouched():
    text = "**太字** と [リンク](https://example.com) と `![code]` と 感嘆符! [注]"
    assert safe_llm_markdown(text) == text


def test_stacked_exclamation_marks_do_not_rebuild_an_image():
    out = safe_llm_markdown("!!![a](http://x/y.png)")
    assert "![" not in out and out == "[画像: 画像: 画像: a](http://x/y.png)"


@given(st.text(alphabet="![]()ab: \n", max_size=40))
def test_no_image_syntax_survives(text):
    out = safe_llm_markdown(text)
    assert safe_llm_markdown(out) == out
    assert re.search(r"!\[[^\]\n]*\]\([^)\n]*\)", out) is None
