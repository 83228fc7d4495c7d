"""Bounded replies: output tokens asked for and characters kept, per flow.

A model that loops, or a server that ignores `max_tokens`, can send megabytes. The guard asks every call
for at most the flow's `max_tokens` (unless the call names its own) and keeps at most `max_chars` of
a reply for rendering, storage, extraction and indexing, ending the kept part with a Japanese notice;
the whole raw reply (up to `MAX_RAW_CHARS`) stays on the result and in the debug log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_RAW_CHARS = 4_000_000  # what the guard reads of one reply at most (the debug page shows it)
DEFAULT_MAX_TOKENS = 2048
DEFAULT_MAX_CHARS = 20_000


@dataclass(frozen=True)
class ReplyLimits:
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_chars: int = DEFAULT_MAX_CHARS


# Flow tag -> limits. Each flow registers its own (`register_reply_limits`, in its constants module, so
# they hold wherever the flow's code runs); unknown tags get the defaults.
FLOW_LIMITS: dict[str, ReplyLimits] = {}


def register_reply_limits(flow: str, limits: ReplyLimits) -> ReplyLimits:
    """Declare `flow`'s limits (returns them, for the flow's FlowInfo)."""
    FLOW_LIMITS[flow] = limits
    return limits


def limits_for(tags: Mapping[str, str] | None, env: Mapping[str, str] | None = None) -> ReplyLimits:
    """The limits of the flow named in `tags["flow"]`; KATACHI_MAX_REPLY_CHARS lowers every cap."""
    limits = FLOW_LIMITS.get((tags or {}).get("flow", ""), ReplyLimits())
    env = os.environ if env is None else env
    try:
        override = int(env.get("KATACHI_MAX_REPLY_CHARS") or 0)
    except ValueError:
        override = 0
    if 0 < override < limits.max_chars:
        return ReplyLimits(limits.max_tokens, override)
    return limits


def cap_notice(max_chars: int, total: int) -> str:
    """The Japanese notice that ends a reply cut at `max_chars` (total: characters received, at least)."""
    return (
        f"\n\n（応答が長すぎるため、最初の {max_chars:,} 文字だけを表示・保存しています。"
        f"受け取った全文（{total:,} 文字）はデバッグログで確認できます。）"
    )


def cap_text(text: str, max_chars: int) -> tuple[str, bool]:
    """(text cut at `max_chars` with the notice, whether it was cut)."""
    if len(text) <= max_chars:
        return text, False
    return text[:max_chars] + cap_notice(max_chars, len(text)), True


def cap_strings(value: Any, max_chars: int) -> tuple[Any, bool]:
    """A JSON value with every string longer than `max_chars` cut (with the notice); whether any was."""
    if isinstance(value, str):
        return cap_text(value, max_chars)
    if isinstance(value, list):
        items = [cap_strings(v, max_chars) for v in value]
        return [v for v, _ in items], any(c for _, c in items)
    if isinstance(value, dict):
        pairs = {k: cap_strings(v, max_chars) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(c for _, c in pairs.values())
    return value, False
