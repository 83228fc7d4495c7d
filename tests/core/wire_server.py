"""A tiny local HTTP server speaking the OpenAI Chat Completions and Anthropic Messages wire formats.

Tests (and the benchmark) point the real SDK clients at it with `base_url`. It records every request
(path, headers, parsed JSON body) and answers from a queue of scripted responses; when the queue is
empty it answers with `default` (a short text reply). Usage::

    with WireServer() as server:
        server.enqueue(Scripted.text("hello"), Scripted.error(429, "slow down", retry_after=1))
        client = OpenAIClient("gpt-test", api_key="sk-test", base_url=server.openai_base_url)

`record=False` skips keeping requests (benchmark fast path). `server.reject(form, script)` makes the
server answer every request carrying that structured-output form with `script` (without taking from
the queue), to mimic servers that do not support a form (see `response_format_form`).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "refusal": "refusal"}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Scripted:
    """One scripted answer. kind: text | refusal | error. `finish` uses neutral names (stop/length/...)."""

    kind: str = "text"
    text: str = "ok"
    finish: str = "stop"
    input_tokens: int = 11
    output_tokens: int = 7
    status: int = 200
    message: str = ""
    error_type: str | None = None
    param: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunk_chars: int = 4
    send_usage: bool = True  # False: no usage in the reply, nor a usage chunk when a stream asks for one
    cached_tokens: int = 0  # prompt tokens served from the provider's cache (reported when > 0)
    body: bytes = b""  # kind raw: the exact body sent (with `content_type`)
    content_type: str = "application/json"
    trickle_seconds: float = 0.0  # kind trickle: keep-alive bytes for this long before the reply
    interval: float = 0.05
    make_text: Any = None  # kind text: a function of the request body giving the reply text (dynamic replies)

    @classmethod
    def text_reply(cls, text: str, **kw: Any) -> Scripted:
        """A normal text reply (JSON or SSE, depending on the request's `stream` flag)."""
        return cls(kind="text", text=text, **kw)

    @classmethod
    def refusal(cls, text: str = "I can't help with that.", **kw: Any) -> Scripted:
        """A refusal: OpenAI `message.refusal`, Anthropic `stop_reason: refusal`."""
        return cls(kind="refusal", text=text, finish="refusal", **kw)

    @classmethod
    def error(
        cls, status: int, message: str = "error", *, retry_after: float | None = None, **kw: Any
    ) -> Scripted:
        """An HTTP error with a provider-style error body."""
        headers = dict(kw.pop("headers", {}))
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        return cls(kind="error", status=status, message=message, headers=headers, **kw)

    @classmethod
    def raw(cls, body: bytes, content_type: str = "application/json", **kw: Any) -> Scripted:
        """Status 200 with exactly this body (a non-JSON body, an HTML page, malformed SSE)."""
        return cls(kind="raw", body=body, content_type=content_type, **kw)

    @classmethod
    def html_page(cls) -> Scripted:
        """What a proxy or login portal answers: an HTML page with status 200."""
        return cls.raw(
            b"<!doctype html><html><body><h1>Sign in</h1></body></html>", "text/html; charset=utf-8"
        )

    @classmethod
    def not_json(cls) -> Scripted:
        """A body that says it is JSON and is not."""
        return cls.raw(b'{"id": "chatcmpl-x", "choices": [ this is not json', "application/json")

    @classmethod
    def malformed_sse(cls) -> Scripted:
        """An event stream whose events carry invalid JSON."""
        return cls.raw(b"data: {not json at all\n\ndata: [DONE]\n\n", "text/event-stream")

    @classmethod
    def trickle(cls, seconds: float, text: str = "ok", interval: float = 0.05, **kw: Any) -> Scripted:
        """Status 200, then a keep-alive byte (a space, or an SSE comment) every `interval` for `seconds`."""
        return cls(kind="trickle", text=text, trickle_seconds=seconds, interval=interval, **kw)

    @classmethod
    def response_format_rejected(cls) -> Scripted:
        """The 400 an OpenAI-compatible server gives when it does not support json_schema."""
        return cls.error(
            400,
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            error_type="invalid_request_error",
            param="response_format",
        )

    @classmethod
    def llamacpp_response_format_error(cls) -> Scripted:
        """llama-cpp-python's server on `response_format: json_schema`: a 500 from its request validation."""
        return cls.error(500, LLAMACPP_PYTHON_MESSAGE, error_type="internal_server_error")

    @classmethod
    def schema_field_rejected(cls) -> Scripted:
        """The 400 a server gives that knows JSON mode but not a `schema` inside response_format."""
        return cls.error(
            400,
            "Additional properties are not allowed ('schema' was unexpected) in 'response_format'",
            error_type="invalid_request_error",
            param="response_format",
        )


LLAMACPP_PYTHON_MESSAGE = (
    "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}"
)


def response_format_form(body: Any) -> str | None:
    """The structured-output form of a request body: json_schema | json_object+schema | json_object | None."""
    fmt = body.get("response_format") if isinstance(body, dict) else None
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_object":
        return "json_object+schema" if "schema" in fmt else "json_object"
    return str(fmt.get("type"))


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    request_id: str = ""  # the request id header the server answered with (x-request-id / request-id)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle + delayed ACK add ~40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence the default logging
        return

    def do_GET(self) -> None:  # http.server naming
        """Any GET (e.g. a browser fetching an image a model wrote) is recorded, then answered 404."""
        with self.server.owner._lock:
            self.server.owner.requests.append(
                Recorded("GET", self.path, {k.lower(): v for k, v in self.headers.items()}, None)
            )
        self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # http.server naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        owner = self.server.owner
        recorded = Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        script = owner._next(recorded)
        if script.make_text is not None:
            script = dataclasses.replace(script, text=script.make_text(body), make_text=None)
        try:
            if script.delay:
                time.sleep(script.delay)
            wire = "anthropic" if self.path.rstrip("/").endswith("/messages") else "openai"
            id_header = {("request-id" if wire == "anthropic" else "x-request-id"): recorded.request_id}
            script = dataclasses.replace(script, headers={**id_header, **script.headers})
            if not self.path.rstrip("/").endswith(("/messages", "/chat/completions")):
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            elif script.kind == "error":
                self._send_error(wire, script)
            elif script.kind == "raw":
                self._send_raw(script)
            elif script.kind == "trickle":
                self._send_trickle(wire, body, script)
            elif isinstance(body, dict) and body.get("stream"):
                events = _openai_events(body, script) if wire == "openai" else _anthropic_events(body, script)
                self._send_sse(events, script.headers)
            else:
                payload = _openai_json(body, script) if wire == "openai" else _anthropic_json(body, script)
                self._send_json(200, payload, script.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, script: Scripted) -> None:
        self.send_response(200)
        self.send_header("content-type", script.content_type)
        self.send_header("content-length", str(len(script.body)))
        self.end_headers()
        self.wfile.write(script.body)

    def _send_trickle(self, wire: str, body: Any, script: Scripted) -> None:
        """Keep-alive bytes until `trickle_seconds` pass (or the client hangs up), then the reply."""
        stream = isinstance(body, dict) and body.get("stream")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if stream else "application/json")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        ends = time.monotonic() + script.trickle_seconds
        while time.monotonic() < ends:
            self.wfile.write(b": keep-alive\n\n" if stream else b" ")
            self.wfile.flush()
            time.sleep(script.interval)
        if stream:
            events = _openai_events(body, script) if wire == "openai" else _anthropic_events(body, script)
            self.wfile.write(
                "".join(
                    (f"event: {n}\n" if n else "") + f"data: {d if isinstance(d, str) else json.dumps(d)}\n\n"
                    for n, d in events
                ).encode()
            )
        else:
            payload = _openai_json(body, script) if wire == "openai" else _anthropic_json(body, script)
            self.wfile.write(json.dumps(payload).encode())
        self.wfile.flush()

    def _send_error(self, wire: str, script: Scripted) -> None:
        if wire == "openai":
            err = {
                "message": script.message,
                "type": script.error_type or "api_error",
                "param": script.param,
                "code": None,
            }
            payload: dict[str, Any] = {"error": err}
        else:
            err_type = script.error_type or _ANTHROPIC_ERROR_TYPES.get(script.status, "api_error")
            payload = {"type": "error", "error": {"type": err_type, "message": script.message}}
        self._send_json(script.status, payload, script.headers)

    def _send_sse(self, events: list[tuple[str | None, Any]], headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.close_connection = True
        parts = []
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            parts.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
        self.wfile.write("".join(parts).encode())
        self.wfile.flush()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(size, 1))] or [""]


