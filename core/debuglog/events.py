"""Debug events, redaction of secrets, and a bounded in-session sink (spec 00 移植手順 5)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, MutableSequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, get_args

from core.text.export import excel_csv

MAX_EVENTS = 2000
MAX_CHARS = 20_000_000  # text kept across all events (attachments make stacks large); oldest dropped first
REDACTED = "[REDACTED]"

_SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|x-api-key|secret|password|token(?!s)|bearer)", re.I)
_SECRET_VALUES = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"sk-(?:proj-)?[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._\-~+/=]{8,}"),
    re.compile(r"(?i)(api[_-]?key|x-api-key|authorization)(\s*[:=]\s*)(\"?)[^\s\",}]{6,}"),
]


# What a debug event records: a model call, a repair request, a failed attempt, the call's result, a note.
EventKind = Literal["call", "repair", "error", "result", "note"]
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)
# Why a guarded call failed (core.guard); each has a Japanese sentence in core.guard.error_texts.
ErrorType = Literal[
    "provider_error",
    "parse_error",
    "schema_error",
    "truncated",
    "refusal",
    "empty_output",
    "unexpected_error",
]
ERROR_TYPES: tuple[ErrorType, ...] = get_args(ErrorType)


@dataclass(frozen=True)
class WireFacts:
    """What went on the wire for one model call, as the client recorded it (never credentials): the
    structured-output form sent ("json_schema strict", "json_object+schema", ...), the provider's request id,
    host[:port] of the base URL, the SDK and its version, the json_schema strict flag and the schema exactly as
    sent. A reply carries one, an attempt keeps it, a debug event spreads it into its flat fields (the export
    format)."""

    response_format: str | None = None
    request_id: str | None = None
    base_host: str | None = None
    sdk: str | None = None
    strict: bool | None = None
    wire_schema: dict[str, Any] | None = None

    def fields(self) -> dict[str, Any]:
        """The facts by name (shallow: the schema is shared, not copied)."""
        return {name: getattr(self, name) for name in WIRE_FIELDS}


WIRE_FIELDS = ("response_format", "request_id", "base_host", "sdk", "strict", "wire_schema")


@dataclass
class DebugEvent:
    """One step of an LLM call (`kind`). `error_type` is an ErrorType for events the guard wrote; an imported
    log or a note may carry another name (kept as it was)."""

    flow: str
    step: str
    kind: EventKind
    ts: float = field(default_factory=time.time)
    call_id: str = ""
    attempt: int = 0
    provider: str = ""
    model: str = ""
    messages: list[dict[str, str]] = field(default_factory=list)
    schema_name: str | None = None
    raw: str | None = None
    parsed: Any = None
    ok: bool | None = None
    error_type: str | None = None
    errors: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float | None = None
    response_format: str | None = None  # structured-output form sent ("json_schema strict", ...)
    usage_estimated: bool = False  # usage counted locally because the server sent none
    ttft_ms: float | None = None  # time to the first streamed token
    # where the call sits (core.debuglog.trace) ...
    session_id: str = ""  # the browser session
    conversation_id: str = ""  # interview id / review thread id / memory conversation / diagnosis session id
    turn: int = 0  # 1-based turn of the conversation (0: not a numbered turn)
    parent_id: str = ""  # call_id of the call this one hangs under ("" at the top of its turn)
    user_input: str = ""  # the person's input of the turn (core.debuglog.trace), for replaying an export
    turn_input: dict[str, Any] | None = None  # the turn's request when text cannot rebuild it (diagnosis)
    # ... and what was really sent (the wire request, never credentials)
    temperature: float | None = None
    max_tokens: int | None = None
    wire_schema: dict[str, Any] | None = None  # the JSON Schema as sent (None: text, or json_object alone)
    strict: bool | None = None  # json_schema strict flag as sent
    request_id: str | None = None  # the provider's request id header
    base_host: str | None = None  # host[:port] of the base URL
    sdk: str | None = None  # "openai 1.x.y" / "anthropic 0.x.y" / "demo"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DebugSink(Protocol):
    def emit(self, event: DebugEvent) -> None: ...


def event_chars(event: DebugEvent) -> int:
    """Roughly how much text an event holds (messages and raw output)."""
    return sum(len(m.get("content", "")) for m in event.messages) + len(event.raw or "")


class ListSink:
    """Appends redacted events to a list (the session's `debug_logs`), keeping the last MAX_EVENTS
    and at most MAX_CHARS of text in all (oldest events dropped first)."""

    def __init__(
        self,
        events: MutableSequence[DebugEvent] | None = None,
        *,
        secrets: Iterable[str] = (),
        limit: int = MAX_EVENTS,
        max_chars: int = MAX_CHARS,
    ):
        self.events: MutableSequence[DebugEvent] = events if events is not None else []
        self.secrets = [s for s in secrets if s and len(s) >= 4]
        self.limit = limit
        self.max_chars = max_chars

    def emit(self, event: DebugEvent) -> None:
        self.events.append(redact_event(event, self.secrets))
        overflow = len(self.events) - self.limit
        if overflow > 0:
            del self.events[:overflow]
        total = sum(event_chars(e) for e in self.events)
        while total > self.max_chars and len(self.events) > 1:
            total -= event_chars(self.events[0])
            del self.events[0]


class CaptureSink:
    """Keeps one turn's events (for the page's "what the model got" view) and forwards them to `inner`
    (the session's debug log, when DEBUG is on). Events are redacted before they are kept."""

    def __init__(self, inner: DebugSink | None = None, *, secrets: Iterable[str] = ()):
        self.inner = inner
        self.secrets = [s for s in secrets if s and len(s) >= 4]
        self.events: list[DebugEvent] = []

    def emit(self, event: DebugEvent) -> None:
        self.events.append(redact_event(event, self.secrets))
        if self.inner is not None:
            self.inner.emit(event)

    def calls(self) -> list[dict[str, Any]]:
        """One plain dict per model call (call / error events), in order: what the shared expander shows."""
        return [call_view(e) for e in self.events if e.kind in ("call", "error")]


def call_view(event: DebugEvent) -> dict[str, Any]:
    """The part of a call event a person reads: step, attempt, schema, messages as sent, raw reply, errors."""
    return {
        "flow": event.flow,
        "step": event.step,
        "attempt": event.attempt,
        "schema": event.schema_name,
        "messages": list(event.messages),
        "raw": event.raw or "",
        "ok": event.ok,
        "error_type": event.error_type,
        "errors": list(event.errors),
        "fixes": list(event.fixes),
        "notes": list(event.notes),
        "latency_ms": event.latency_ms,
        "response_format": event.response_format,
        "usage": dict(event.usage),
        "usage_estimated": event.usage_estimated,
        "ttft_ms": event.ttft_ms,
        "call_id": event.call_id,
        "conversation_id": event.conversation_id,
        "turn": event.turn,
    }


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask API keys, bearer tokens and the given secret values inside free text."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    for pattern in _SECRET_VALUES:
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}", text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Redact anywhere in a JSON-like value: secret-looking keys lose their values, strings are masked."""
    secrets = list(secrets)
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and _SECRET_KEYS.search(key) and isinstance(item, str | bytes) and item:
                out[key] = REDACTED
            else:
                out[key] = redact(item, secrets)
        return out
    if isinstance(value, list | tuple):
        return [redact(v, secrets) for v in value]
    return value


