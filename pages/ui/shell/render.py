"""The one safe renderer for everything a model wrote, and quick rendering of long text.

Every Markdown sink that can show model-derived text (chat replies, summaries, facts, loops, entity
names, choices, banners, captions, labels, the debug page) goes through these helpers, which pass the
text through core.text.safe_markdown (raw HTML escaped, no images, links as text with their host, no
autolinks, no math). Long text is shown in part with 「全文を表示」, so a 2 MB reply is not sent to
the browser again on every rerun; streams are redrawn at most every STREAM_REDRAW_S seconds.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable
from typing import Any

import streamlit as st

from core.text.safe_markdown import ZWSP, safe_llm_markdown, safe_plain

DISPLAY_CHARS = 6_000  # shown before 「全文を表示」
FULL_CHARS = 100_000  # at most this much even when the whole text is asked for
STREAM_REDRAW_S = 0.1
LABEL_CHARS = 120
CELL_CHARS = 300
_MARKDOWN_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!$<>|~])")
_SCHEME = re.compile(r"(?i)\b(javascript|data|vbscript|file):")
_SHORTCODE = re.compile(r":(?=[\w/+\\-]+:)")
_AUTOLINK = re.compile(r"(?i)\b(https?|ftps?|mailto|wss?)(:)(?!\u200b)|\b(www)(\\\.)")


def _full_key(text: str, key: str | None) -> str:
    return key or "llm_full_" + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def llm_markdown(text: str, *, key: str | None = None) -> None:
    """Model text as Markdown, safely; past DISPLAY_CHARS only the first part, with 「全文を表示」."""
    text = text or ""
    if len(text) <= DISPLAY_CHARS:
        st.markdown(safe_llm_markdown(text))
        return
    show_all = st.toggle(f"全文を表示（{len(text):,} 文字）", key=_full_key(text, key))
    shown = text[:FULL_CHARS] if show_all else text[:DISPLAY_CHARS]
    st.markdown(safe_llm_markdown(shown))
    if len(text) > len(shown):
        st.caption(f"…（残り {len(text) - len(shown):,} 文字は省略しています）")


def stream_llm_markdown(chunks: Iterable[str]) -> str:
    """Show a streamed reply as it arrives, with llm_markdown's safety; returns the whole text.

    The placeholder is redrawn at most every STREAM_REDRAW_S and with at most DISPLAY_CHARS, so a
    runaway reply costs linear time, not a redraw of everything per delta.
    """
    placeholder = st.empty()
    parts: list[str] = []
    size, drawn_at = 0, 0.0
    for chunk in chunks:
        parts.append(chunk)
        size += len(chunk)
        now = time.monotonic()
        if now - drawn_at >= (STREAM_REDRAW_S if size <= DISPLAY_CHARS else 1.0):
            head = "".join(parts)[:DISPLAY_CHARS]
            more = f"\n\n…（{size:,} 文字を受信中）" if size > DISPLAY_CHARS else ""
            placeholder.markdown(safe_llm_markdown(head) + more + " ▌")
            drawn_at = now
    text = "".join(parts)
    with placeholder.container():
        llm_markdown(text)
    return text


def llm_label(text: Any, max_chars: int = LABEL_CHARS) -> str:
    """Model text for a label (button, expander, option, caption prefix): safe, one line, capped."""
    return safe_plain(str(text), max_chars)


def llm_caption(text: Any, max_chars: int = 2_000) -> None:
    st.caption(safe_plain(str(text), max_chars))


def llm_alert(kind: str, text: Any, **kw: Any) -> None:
    """st.error / st.warning / st.info / st.success with model-derived text made safe (and capped)."""
    body = str(text)
    body = body[:DISPLAY_CHARS] + ("…" if len(body) > DISPLAY_CHARS else "")
    getattr(st, kind)(safe_llm_markdown(body), **kw)


def llm_bullets(title: str, items: Iterable[Any], max_chars: int = 500) -> None:
    """A bold title over a bullet list of model-derived lines (facts, loops, entities)."""
    st.markdown(f"**{title}**\n" + "\n".join(f"- {safe_plain(str(i), max_chars)}" for i in items))


def llm_cell(value: Any, max_chars: int = CELL_CHARS) -> Any:
    """A table cell: strings capped (tables show text literally; a 2 MB cell still costs the browser)."""
    if isinstance(value, str) and len(value) > max_chars:
        return value[: max_chars - 1] + "…"
    return value


def raw_excerpt(raw: str, max_chars: int = 20_000) -> str:
    """A raw model output for st.text / st.code (shown literally), capped; the debug page has all of it."""
    if len(raw) <= max_chars:
        return raw
    return raw[:max_chars] + f"\n…（全 {len(raw):,} 文字。続きはデバッグログで確認できます）"


def plain_label(text: Any, max_chars: int = LABEL_CHARS) -> str:
    """Text that is not Markdown (a person's name or email from the identity provider, a provider name from
    the secrets) for st.markdown, captions and labels: one line, capped, shown exactly as written
    (literal_md; `&` and `<` as entities), with `:name:` shortcodes (Streamlit icons and emoji),
    `javascript:`-like schemes and email addresses broken up by a zero-width space so none of them forms."""
    line = " ".join(str(text).split())
    if len(line) > max_chars:
        line = line[: max_chars - 1] + "…"
    shown = literal_md(line.replace("&", "&amp;")).replace("\\<", "&lt;")
    shown = _SCHEME.sub(lambda m: m.group(1) + ZWSP + ":", shown)
    shown = shown.replace("@", "@" + ZWSP)  # GFM would link an email address (mailto:)
    return _SHORTCODE.sub(":" + ZWSP, shown)


def literal_md(text: str) -> str:
    """Text shown exactly as written through st.markdown: Markdown punctuation escaped (no Markdown, no
    LaTeX, no HTML), line breaks kept, URLs not auto-linked."""
    lines = (_MARKDOWN_PUNCT.sub(r"\\\1", line) for line in text.splitlines())
    escaped = "  \n".join(lines)
    return _AUTOLINK.sub(
        lambda m: (
            (m.group(1) + m.group(2) + "\u200b") if m.group(1) else (m.group(3) + "\u200b" + m.group(4))
        ),
        escaped,
    )
