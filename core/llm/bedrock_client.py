"""Amazon Bedrock (spec 04: Bedrock provider): Claude through the anthropic SDK's Bedrock client, every other
model through boto3's Converse API.

Credentials come from the standard AWS chain (environment, shared files / AWS_PROFILE, SSO, container and
instance roles); keys given as Katachi settings (e.g. in `.streamlit/secrets.toml`) are passed to the SDK
instead. The region is a setting. Structured output: Claude gets `output_config.format` exactly like the
Anthropic client; Converse gets `outputConfig.textFormat` (json_schema), or a forced tool (`toolChoice`) for
models without it (`KATACHI_BEDROCK_OUTPUT=tool`, or automatically after the API refuses outputConfig).
Replies arrive whole; `stream` hands them out in pieces (see `stream_from_reply`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from core.contracts.strict_copies import strict_copy
from core.debuglog.events import WireFacts
from core.llm.aws import REGION_SETTINGS, region, sdk_version, session
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
from core.llm.descriptor import Credentials, ProviderDescriptor
from core.llm.sdk_errors import MALFORMED, malformed

KEY_SETTINGS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
_STOP: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "content_filtered": "refusal",
    "guardrail_intervened": "refusal",
}
_TIMEOUT_CODES = {"ModelTimeoutException", "RequestTimeout", "RequestTimeoutException"}


def is_claude(model: str) -> bool:
    """Claude model ids and inference profiles (`anthropic.claude-…`, `jp.anthropic.claude-…`)."""
    return "anthropic.claude" in model


def map_bedrock_error(exc: BaseException) -> ProviderError:
    """A botocore exception as a ProviderError (kind by HTTP status and AWS error code)."""
    from botocore import exceptions as bx  # noqa: PLC0415 - botocore is the optional bedrock extra

    detail = f"{type(exc).__name__}: {exc}"[:500]
    if isinstance(exc, bx.ReadTimeoutError | bx.ConnectTimeoutError):
        return ProviderError("timeout", detail)
    if isinstance(exc, bx.EndpointConnectionError | bx.ConnectionError):
        return ProviderError("connection", detail)
    if isinstance(exc, bx.NoCredentialsError | bx.PartialCredentialsError | bx.NoRegionError):
        return ProviderError("auth", detail)
    if not isinstance(exc, bx.ClientError):
        return ProviderError("connection", detail)
    meta = exc.response.get("ResponseMetadata", {})
    status, code = meta.get("HTTPStatusCode"), exc.response.get("Error", {}).get("Code", "")
    request_id = meta.get("RequestId")
    if code in _TIMEOUT_CODES or status == 408:
        kind: ProviderErrorKind = "timeout"
    elif code == "ThrottlingException" or status == 429:
        kind = "rate_limit"
    elif isinstance(status, int) and status >= 500:
        kind = "server_error"
    elif status in (401, 403) or code in ("AccessDeniedException", "UnrecognizedClientException"):
        kind = "auth"
    else:
        kind = "bad_request"
    return ProviderError(kind, detail, status if isinstance(status, int) else None, request_id or None)


def converse_messages(messages: list[dict[str, str]]) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """(system blocks, alternating turns) for Converse, by the same rules as the Anthropic client."""
    from core.llm.anthropic_client import split_messages  # noqa: PLC0415 - keeps the anthropic SDK out of settings

    system, turns = split_messages(messages)
    blocks = [{"role": t["role"], "content": [{"text": t["content"]}]} for t in turns]
    return ([{"text": system}] if system else []), blocks


class BedrockConverseClient:
    """`LLMClient` for Bedrock's Converse API (boto3); `output` is `json_schema` or `tool`."""

    provider = "bedrock"

    def __init__(
        self,
        model: str,
        credentials: Credentials,
        deadlines: Deadlines | None = None,
        output: str = "json_schema",
    ):
        from botocore.config import Config  # noqa: PLC0415 - optional extra

        self.model = model
        self.deadlines = deadlines or Deadlines()
        self.output = output
        self.sdk = f"boto3 {sdk_version('boto3')}"
        config = Config(
            connect_timeout=self.deadlines.connect,
            read_timeout=self.deadlines.first_byte,
            retries={"total_max_attempts": 1},  # retrying is the guard's job
        )
        endpoint = credentials.get("KATACHI_BEDROCK_ENDPOINT_URL") or None
        self._client = session(credentials).client("bedrock-runtime", endpoint_url=endpoint, config=config)
        self.base_host = base_host(self._client.meta.endpoint_url)

    def _params(self, request: LLMRequest, output: str) -> dict[str, Any]:
        system, turns = converse_messages(request.messages)
        inference: dict[str, Any] = {"maxTokens": request.max_tokens}
        if request.temperature is not None:
            inference["temperature"] = request.temperature
        params: dict[str, Any] = {"modelId": self.model, "messages": turns, "inferenceConfig": inference}
        if system:
            params["system"] = system
        spec = request.json_schema
        if spec is not None and output == "tool":
            tool = {"name": spec.name, "inputSchema": {"json": spec.schema}}
            params["toolConfig"] = {
                "tools": [{"toolSpec": tool}],
                "toolChoice": {"tool": {"name": spec.name}},
            }
        elif spec is not None:
            schema = strict_copy(spec.schema) or spec.schema
            structure = {"jsonSchema": {"name": spec.name, "schema": json.dumps(schema, ensure_ascii=False)}}
            params["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": structure}}
        return params

    def _reply(self, response: dict[str, Any], params: dict[str, Any], started: float) -> LLMReply:
        content = response["output"]["message"]["content"]
        tool_input = next((b["toolUse"]["input"] for b in content if "toolUse" in b), None)
        if tool_input is not None:  # the forced tool's arguments are the structured reply
            text = json.dumps(tool_input, ensure_ascii=False)
        else:
            text = "".join(b.get("text", "") for b in content)
        usage = response.get("usage") or {}
        stop = str(response.get("stopReason") or "other")
        fmt = params.get("outputConfig", {}).get("textFormat", {}).get("structure", {}).get("jsonSchema")
        tool = params.get("toolConfig", {}).get("tools", [{}])[0].get("toolSpec")
        return LLMReply(
            text=text,
            finish_reason=as_finish_reason(stop, _STOP),
            usage=Usage(
                input_tokens=int(usage.get("inputTokens") or 0),
                output_tokens=int(usage.get("outputTokens") or 0),
                cached_input_tokens=int(usage.get("cacheReadInputTokens") or 0),
            ),
            latency_ms=(time.perf_counter() - started) * 1000,
            provider=self.provider,
            model=self.model,
            wire=WireFacts(
                response_format="json_schema" if fmt else "forced tool" if tool else None,
                request_id=response.get("ResponseMetadata", {}).get("RequestId"),
                base_host=self.base_host,
                sdk=self.sdk,
                wire_schema=json.loads(fmt["schema"])
                if fmt
                else tool["inputSchema"]["json"]
                if tool
                else None,
            ),
        )

    def complete(self, request: LLMRequest) -> LLMReply:
        """One `converse` call; when the model refuses `outputConfig` (400), the forced tool once more."""
        started = time.perf_counter()
        params = self._params(request, self.output)
        try:
            response = self._client.converse(**params)
        except Exception as exc:  # noqa: BLE001 - every botocore error becomes a ProviderError
            error = map_bedrock_error(exc)
            refused_format = error.status == 400 and "output" in error.detail.lower()
            if not (refused_format and "outputConfig" in params):
                raise error from None
            self.output = "tool"  # this model has no structured output: remember the forced tool
            params = self._params(request, "tool")
            try:
                response = self._client.converse(**params)
            except Exception as retry_exc:  # noqa: BLE001
                raise map_bedrock_error(retry_exc) from None
        try:
            return self._reply(response, params, started)
        except MALFORMED as exc:
            raise malformed(exc) from None

    def stream(self, request: LLMRequest) -> TextStream:
        """The whole reply, handed out in pieces."""
        return stream_from_reply(self.complete(request))


