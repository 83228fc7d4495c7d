"""One page of a long list (answer paragraphs in the preview and on the chat page): a page picker appears only
when the list is longer than a page, so a run draws at most PAGE_SIZE rows whatever the list's length."""

from __future__ import annotations

import streamlit as st

PAGE_SIZE = 50


def page_range(total: int, key: str, size: int = PAGE_SIZE) -> range:
    """The indexes (0-based) of the page chosen in the selectbox `key`; all of them when one page holds all."""
    if total <= size:
        return range(total)
    pages = (total + size - 1) // size
    if st.session_state.get(key, 0) not in range(pages):
        st.session_state[key] = 0
    page = st.selectbox(
        "表示する段落",
        range(pages),
        key=key,
        format_func=lambda p: f"§{p * size + 1}～§{min(total, (p + 1) * size)}（全 {total:,} 段落）",
    )
    return range(page * size, min(total, (page + 1) * size))
