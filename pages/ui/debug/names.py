"""How the debug page names a conversation: its flow in Japanese, when it started and what the person said
first, never its hex id (the id stays in the trace details and the exports)."""

from __future__ import annotations

from core.clock import format_local
from pages.ui.shell import words


def conversation_title(flow: str, started_at: float, first_input: str, conversation_id: str = "") -> str:
    """「コンパニオン記憶 ・ 11/25 09:48 ・ 「こんばんは、灯。同僚の田中さ…」」 as plain text (for option labels;
    wrap it in plain_label for Markdown); the id only when nothing else names it."""
    when = format_local(started_at, "%m/%d %H:%M") if started_at else ""
    said = " ".join(first_input.split())
    quote = f"「{said[:18]}…」" if len(said) > 18 else (f"「{said}」" if said else "")
    named = quote or (f"ID {conversation_id[:8]}" if conversation_id else "")
    parts = [words.flow(flow), when, named if conversation_id else f"{named}（会話IDなし）"]
    return " ・ ".join(p for p in parts if p)


DEMO_PROVIDER = "demo"
DEMO_LATENCY = "計測なし（デモ）"


def latency(ms: float | None, provider: str | None) -> str:
    """A call's latency: 「1,234 ms」, or for the demo model (which answers at once, without a network) a
    mark that says so rather than a misleading 「0 ms」."""
    if provider == DEMO_PROVIDER:
        return DEMO_LATENCY
    return f"{ms:,.0f} ms" if ms is not None else "-"
