"""Google Gemini (spec 04: Gemini provider) through the google-genai SDK, with the Gemini API key or Vertex AI.

Structured output is Gemini's own: `response_mime_type: application/json` with `response_json_schema` (the
schema as JSON Schema, unchanged). The OpenAI-compatible endpoint was not chosen: the guard would lose the
native finish reasons (SAFETY, PROHIBITED_CONTENT, a blocked prompt) that tell a refusal from a bad reply.
Replies arrive whole; `stream` hands them out in pieces.
"""

from __future__ import annotations

import time
from typing import Any

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
    base_host,
    stream_from_reply,
)
from core.llm.deadline import Deadlines
from core.llm.descriptor import Credentials, ProviderDescriptor, first, flag
from core.llm.sdk_errors import MALFORMED, malformed, sanitize

KEY_SETTINGS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
VERTEX_SETTINGS = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION")
_REFUSALS = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}


def _finish(reason: str) -> FinishReason:
    if reason == "STOP":
        return "stop"
    if reason == "MAX_TOKENS":
        return "length"
    return "refusal" if reason in _REFUSALS else "other"


def gemini_contents(messages: list[dict[str, str]]) -> tuple[str, list[dict[str, Any]]]:
    """(system instruction, contents): Gemini's roles are `user` and `model`, alternating, user first."""
    from core.llm.anthropic_client import split_messages  # noqa: PLC0415 - keeps the anthropic SDK out of settings

    system, turns = split_messages(messages)
    contents = [
        {"role": "model" if t["role"] == "assistant" else "user", "parts": [{"text": t["content"]}]}
        for t in turns
    ]
    return system, contents


def map_gemini_error(exc: BaseException, api_key: str | None) -> ProviderError:
    """A google-genai / httpx2 exception as a ProviderError."""
    import httpx2  # noqa: PLC0415 - the providers' registry imports this module; httpx2 only when a call failed

    detail = sanitize(f"{type(exc).__name__}: {exc}"[:500], api_key)
    if isinstance(exc, httpx2.TimeoutException):
        return ProviderError("timeout", detail)
    if isinstance(exc, httpx2.HTTPError):
        return ProviderError("connection", detail)
    code = getattr(exc, "code", None)
    if not isinstance(code, int):
        return malformed(exc, api_key)
    if code == 429:
        kind: ProviderErrorKind = "rate_limit"
    elif code in (408, 504):
        kind = "timeout"
    elif code >= 500:
        kind = "server_error"
    elif code in (401, 403):
        kind = "auth"
    else:
        kind = "bad_request"
    return ProviderError(kind, detail, code)


