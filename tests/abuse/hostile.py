"""The hostile payload (issue #15 item 4) and a client that plants it in every reply of every flow.

`HostileClient` wraps the demo model: free text gets the payload in front (the memory trailer stays at
the end), and every JSON string with Japanese in it (what a model writes: messages, choices, reasons,
facts, names; enums and ids are ASCII) gets it appended. `inert(value)` says whether a rendered Markdown
string has nothing left that a browser would fetch or run.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from core.flows.registry import demo_client
from core.llm.base import LLMClient, LLMReply, LLMRequest, TextStream, stream_from_reply


def payload(host: str = "127.0.0.1:9") -> str:
    """Markdown image, raw HTML image, javascript: and data: links, KaTeX href, autolink, bare URL."""
    return (
        f" ![x](http://{host}/pixel?md_inline=1) <img src=http://{host}/pixel?html=1>"
        f" [押して](javascript:alert(1)) [開く](data:text/html;base64,PHNjcmlwdD4=)"
        f" $\\href{{http://{host}/pixel?katex=1}}{{k}}$ <http://{host}/pixel?autolink=1>"
        f" http://{host}/pixel?bare=1 ![ref][p]\n\n[p]: http://{host}/pixel?ref=1\n"
    )


MARK = "悪意あるペイロード"


def _poison(value: Any, text: str) -> Any:
    if isinstance(value, str):
        return value + " " + text if any(ord(ch) > 0x2FFF for ch in value) else value
    if isinstance(value, list):
        return [_poison(v, text) for v in value]
    if isinstance(value, dict):
        return {k: _poison(v, text) for k, v in value.items()}
    return value


class HostileClient:
    """The demo model with the payload planted in every reply."""

    def __init__(self, host: str = "127.0.0.1:9", inner: LLMClient | None = None):
        self.inner = inner or demo_client()
        self.provider, self.model = self.inner.provider, self.inner.model
        self.text = MARK + payload(host)

    def complete(self, request: LLMRequest) -> LLMReply:
        reply = self.inner.complete(request)
        if request.json_schema is not None:
            try:
                return replace(
                    reply, text=json.dumps(_poison(json.loads(reply.text), self.text), ensure_ascii=False)
                )
            except ValueError:
                return reply
        return replace(reply, text=self.text + "\n\n" + reply.text)

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request), chunk_chars=200)


_LIVE = (
    re.compile(r"(?<!\\)!\[[^\]\n]*(?<!\\)\]\s*[(\[]"),  # image, inline or by reference
    re.compile(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\("),  # inline link
    re.compile(r"^\s{0,3}(?<!\\)\[[^\]\n]+(?<!\\)\]:", re.M),  # reference definition
    re.compile(r"<[A-Za-z/!?]"),  # raw HTML or an autolink
    re.compile(r"(?i)javascript:|data:text"),
    re.compile(r"(?i)(https?:|www\.)(?!\u200b)//?"),  # a URL that would be auto-linked
    re.compile(r"(?<!\\)\$\\href"),  # KaTeX
)


def live_parts(value: str) -> list[str]:
    """What in a rendered Markdown string could still fetch or run something (empty: inert)."""
    return [m.group(0) for pattern in _LIVE for m in pattern.finditer(value)]
