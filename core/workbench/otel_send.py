"""Opt-in live send of the debug log's trace to an OTLP/HTTP collector (Phoenix, Langfuse, an OpenTelemetry
Collector) with the opentelemetry-sdk exporter (the `otel` extra).

Off unless an administrator sets the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); headers such as a Langfuse key come from `OTEL_EXPORTER_OTLP_HEADERS`,
read by the SDK itself and never shown. What is sent is exactly the redacted export of core.workbench.otel.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.debuglog.events import DebugEvent
from core.workbench.otel import SCOPE, SERVICE, otlp_proto


def otlp_endpoint(env: Mapping[str, str] | None = None) -> str | None:
    """The traces URL an administrator configured (`…/v1/traces`), or None: then nothing is ever sent."""
    env = os.environ if env is None else env
    traces = (env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or "").strip()
    if traces:
        return traces
    base = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").strip()
    return f"{base.rstrip('/')}/v1/traces" if base else None


def _value(any_value: Any) -> Any:
    which = any_value.WhichOneof("value")
    if which == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, which) if which else None


def _readable_spans(events: Sequence[DebugEvent], secrets: Iterable[str]) -> list[Any]:
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415 - the optional otel extra
    from opentelemetry.sdk.trace import Event, ReadableSpan  # noqa: PLC0415
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope  # noqa: PLC0415
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags  # noqa: PLC0415

    request = otlp_proto(events, secrets)
    resource = Resource.create({"service.name": SERVICE})  # plus OTEL_RESOURCE_ATTRIBUTES (e.g. a project)
    scope = InstrumentationScope(SCOPE, "1")
    kinds = {1: SpanKind.INTERNAL, 3: SpanKind.CLIENT}
    codes = {0: StatusCode.UNSET, 1: StatusCode.OK, 2: StatusCode.ERROR}
    spans: list[Any] = []
    for span in (s for r in request.resource_spans for ss in r.scope_spans for s in ss.spans):
        trace = int.from_bytes(span.trace_id, "big")

        def context(span_id: bytes, trace: int = trace) -> SpanContext:
            return SpanContext(trace, int.from_bytes(span_id, "big"), False, TraceFlags(TraceFlags.SAMPLED))

        code = codes.get(span.status.code, StatusCode.UNSET)
        spans.append(
            ReadableSpan(
                name=span.name,
                context=context(span.span_id),
                parent=context(span.parent_span_id) if span.parent_span_id else None,
                resource=resource,
                attributes={kv.key: _value(kv.value) for kv in span.attributes},
                events=[
                    Event(e.name, {kv.key: _value(kv.value) for kv in e.attributes}, e.time_unix_nano)
                    for e in span.events
                ],
                kind=kinds.get(span.kind, SpanKind.INTERNAL),
                status=Status(code, span.status.message or None if code == StatusCode.ERROR else None),
                start_time=span.start_time_unix_nano,
                end_time=span.end_time_unix_nano,
                instrumentation_scope=scope,
            )
        )
    return spans


def send_trace(
    events: Sequence[DebugEvent], secrets: Iterable[str] = (), env: Mapping[str, str] | None = None
) -> int:
    """Send the redacted trace to the configured collector; the number of spans sent (0: none configured).

    Raises RuntimeError (a Japanese message) when the collector does not accept it.
    """
    endpoint = otlp_endpoint(env)
    if endpoint is None:
        return 0
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import SpanExportResult  # noqa: PLC0415

    spans = _readable_spans(events, list(secrets))
    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=10)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
    if result != SpanExportResult.SUCCESS:
        raise RuntimeError(
            "トレースを送信できませんでした。OTEL_EXPORTER_OTLP_ENDPOINT の受け手を確認してください。"
        )
    return len(spans)
