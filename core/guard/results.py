"""Guard results: one Attempt per model call, a GuardResult per guarded call, and shared call helpers."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from core.debuglog import trace
from core.debuglog.events import DebugEvent, DebugSink, ErrorType, WireFacts
from core.llm.base import LLMClient, LLMReply, LLMRequest, ProviderError

ERROR_MESSAGES = {
    "parse_error": "LLMの出力をJSONとして読み取れませんでした。",
    "schema_error": "LLMの出力が決められた形式（スキーマ）に合いませんでした。",
    "truncated": "LLMの出力が途中で切れました（出力トークンの上限）。",
    "refusal": "LLMが回答を拒否しました。",
    "empty_output": "LLMの出力が空でした。",
    "provider_error": "LLMの呼び出しに失敗しました。",
}
# Error types worth a repair call: the content was wrong, so asking again can fix it.
REPAIRABLE = {"parse_error", "schema_error", "truncated", "empty_output"}


@dataclass
class Attempt:
    """One LLM call inside a guarded call."""

    number: int
    kind: str  # initial | repair
    raw: str = ""
    finish_reason: str = ""
    fixes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    error_type: ErrorType | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0
    notes: list[str] = field(default_factory=list)
    usage_estimated: bool = False  # usage counted locally: the server sent none
    ttft_ms: float | None = None  # time to the first streamed token
    wire: WireFacts = field(default_factory=WireFacts)  # what went on the wire (the reply's, or the error's)

    def event_fields(self) -> dict[str, Any]:
        """The fields a DebugEvent of this attempt carries beside errors and raw text."""
        return {
            "notes": self.notes,
            "usage": self.usage,
            "usage_estimated": self.usage_estimated,
            "ttft_ms": self.ttft_ms,
            "latency_ms": self.latency_ms,
            **self.wire.fields(),
        }


def reply_fields(reply: LLMReply) -> dict[str, Any]:
    """What an Attempt keeps of a reply's metadata: usage (cached input included, and whether
    estimated), the structured-output form, ttft and the wire facts the client recorded."""
    return {
        "usage": {
            "input_tokens": reply.usage.input_tokens,
            "output_tokens": reply.usage.output_tokens,
            "cached_input_tokens": reply.usage.cached_input_tokens,
        },
        "usage_estimated": reply.usage.estimated,
        "ttft_ms": reply.ttft_ms,
        "wire": reply.wire,
    }


def error_fields(client: LLMClient, exc: ProviderError) -> dict[str, Any]:
    """What is known of a failed call's wire side: the request id (when the server answered), the
    client's base host and SDK."""
    wire = WireFacts(
        request_id=exc.request_id,
        base_host=getattr(client, "base_host", None),
        sdk=getattr(client, "sdk", None),
    )
    return {"wire": wire}


def request_fields(request: LLMRequest) -> dict[str, Any]:
    """The request settings every event of a call records (temperature, max tokens as sent)."""
    return {"temperature": request.temperature, "max_tokens": request.max_tokens}


def trace_fields(tags: dict[str, str], context: trace.Trace | None = None) -> dict[str, Any]:
    """Flow, step and the trace context (core.debuglog.trace) for a call's events: the bound flow wins, the
    tags' flow fills in when no flow is bound; the step always comes from the tags."""
    fields = (context or trace.current()).fields()
    fields["flow"] = fields["flow"] or tags.get("flow", "")
    fields["step"] = tags.get("step", "")
    return fields


T = TypeVar("T")


@dataclass
class GuardResult(Generic[T]):
    """The outcome of one guarded call: `data` is validated JSON (guarded_json) or the reply text (guarded_text)."""

    ok: bool
    data: T | None = None
    raw: str = ""
    error_type: ErrorType | None = None
    errors: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    message: str = ""  # Japanese text for a staff member when not ok
    call_id: str = ""  # the debug log's id of this call: follow-up calls hang under it (trace.child_of)

    @property
    def value(self) -> T:
        """The validated data of an ok result (a programming error to ask a failed one)."""
        if not self.ok or self.data is None:
            raise ValueError(f"no value: the guarded call failed ({self.error_type})")
        return self.data

    @property
    def text(self) -> str:
        """The reply text (free-text calls)."""
        return self.data if isinstance(self.data, str) else self.raw


def user_message(error_type: str, errors: Sequence[str]) -> str:
    base = ERROR_MESSAGES.get(error_type, "LLMの呼び出しに失敗しました。")
    return f"{base} {errors[0]}" if error_type == "provider_error" and errors else base


def emit(sink: DebugSink | None, event: DebugEvent) -> None:
    if sink is not None:
        sink.emit(event)


def call_client(
    client: LLMClient, request: LLMRequest
) -> tuple[LLMReply | None, ProviderError | None, float]:
    """One client call: (reply, None, latency) or (None, ProviderError, latency).

    Only ProviderError is a result: the clients turn what the SDKs and servers raise into one at their
    boundary (core.llm.sdk_errors). Anything else is a bug of ours (or a test's ReplayClient with too few
    outputs) and raises.
    """
    start = time.perf_counter()
    try:
        reply = client.complete(request)
        return reply, None, reply.latency_ms or (time.perf_counter() - start) * 1000
    except ProviderError as exc:
        return None, exc, (time.perf_counter() - start) * 1000