def _openai_json(body: Any, s: Scripted) -> dict[str, Any]:
    refusal = s.kind == "refusal"
    message = {
        "role": "assistant",
        "content": None if refusal else s.text,
        "refusal": s.text if refusal else None,
    }
    payload: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": (body or {}).get("model", "unknown"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "stop" if refusal else s.finish,
                "logprobs": None,
            }
        ],
    }
    if s.send_usage:
        payload["usage"] = _openai_usage(s)
    return payload


def _openai_usage(s: Scripted) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": s.input_tokens,
        "completion_tokens": s.output_tokens,
        "total_tokens": s.input_tokens + s.output_tokens,
    }
    if s.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": s.cached_tokens}
    return usage


def _openai_events(body: dict[str, Any], s: Scripted) -> list[tuple[str | None, Any]]:
    base = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": body.get("model"),
    }
    field_name = "refusal" if s.kind == "refusal" else "content"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    events += [(None, chunk({field_name: piece})) for piece in _pieces(s.text, s.chunk_chars)]
    events.append((None, chunk({}, "stop" if s.kind == "refusal" else s.finish)))
    if s.send_usage and (body.get("stream_options") or {}).get("include_usage"):
        events.append((None, {**base, "choices": [], "usage": _openai_usage(s)}))
    events.append((None, "[DONE]"))
    return events