def redact_event(event: DebugEvent, secrets: Iterable[str] = ()) -> DebugEvent:
    """A copy of the event with every field redacted."""
    return DebugEvent(**redact(event.to_dict(), secrets))


def events_to_jsonl(
    events: Iterable[DebugEvent],
    secrets: Iterable[str] = (),
    rating: Callable[[DebugEvent], Mapping[str, Any] | None] | None = None,
) -> str:
    """JSON Lines export (redacted again, so an export never carries a secret). `rating` gives the rating of
    an event's turn (core.workbench.ratings), written under the line's `feedback` key."""
    secrets = list(secrets)
    lines = []
    for e in events:
        data = e.to_dict()
        found = rating(e) if rating is not None else None
        if found is not None:
            data["feedback"] = dict(found)
        lines.append(json.dumps(redact(data, secrets), ensure_ascii=False, default=str) + "\n")
    return "".join(lines)


def events_from_jsonl(text: str) -> list[DebugEvent]:
    """Read a JSON Lines export back (for the Replay client)."""
    names = DebugEvent.__dataclass_fields__.keys()
    out = []
    for line in text.splitlines():
        if line.strip():
            data = json.loads(line)
            out.append(DebugEvent(**{k: v for k, v in data.items() if k in names}))
    return out


CSV_COLUMNS = [
    "ts",
    "flow",
    "step",
    "kind",
    "call_id",
    "attempt",
    "provider",
    "model",
    "schema_name",
    "ok",
    "error_type",
    "latency_ms",
    "ttft_ms",
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "usage_estimated",
    "response_format",
    "fixes",
    "errors",
    "raw",
    # where the call sits, the settings as sent, notes, cost
    "session_id",
    "conversation_id",
    "turn",
    "parent_id",
    "temperature",
    "max_tokens",
    "strict",
    "request_id",
    "base_host",
    "sdk",
    "notes",
    "cost",
    "feedback",
    "feedback_comment",
]