def build_bedrock(model: str, credentials: Credentials, deadlines: Deadlines) -> LLMClient:
    """Claude through `AnthropicBedrock`, any other model through Converse."""
    if is_claude(model):
        from core.llm.bedrock_claude import BedrockClaudeClient  # noqa: PLC0415 - imports the anthropic SDK

        return BedrockClaudeClient(model, credentials, deadlines)
    output = "tool" if (credentials.get("KATACHI_BEDROCK_OUTPUT") or "").lower() == "tool" else "json_schema"
    return BedrockConverseClient(model, credentials, deadlines, output)


def _ready(credentials: Credentials) -> bool:
    # The chain itself (profiles, SSO, instance roles) is resolved by botocore at the first call; a region is
    # the one thing that must be set here.
    return bool(region(credentials))


BEDROCK = ProviderDescriptor(
    name="bedrock",
    label="Amazon Bedrock",
    default_model="global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    settings=(
        *REGION_SETTINGS,
        *KEY_SETTINGS,
        "AWS_PROFILE",
        "KATACHI_BEDROCK_ENDPOINT_URL",
        "KATACHI_BEDROCK_OUTPUT",
    ),
    secret_settings=KEY_SETTINGS,
    ready=_ready,
    build=lambda model, config: build_bedrock(model, config.credentials, config.deadlines),
    missing_hint="AWS のリージョン（AWS_REGION）を設定してください。認証情報は AWS の標準の方法（環境変数・AWS_PROFILE・IAM ロール）で渡します。",
    modules=("boto3", "botocore"),
    extra="bedrock",
)
