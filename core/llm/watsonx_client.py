"""IBM watsonx.ai (spec 04: Watson provider) through its documented REST chat API (`POST /ml/v1/text/chat`),
on the same HTTP client and deadlines as the other providers.

Why not the ibm-watsonx-ai SDK: it pins pandas below 2.4 (the app runs pandas 3), brings IBM's fork of the
S3 SDK, accepts only https URLs and decides between IBM Cloud and Cloud Pak for Data by the host name, so it
cannot be pointed at a test server. What it sends for `ModelInference.chat` is this same request.
Authentication: an IBM Cloud API key exchanged at IAM for a bearer token (kept until shortly before it
expires), or a bearer token given directly (`WATSONX_TOKEN`, e.g. Cloud Pak for Data). Structured output:
`response_format: {type: json_schema, json_schema: {name, schema}}`.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

from core.debuglog.events import WireFacts
from core.llm.base import (
    FinishReason,
    LLMClient,
    LLMReply,
    LLMRequest,
    ProviderError,
    ProviderErrorKind,
    TextStream,
    Usage,
    as_finish_reason,
    base_host,
    stream_from_reply,
)
from core.llm.deadline import Deadlines
from core.llm.descriptor import Credentials, ProviderDescriptor, first
from core.llm.sdk_errors import MALFORMED, malformed, sanitize

if TYPE_CHECKING:
    import httpx2

API_VERSION = "2024-10-08"  # the `version` query parameter the chat API requires
DEFAULT_IAM_URL = "https://iam.cloud.ibm.com"
KEY_SETTINGS = ("WATSONX_APIKEY", "WATSONX_API_KEY", "WATSONX_TOKEN")
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "eos_token": "stop",
    "length": "length",
    "max_tokens": "length",
    "content_filter": "refusal",
}
_TOKEN_MARGIN_S = 60.0


def _kind(status: int) -> ProviderErrorKind:
    if status == 429:
        return "rate_limit"
    if status in (408, 504):
        return "timeout"
    if status >= 500:
        return "server_error"
    return "auth" if status in (401, 403) else "bad_request"


class WatsonxClient:
    """`LLMClient` for watsonx.ai chat; `project_id` or `space_id` names where the model is deployed."""

    provider = "watsonx"

    def __init__(self, model: str, credentials: Credentials, deadlines: Deadlines | None = None):
        import httpx2  # noqa: PLC0415 - the providers' registry imports this module; httpx2 when a client is built

        from core.llm.deadline_transport import deadline_http_client  # noqa: PLC0415 - imports httpx2, see above

        self.sdk = f"httpx2 {httpx2.__version__} (watsonx.ai REST {API_VERSION})"
        self.model = model
        self.deadlines = deadlines or Deadlines()
        self.url = (credentials.get("WATSONX_URL") or "").rstrip("/")
        self.iam_url = (credentials.get("WATSONX_IAM_URL") or DEFAULT_IAM_URL).rstrip("/")
        self.project_id = credentials.get("WATSONX_PROJECT_ID") or None
        self.space_id = credentials.get("WATSONX_SPACE_ID") or None
        self._api_key = first(credentials, "WATSONX_APIKEY", "WATSONX_API_KEY")
        self._token = credentials.get("WATSONX_TOKEN") or None
        self._token_expires = float("inf") if self._token else 0.0
        self._lock = threading.Lock()
        self._http = deadline_http_client(self.deadlines)
        self.base_host = base_host(self.url)

    def _secret(self, text: str) -> str:
        return sanitize(sanitize(text, self._api_key), self._token)

    def _bearer(self) -> str:
        """A valid IAM access token (exchanged from the API key when missing or about to expire)."""
        with self._lock:
            if self._token and time.time() < self._token_expires - _TOKEN_MARGIN_S:
                return self._token
            if not self._api_key:
                raise ProviderError("missing_key", "no watsonx API key or token")
            response = self._post(
                f"{self.iam_url}/identity/token",
                data={"grant_type": "urn:ibm:params:oauth:grant-type:apikey", "apikey": self._api_key},
            )
            body = response.json()
            self._token = str(body["access_token"])
            self._token_expires = float(
                body.get("expiration") or time.time() + float(body.get("expires_in", 3600))
            )
            return self._token

    def _post(self, url: str, **kwargs: Any) -> httpx2.Response:
        import httpx2  # noqa: PLC0415 - loaded by __init__ already; see there

        try:
            response = self._http.post(url, **kwargs)
            response.read()
        except httpx2.TimeoutException as exc:
            raise ProviderError("timeout", self._secret(f"{type(exc).__name__}: {exc}")) from None
        except httpx2.HTTPError as exc:
            raise ProviderError("connection", self._secret(f"{type(exc).__name__}: {exc}")) from None
        if response.status_code >= 400:
            detail = self._secret(f"HTTP {response.status_code}: {response.text[:400]}")
            request_id = response.headers.get("x-global-transaction-id")
            raise ProviderError(_kind(response.status_code), detail, response.status_code, request_id)
        return response

    def _body(self, request: LLMRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model_id": self.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
        }
        if self.project_id:
            body["project_id"] = self.project_id
        elif self.space_id:
            body["space_id"] = self.space_id
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.json_schema is not None:
            spec = request.json_schema
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": spec.name, "schema": spec.schema},
            }
        return body

    def complete(self, request: LLMRequest) -> LLMReply:
        """One chat request (after the token exchange when needed) mapped into an `LLMReply`."""
        started = time.perf_counter()
        body = self._body(request)
        token = self._bearer()
        response = self._post(
            f"{self.url}/ml/v1/text/chat",
            params={"version": API_VERSION},
            json=body,
            headers={"Authorization": f"Bearer {token}"},
        )
        try:
            data = response.json()
            choice = data["choices"][0]
            usage = data.get("usage") or {}
            finish = str(choice.get("finish_reason") or "other")
            text = choice["message"].get("content") or ""
        except MALFORMED as exc:
            raise malformed(exc, self._api_key) from None
        fmt = body.get("response_format")
        return LLMReply(
            text=text if isinstance(text, str) else json.dumps(text, ensure_ascii=False),
            finish_reason=as_finish_reason(finish, _FINISH),
            usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
            latency_ms=(time.perf_counter() - started) * 1000,
            provider=self.provider,
            model=self.model,
            wire=WireFacts(
                response_format="json_schema" if fmt else None,
                request_id=response.headers.get("x-global-transaction-id") or data.get("id"),
                base_host=self.base_host,
                sdk=self.sdk,
                wire_schema=fmt["json_schema"]["schema"] if fmt else None,
            ),
        )

    def stream(self, request: LLMRequest) -> TextStream:
        """The whole reply, handed out in pieces."""
        return stream_from_reply(self.complete(request))


def build_watsonx(model: str, credentials: Credentials, deadlines: Deadlines) -> LLMClient:
    return WatsonxClient(model, credentials, deadlines)


def _ready(credentials: Credentials) -> bool:
    where = credentials.get("WATSONX_PROJECT_ID") or credentials.get("WATSONX_SPACE_ID")
    return bool(first(credentials, *KEY_SETTINGS) and credentials.get("WATSONX_URL") and where)


WATSONX = ProviderDescriptor(
    name="watsonx",
    label="IBM watsonx.ai",
    default_model="ibm/granite-3-3-8b-instruct",
    settings=(*KEY_SETTINGS, "WATSONX_URL", "WATSONX_PROJECT_ID", "WATSONX_SPACE_ID", "WATSONX_IAM_URL"),
    secret_settings=KEY_SETTINGS,
    ready=_ready,
    build=lambda model, config: build_watsonx(model, config.credentials, config.deadlines),
    missing_hint="WATSONX_APIKEY、WATSONX_URL（例: https://jp-tok.ml.cloud.ibm.com）、WATSONX_PROJECT_ID（または WATSONX_SPACE_ID）を設定してください。",
)
