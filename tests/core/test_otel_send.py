"""core.workbench.otel_send: nothing is sent without OTEL_EXPORTER_OTLP_ENDPOINT; with it, the opentelemetry-sdk OTLP/HTTP
exporter posts protobuf to a receiver on 127.0.0.1 that parses it: every span, parent link, prompt and token
count arrives, redacted, with the configured headers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from core.workbench.otel import otlp_proto
from core.workbench.otel_send import otlp_endpoint, send_trace
from tests.core.test_debug_otel import EVENTS, attrs

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")


class Receiver:
    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], ExportTraceServiceRequest]] = []

    def __enter__(self) -> Receiver:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.posts.append((self.path, headers, ExportTraceServiceRequest.FromString(body)))
                data = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as r:
        yield r


def test_nothing_is_sent_without_an_endpoint(receiver: Receiver) -> None:
    assert otlp_endpoint({}) is None and send_trace(EVENTS, env={}) == 0
    assert receiver.posts == []
    assert otlp_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/"}) == "http://h:4318/v1/traces"


def test_the_sdk_exporter_posts_the_redacted_trace_as_protobuf(receiver: Receiver, monkeypatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Basic%20dGVzdA==")
    sent = send_trace(EVENTS, secrets=["req_123"], env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
    ((path, headers, request),) = receiver.posts
    assert path == "/v1/traces" and headers["content-type"] == "application/x-protobuf"
    assert headers["authorization"] == "Basic dGVzdA=="
    got = list(request.resource_spans[0].scope_spans[0].spans)
    want = list(otlp_proto(EVENTS, ["req_123"]).resource_spans[0].scope_spans[0].spans)
    assert sent == len(got) == len(want) == 6
    key = {s.span_id: s for s in got}
    for w in want:
        g = key[w.span_id]
        assert (g.trace_id, g.parent_span_id, g.name) == (w.trace_id, w.parent_span_id, w.name)
        assert (g.start_time_unix_nano, g.end_time_unix_nano, g.status.code) == (
            w.start_time_unix_nano,
            w.end_time_unix_nano,
            w.status.code,
        )
        assert attrs(g) == attrs(w)
    assert attrs(key[want[2].span_id])["gen_ai.response.id"] == "[REDACTED]"
    resource = {kv.key: kv.value.string_value for kv in request.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "katachi"
