"""The overall deadline of a provider call, applied to the SDKs' HTTP client.

The openai and anthropic SDKs here run on httpx2. Its timeouts bound each socket operation, so a server
that trickles a keep-alive byte every few seconds never trips them. `DeadlineTransport` gives every
request an overall deadline: the response body (a JSON reply or an SSE stream) is cut with
`ReadTimeout` once the deadline passes, which the clients turn into `ProviderError("timeout")`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx2

from core.llm.deadline import Deadlines


def httpx_timeout(deadlines: Deadlines) -> httpx2.Timeout:
    """Per-operation timeouts: connect, and first byte / between bytes for reads."""
    return httpx2.Timeout(deadlines.first_byte, connect=deadlines.connect)


def deadline_http_client(deadlines: Deadlines) -> httpx2.Client:
    """An HTTP client for the SDKs whose every request has the overall deadline."""
    transport = DeadlineTransport(httpx2.HTTPTransport(), deadlines.total)
    return httpx2.Client(transport=transport, timeout=httpx_timeout(deadlines))


class _DeadlineStream(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, deadline: float, request: httpx2.Request, total: float):
        self._inner, self._deadline, self._request, self._total = inner, deadline, request, total

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout(
                    f"overall deadline of {self._total:g} s passed", request=self._request
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()


class DeadlineTransport(httpx2.BaseTransport):
    """Wraps a transport: the response body must be complete within `total` seconds of the request."""

    def __init__(self, inner: httpx2.BaseTransport, total: float):
        self._inner, self.total = inner, total

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = time.monotonic() + self.total
        response = self._inner.handle_request(request)
        if time.monotonic() > deadline:
            response.close()
            raise httpx2.ReadTimeout(f"overall deadline of {self.total:g} s passed", request=request)
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _DeadlineStream(response.stream, deadline, request, self.total)
        return response

    def close(self) -> None:
        self._inner.close()
