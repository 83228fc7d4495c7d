"""The typed vocabularies: every error type, provider error kind and event kind has its Japanese words, and a
provider's own names are brought into ours."""

from __future__ import annotations

from typing import get_args

from core.debuglog.events import ERROR_TYPES, EVENT_KINDS, DebugEvent, ErrorType
from core.guard.error_texts import ERROR_TYPE_LABELS, PLAIN_SENTENCES
from core.guard.results import Attempt, GuardResult
from core.llm.base import (
    FINISH_REASONS,
    PROVIDER_ERROR_KINDS,
    ProviderError,
    as_finish_reason,
)


def test_every_error_type_has_a_sentence_and_a_label_and_nothing_else_does() -> None:
    assert set(PLAIN_SENTENCES) == set(ERROR_TYPES) == set(ERROR_TYPE_LABELS)


def test_every_provider_error_kind_has_a_japanese_message() -> None:
    assert set(ProviderError.MESSAGES) == set(PROVIDER_ERROR_KINDS)


def test_the_dataclasses_are_typed_with_the_vocabularies() -> None:
    assert DebugEvent.__annotations__["kind"] == "EventKind"
    assert (
        Attempt.__annotations__["error_type"]
        == GuardResult.__annotations__["error_type"]
        == "ErrorType | None"
    )
    assert EVENT_KINDS == ("call", "repair", "error", "result", "note")
    assert get_args(ErrorType) == ERROR_TYPES


def test_finish_reasons_from_providers() -> None:
    mapping = {"end_turn": "stop", "max_tokens": "length"}
    assert [
        as_finish_reason(v, mapping) for v in ("end_turn", "max_tokens", "length", None, "pause_turn")
    ] == [  # type: ignore[arg-type]
        "stop",
        "length",
        "length",
        "stop",
        "other",
    ]
    assert FINISH_REASONS == ("stop", "length", "refusal", "content_filter", "other", "error")


def test_wire_facts_are_one_object_from_the_reply_to_the_attempt_and_flat_in_the_event() -> None:
    from core.debuglog.events import WIRE_FIELDS, ListSink, WireFacts  # noqa: PLC0415
    from core.guard.text_guard import guarded_text  # noqa: PLC0415
    from core.llm.base import LLMReply, LLMRequest, TextStream  # noqa: PLC0415

    facts = WireFacts(request_id="req-1", base_host="127.0.0.1:9", sdk="test 1.0")

    class Client:
        provider, model, sdk, base_host = "test", "m", "test 1.0", "127.0.0.1:9"

        def complete(self, request: LLMRequest) -> LLMReply:
            return LLMReply("こんにちは", wire=facts)

        def stream(self, request: LLMRequest) -> TextStream:
            raise NotImplementedError

    sink = ListSink()
    result = guarded_text(Client(), [{"role": "user", "content": "やあ"}], sink=sink)
    assert result.attempts[0].wire is facts
    call = sink.calls()[0] if hasattr(sink, "calls") else sink.events[0]
    assert {name: getattr(call, name) for name in WIRE_FIELDS} == facts.fields()