class GeminiClient:
    """`LLMClient` for `models.generate_content` (API key, or Vertex AI with Application Default Credentials)."""

    provider = "gemini"

    def __init__(self, model: str, credentials: Credentials, deadlines: Deadlines | None = None):
        from google import genai  # noqa: PLC0415 - the optional gemini extra
        from google.genai import types  # noqa: PLC0415

        self.model = model
        self.deadlines = deadlines or Deadlines()
        from importlib.metadata import version  # noqa: PLC0415 - ~15 ms: when a client is built, not at import

        self.sdk = f"google-genai {version('google-genai')}"
        self._api_key = first(credentials, *KEY_SETTINGS)
        options = types.HttpOptions(
            base_url=credentials.get("KATACHI_GEMINI_BASE_URL") or None,
            timeout=int(self.deadlines.first_byte * 1000),  # milliseconds
            retry_options=types.HttpRetryOptions(attempts=1),  # retrying is the guard's job
        )
        vertex = flag(credentials, "GOOGLE_GENAI_USE_VERTEXAI")
        kwargs: dict[str, Any] = {"http_options": options, "vertexai": vertex}
        if vertex and not self._api_key:  # Vertex AI with ADC (gcloud auth, a service account)
            kwargs.update(
                project=credentials.get("GOOGLE_CLOUD_PROJECT"),
                location=credentials.get("GOOGLE_CLOUD_LOCATION") or "global",
            )
        else:  # the Gemini API key, or a Vertex AI express-mode key
            kwargs["api_key"] = self._api_key
        try:
            self._client = genai.Client(**kwargs)
        except Exception as exc:  # noqa: BLE001 - missing key / ADC: say so as an auth error
            raise ProviderError("auth", sanitize(f"{type(exc).__name__}: {exc}", self._api_key)) from None
        self.base_host = base_host(self._client._api_client._http_options.base_url)

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        system, contents = gemini_contents(request.messages)
        config: dict[str, Any] = {"max_output_tokens": request.max_tokens}
        if system:
            config["system_instruction"] = system
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.json_schema is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.json_schema.schema
        return {"model": self.model, "contents": contents, "config": config}

    def _reply(self, response: Any, params: dict[str, Any], started: float) -> LLMReply:
        candidates = response.candidates or []
        parts = (candidates[0].content.parts or []) if candidates and candidates[0].content else []
        text = "".join(p.text or "" for p in parts if not getattr(p, "thought", False))
        if candidates and candidates[0].finish_reason is not None:
            finish = _finish(str(getattr(candidates[0].finish_reason, "value", candidates[0].finish_reason)))
        else:  # no candidate: the prompt itself was blocked (prompt_feedback.block_reason)
            blocked = response.prompt_feedback and response.prompt_feedback.block_reason
            finish = "refusal" if blocked else "other"
            text = text or (f"blocked: {getattr(blocked, 'value', blocked)}" if blocked else "")
        meta = response.usage_metadata
        schema = params["config"].get("response_json_schema")
        return LLMReply(
            text=text,
            finish_reason=finish,
            usage=Usage(
                input_tokens=(meta.prompt_token_count or 0) if meta else 0,
                output_tokens=(meta.candidates_token_count or 0) if meta else 0,
                cached_input_tokens=(meta.cached_content_token_count or 0) if meta else 0,
            ),
            latency_ms=(time.perf_counter() - started) * 1000,
            provider=self.provider,
            model=self.model,
            wire=WireFacts(
                response_format="response_json_schema" if schema is not None else None,
                request_id=getattr(response, "response_id", None),
                base_host=self.base_host,
                sdk=self.sdk,
                wire_schema=schema,
            ),
        )

    def complete(self, request: LLMRequest) -> LLMReply:
        """One `generate_content` call mapped into an `LLMReply`."""
        started = time.perf_counter()
        params = self._params(request)
        try:
            response = self._client.models.generate_content(**params)
        except MALFORMED as exc:
            raise malformed(exc, self._api_key) from None
        except Exception as exc:  # noqa: BLE001 - google.genai.errors / httpx2
            raise map_gemini_error(exc, self._api_key) from None
        try:
            return self._reply(response, params, started)
        except MALFORMED as exc:
            raise malformed(exc, self._api_key) from None

    def stream(self, request: LLMRequest) -> TextStream:
        """The whole reply, handed out in pieces."""
        return stream_from_reply(self.complete(request))


def build_gemini(model: str, credentials: Credentials, deadlines: Deadlines) -> LLMClient:
    return GeminiClient(model, credentials, deadlines)


def _ready(credentials: Credentials) -> bool:
    vertex = flag(credentials, "GOOGLE_GENAI_USE_VERTEXAI") and bool(credentials.get("GOOGLE_CLOUD_PROJECT"))
    return bool(first(credentials, *KEY_SETTINGS)) or vertex


GEMINI = ProviderDescriptor(
    name="gemini",
    label="Google Gemini",
    default_model="gemini-2.5-flash",
    settings=(*KEY_SETTINGS, *VERTEX_SETTINGS, "KATACHI_GEMINI_BASE_URL"),
    secret_settings=KEY_SETTINGS,
    ready=_ready,
    build=lambda model, config: build_gemini(model, config.credentials, config.deadlines),
    missing_hint="GEMINI_API_KEY を設定するか、Vertex AI なら GOOGLE_GENAI_USE_VERTEXAI=true と GOOGLE_CLOUD_PROJECT を設定してください。",
    modules=("google.genai",),
    extra="gemini",
)