# The CSV's column names (Excel in Japan reads them); the values stay raw (English ids, as in the JSONL).
CSV_HEADERS = {
    "ts": "日時（日本時間）",
    "flow": "フロー",
    "step": "ステップ",
    "kind": "種類",
    "call_id": "呼び出しID",
    "attempt": "試行",
    "provider": "プロバイダー",
    "model": "モデル",
    "schema_name": "スキーマ",
    "ok": "成功",
    "error_type": "エラーの種類",
    "latency_ms": "レイテンシ（ms）",
    "ttft_ms": "最初のトークンまで（ms）",
    "input_tokens": "入力トークン",
    "cached_input_tokens": "キャッシュ済み入力トークン",
    "output_tokens": "出力トークン",
    "usage_estimated": "トークン数は推定",
    "response_format": "構造化出力の形式",
    "fixes": "自動修正",
    "errors": "検証エラー",
    "raw": "生の出力",
    "session_id": "セッションID",
    "conversation_id": "会話ID",
    "turn": "ターン",
    "parent_id": "親の呼び出しID",
    "temperature": "温度",
    "max_tokens": "最大トークン",
    "strict": "厳密モード",
    "request_id": "リクエストID",
    "base_host": "接続先",
    "sdk": "SDK",
    "notes": "メモ",
    "cost": "費用",
    "feedback": "評価",
    "feedback_comment": "評価コメント",
}


def _rating_columns(found: Mapping[str, Any] | None, secrets: list[str]) -> dict[str, str]:
    if found is None:
        return {"feedback": "", "feedback_comment": ""}
    return {
        "feedback": str(found.get("rating", "")),
        "feedback_comment": redact_text(str(found.get("comment", "")), secrets),
    }


def events_to_csv(
    events: Iterable[DebugEvent],
    secrets: Iterable[str] = (),
    cost: Callable[[DebugEvent], str] | None = None,
    rating: Callable[[DebugEvent], Mapping[str, Any] | None] | None = None,
) -> bytes:
    """A flat CSV export: one row per event, messages and the wire schema left out (they are in the JSONL
    export). For Excel in Japan (core.text.export.excel_csv): BOM, Japanese column names (CSV_HEADERS), the
    time in Japan time; text cells cannot read as spreadsheet formulas (the JSONL keeps raw values).
    `cost` gives the cost column's text per event (core.workbench.prices; empty without it); `rating` the
    rating of the event's turn (feedback / feedback_comment columns)."""
    secrets = list(secrets)
    rows = []
    for e in events:
        d = redact(e.to_dict(), secrets)
        rows.append(
            {
                **{k: d.get(k) for k in CSV_COLUMNS if k in d},
                "input_tokens": d["usage"].get("input_tokens"),
                "cached_input_tokens": d["usage"].get("cached_input_tokens"),
                "output_tokens": d["usage"].get("output_tokens"),
                "fixes": "; ".join(d["fixes"]),
                "errors": "; ".join(d["errors"]),
                "notes": "; ".join(d["notes"]),
                "cost": cost(e) if cost is not None and e.kind in ("call", "error") else "",
                **_rating_columns(rating(e) if rating is not None else None, secrets),
            }
        )
    return excel_csv(rows, {k: CSV_HEADERS[k] for k in CSV_COLUMNS}, times=("ts",))
