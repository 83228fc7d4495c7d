"""The LLM boundary: one small protocol every provider client implements (ARCHITECTURE.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Protocol, get_args, runtime_checkable
from urllib.parse import urlsplit

from core.debuglog.events import WireFacts

Message = dict[str, str]
# How a reply ended ("error": a stream that failed part-way, kept with what had arrived).
FinishReason = Literal["stop", "length", "refusal", "content_filter", "other", "error"]
FINISH_REASONS: tuple[FinishReason, ...] = get_args(FinishReason)
# What kind of provider failure a ProviderError is; each has a Japanese sentence (ProviderError.MESSAGES).
ProviderErrorKind = Literal[
    "timeout",
    "rate_limit",
    "server_error",
    "auth",
    "connection",
    "bad_request",
    "malformed",
    "missing_key",
    "missing_extra",
]
PROVIDER_ERROR_KINDS: tuple[ProviderErrorKind, ...] = get_args(ProviderErrorKind)


def as_finish_reason(value: str | None, mapping: dict[str, FinishReason] | None = None) -> FinishReason:
    """A provider's stop reason in our vocabulary: through `mapping` (the provider's names), kept when it is
    already ours, else "other" (e.g. Anthropic's pause_turn)."""
    value = value or "stop"
    if mapping and value in mapping:
        return mapping[value]
    for known in FINISH_REASONS:
        if value == known:
            return known
    return "other"


@dataclass(frozen=True)
class JSONSchemaSpec:
    """A named JSON Schema a request asks the model to follow."""

    name: str
    schema: dict[str, Any]


@dataclass
class LLMRequest:
    """Everything a client needs for one call; `tags` (flow, step, ...) only feed the debug log."""

    messages: list[Message]
    json_schema: JSONSchemaSpec | None = None
    max_tokens: int = 2048
    temperature: float | None = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class Usage:
    """Token counts of one reply; `estimated` when the server sent none and they were counted locally."""

    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    cached_input_tokens: int = 0  # of input_tokens, read from the provider's prompt cache

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class LLMReply:
    """One reply: its text, how it ended, usage, and what went on the wire (`wire`: the structured-output
    form actually sent, request id, host, SDK, strict flag, schema as sent). `ttft_ms` is the time to the
    first streamed token (None for non-streamed replies).
    """

    text: str
    finish_reason: FinishReason = "stop"
    usage: Usage = field(default_factory=Usage)
    latency_ms: float = 0.0
    provider: str = ""
    model: str = ""
    notes: list[str] = field(default_factory=list)
    ttft_ms: float | None = None
    # the request as it went on the wire (filled by the clients; never credentials)
    wire: WireFacts = field(default_factory=WireFacts)


class TextStream:
    """Iterator of text deltas; `reply` holds the whole reply once the stream is exhausted."""

    def __init__(self, chunks: Iterator[str]):
        self._chunks = chunks
        self.reply: LLMReply | None = None

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        return next(self._chunks)

    def close(self) -> None:
        """Stop reading: closes the underlying generator (and with it the HTTP response)."""
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()


@runtime_checkable
class LLMClient(Protocol):
    provider: str  # "demo" | "openai" | "anthropic" | "replay" | "faulty"
    model: str

    def complete(self, request: LLMRequest) -> LLMReply: ...

    def stream(self, request: LLMRequest) -> TextStream: ...


class ProviderError(Exception):
    """A provider call failed. kind: timeout | rate_limit | server_error | auth | connection | bad_request | malformed | missing_key | missing_extra."""

    MESSAGES: ClassVar[dict[ProviderErrorKind, str]] = {
        "timeout": "LLMの応答がタイムアウトしました。しばらく待ってから再試行してください。",
        "rate_limit": "LLMの利用上限（429: レート制限）に達しました。少し時間をおいて再試行してください。",
        "server_error": "LLMのサーバーでエラーが発生しました（5xx）。時間をおいて再試行してください。",
        "auth": "APIキーが無効か、権限がありません。サイドバーのプロバイダー設定を確認してください。",
        "connection": "LLMのサーバーに接続できませんでした。ベースURLとネットワークを確認してください。",
        "bad_request": "LLMがリクエストを受け付けませんでした（400）。モデル名や設定を確認してください。",
        "malformed": "LLMのサーバーから読み取れない応答が返りました（JSONでない本文・HTMLページ・壊れたストリーム）。ベースURLとサーバーの状態を確認してください。",
        "missing_extra": "このプロバイダーのSDK（追加パッケージ）がインストールされていません。サイドバーに表示されるコマンドで追加するか、別のプロバイダーを選んでください。",
        "missing_key": "このプロバイダーのAPIキーが設定されていません。環境変数か .streamlit/secrets.toml で設定するか、サイドバーでデモモデルを選んでください。",
    }

    def __init__(
        self,
        kind: ProviderErrorKind,
        detail: str = "",
        status: int | None = None,
        request_id: str | None = None,
    ):
        self.kind = kind
        self.detail = detail
        self.status = status
        self.request_id = request_id  # the provider's request id, when the server answered
        super().__init__(f"{kind}: {detail}" if detail else kind)

    @property
    def user_message(self) -> str:
        return self.MESSAGES.get(self.kind, "LLMの呼び出しに失敗しました。")


def base_host(url: object) -> str | None:
    """host[:port] of a base URL for the debug log: never the scheme's userinfo, path, query or key."""
    try:
        parts = urlsplit(str(url))
        host, port = parts.hostname, parts.port
    except ValueError:  # an unparsable URL or port: nothing is recorded rather than a guess
        return None
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port is not None else host


def stream_from_reply(reply: LLMReply, chunk_chars: int = 12) -> TextStream:
    """Turn a finished reply into a TextStream of small deltas (demo / replay streaming).

    The final reply is a copy carrying the time to the first delta (unless the reply had one).
    """

    def gen() -> Iterator[str]:
        started = time.perf_counter()
        ttft: float | None = None
        for i in range(0, len(reply.text), chunk_chars):
            if ttft is None:
                ttft = (time.perf_counter() - started) * 1000
            yield reply.text[i : i + chunk_chars]
        stream.reply = replace(reply, ttft_ms=reply.ttft_ms if reply.ttft_ms is not None else ttft)

    stream = TextStream(gen())
    return stream
