"""A local HTTP server on 127.0.0.1 speaking the wire formats of Bedrock (Converse, and InvokeModel for Claude),
the Gemini API (generateContent, embedContent) and watsonx.ai (IAM token, text/chat), for the real SDKs.

Like tests/core/wire_server.py it records every request (path, headers, parsed body) and answers from a queue
of `Scripted` answers (text, refusal, error with a status, `delay` for timeouts). Bedrock embeddings
(InvokeModel of Titan / Cohere) answer with `vectors`.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.core.wire_server import Recorded, Scripted

_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
}
_BEDROCK_ERRORS = {400: "ValidationException", 403: "AccessDeniedException", 429: "ThrottlingException"}


def converse_reply(body: dict[str, Any], s: Scripted) -> dict[str, Any]:
    tool = (body.get("toolConfig") or {}).get("toolChoice", {}).get("tool")
    if tool and s.kind == "text":
        content: list[dict[str, Any]] = [
            {"toolUse": {"toolUseId": "t1", "name": tool["name"], "input": json.loads(s.text)}}
        ]
        stop = "tool_use"
    else:
        content = [{"text": s.text}]
        stop = {"refusal": "content_filtered", "length": "max_tokens"}.get(s.finish, "end_turn")
    usage = {
        "inputTokens": s.input_tokens,
        "outputTokens": s.output_tokens,
        "totalTokens": s.input_tokens + s.output_tokens,
    }
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": usage,
        "metrics": {"latencyMs": 5},
    }


def claude_reply(s: Scripted) -> dict[str, Any]:
    stop = {"refusal": "refusal", "length": "max_tokens"}.get(s.finish, "end_turn")
    return {
        "id": "msg_bedrock",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [{"type": "text", "text": s.text}] if s.text else [],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": s.input_tokens, "output_tokens": s.output_tokens},
    }


def gemini_reply(s: Scripted) -> dict[str, Any]:
    finish = {"refusal": "SAFETY", "length": "MAX_TOKENS"}.get(s.finish, "STOP")
    parts = [] if s.kind == "refusal" else [{"text": s.text}]
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
        "usageMetadata": {
            "promptTokenCount": s.input_tokens,
            "candidatesTokenCount": s.output_tokens,
            "totalTokenCount": s.input_tokens + s.output_tokens,
        },
        "modelVersion": "gemini-test",
        "responseId": "gemini-resp-1",
    }


def watsonx_reply(body: dict[str, Any], s: Scripted) -> dict[str, Any]:
    finish = {"refusal": "content_filter", "length": "length"}.get(s.finish, "stop")
    return {
        "id": "chat-wx-1",
        "model_id": body.get("model_id"),
        "created": 1700000000,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": s.text}, "finish_reason": finish}
        ],
        "usage": {
            "prompt_tokens": s.input_tokens,
            "completion_tokens": s.output_tokens,
            "total_tokens": s.input_tokens + s.output_tokens,
        },
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:  # http.server naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        body: Any
        if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        else:
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
        owner = self.server.owner
        path = urlsplit(self.path).path
        if path.endswith("/identity/token"):  # IAM: not part of the script queue
            with owner.lock:
                owner.token_requests.append(Recorded("POST", self.path, headers, body))
            self._json(
                200,
                {
                    "access_token": owner.iam_token,
                    "refresh_token": "r",
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "expiration": int(time.time()) + 3600,
                },
            )
            return
        recorded = Recorded("POST", self.path, headers, body)
        with owner.lock:
            owner.served += 1
            recorded.request_id = f"req_cloud_{owner.served:04d}"
            owner.requests.append(recorded)
            script = owner.queue.popleft() if owner.queue else Scripted.text_reply("ok")
        try:
            if script.delay:
                time.sleep(script.delay)
            self._answer(path, body if isinstance(body, dict) else {}, script, recorded.request_id)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _answer(self, path: str, body: dict[str, Any], s: Scripted, request_id: str) -> None:
        amzn = {"x-amzn-requestid": request_id}
        if path.endswith("/converse") or path.endswith("/invoke"):
            if s.kind == "error":
                code = s.error_type or _BEDROCK_ERRORS.get(s.status, "InternalServerException")
                self._json(
                    s.status,
                    {"message": s.message},
                    {**amzn, "x-amzn-errortype": f"{code}:http://internal.amazon.com/"},
                )
            elif path.endswith("/converse"):
                self._json(200, converse_reply(body, s), amzn)
            elif "inputText" in body:  # Titan embeddings
                self._json(200, {"embedding": self.server.owner.vectors[0], "inputTextTokenCount": 3}, amzn)
            elif "texts" in body:  # Cohere embeddings
                self._json(
                    200,
                    {
                        "embeddings": self.server.owner.vectors[: len(body["texts"])],
                        "id": "e",
                        "texts": body["texts"],
                    },
                    amzn,
                )
            else:
                self._json(200, claude_reply(s), amzn)
        elif ":generateContent" in path or ":batchEmbedContents" in path or ":embedContent" in path:
            if s.kind == "error":
                err = {
                    "code": s.status,
                    "message": s.message,
                    "status": _GEMINI_STATUS.get(s.status, "UNKNOWN"),
                }
                self._json(s.status, {"error": err})
            elif ":generateContent" in path:
                self._json(200, gemini_reply(s))
            else:
                count = len(body.get("requests") or body.get("contents") or [1])
                self._json(200, {"embeddings": [{"values": v} for v in self.server.owner.vectors[:count]]})
        elif path.endswith("/ml/v1/text/chat"):
            if s.kind == "error":
                payload = {
                    "errors": [{"code": "error", "message": s.message}],
                    "trace": request_id,
                    "status_code": s.status,
                }
                self._json(s.status, payload, {"x-global-transaction-id": request_id})
            else:
                self._json(200, watsonx_reply(body, s), {"x-global-transaction-id": request_id})
        else:
            self._json(404, {"message": f"no route {path}"})

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: CloudWire


class CloudWire:
    """The scripted cloud-API server on 127.0.0.1 and a free port (a context manager)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.token_requests: list[Recorded] = []
        self.queue: collections.deque[Scripted] = collections.deque()
        self.vectors: list[list[float]] = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]]
        self.iam_token = "iam-bearer-token-XYZ987"
        self.served = 0
        self.lock = threading.Lock()
        self._httpd: _Server | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def enqueue(self, *scripts: Scripted) -> None:
        with self.lock:
            self.queue.extend(scripts)

    @property
    def last(self) -> Recorded:
        with self.lock:
            return self.requests[-1]

    def __enter__(self) -> CloudWire:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