def _anthropic_json(body: Any, s: Scripted) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": (body or {}).get("model", "unknown"),
        "content": [{"type": "text", "text": s.text}] if s.text else [],
        "stop_reason": _ANTHROPIC_STOP.get(s.finish, s.finish),
        "stop_sequence": None,
        "usage": {
            "input_tokens": s.input_tokens,
            "output_tokens": s.output_tokens,
            **({"cache_read_input_tokens": s.cached_tokens} if s.cached_tokens else {}),
        },
    }


def _anthropic_events(body: dict[str, Any], s: Scripted) -> list[tuple[str | None, Any]]:
    start = _anthropic_json(body, s)
    start.update(content=[], stop_reason=None, usage={**start["usage"], "output_tokens": 1})
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    events.append(("content_block_start", block))
    for piece in _pieces(s.text, s.chunk_chars):
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        events.append(("content_block_delta", delta))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    stop = {"stop_reason": _ANTHROPIC_STOP.get(s.finish, s.finish), "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": s.output_tokens}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: WireServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (a deadline cut, a malformed reply dropped) is not worth a traceback."""
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)


class WireServer:
    """A scripted OpenAI/Anthropic wire-format server on 127.0.0.1 and a free port."""

    def __init__(self, *, record: bool = True, default: Scripted | None = None):
        self.record = record
        self.default = default or Scripted.text_reply("ok")
        self.requests: list[Recorded] = []
        self._queue: collections.deque[Scripted] = collections.deque()
        self._rejections: dict[str, Scripted] = {}
        self._served = 0  # requests answered (numbers the request ids)
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (the server must be started)."""
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def openai_base_url(self) -> str:
        """Base URL for the OpenAI SDK (`.../v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for the Anthropic SDK (it appends `/v1/messages` itself)."""
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *scripts: Scripted) -> None:
        """Queue answers; each request takes the next one (or `default` when none is left)."""
        with self._lock:
            self._queue.extend(scripts)

    def reject(self, form: str, script: Scripted) -> None:
        """Answer every request whose structured-output form is `form` with `script` (an error)."""
        with self._lock:
            self._rejections[form] = script

    def reset(self) -> None:
        """Forget recorded requests, queued answers and rejections."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self._rejections.clear()

    @property
    def last(self) -> Recorded:
        """The most recent recorded request."""
        with self._lock:
            return self.requests[-1]

    def _next(self, request: Recorded) -> Scripted:
        with self._lock:
            self._served += 1
            request.request_id = f"req_test_{self._served:04d}"
            if self.record:
                self.requests.append(request)
            rejection = self._rejections.get(response_format_form(request.body) or "")
            if rejection is not None:
                return rejection
            return self._queue.popleft() if self._queue else self.default

    def start(self) -> WireServer:
        """Bind a free port and serve in a background thread."""
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (in-flight delayed handlers are daemon threads)."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def closed_port() -> int:
    """A local port with nothing listening on it (for connection-refused tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
