"""Render model output: Markdown with images neutralized (core.safe_markdown), never unsafe HTML."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from core.safe_markdown import safe_llm_markdown


def llm_markdown(text: str) -> None:
    """Show model text as Markdown (raw HTML escaped by Streamlit, images turned into links)."""
    st.markdown(safe_llm_markdown(text))


def stream_llm_markdown(chunks: Iterable[str]) -> str:
    """Show a streamed reply as it arrives, with the same safety as llm_markdown; returns the whole text."""
    placeholder = st.empty()
    text = ""
    for chunk in chunks:
        text += chunk
        placeholder.markdown(safe_llm_markdown(text) + " ▌")
    placeholder.markdown(safe_llm_markdown(text))
    return text
