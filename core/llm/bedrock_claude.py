"""Claude on Amazon Bedrock through the anthropic SDK's Bedrock client (imported only when a Claude model is
chosen on Bedrock; see core.llm.bedrock_client)."""

from __future__ import annotations

from typing import Any

from core.llm.anthropic_client import AnthropicClient
from core.llm.aws import region, sdk_version
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream, base_host, stream_from_reply
from core.llm.deadline import Deadlines
from core.llm.deadline_transport import deadline_http_client, httpx_timeout
from core.llm.descriptor import Credentials
from core.llm.sdk_errors import sanitize


class BedrockClaudeClient(AnthropicClient):
    """Claude on Bedrock: the Anthropic client's request (`output_config` included) through `AnthropicBedrock`,
    which moves the model into the path (`/model/{id}/invoke`) and signs with SigV4."""

    provider = "bedrock"
    sdk = f"anthropic[bedrock] {sdk_version('anthropic')}"

    def __init__(self, model: str, credentials: Credentials, deadlines: Deadlines | None = None):
        from anthropic import AnthropicBedrock  # noqa: PLC0415 - needs botocore (the bedrock extra)

        self.model = model
        self.base_url = credentials.get("KATACHI_BEDROCK_ENDPOINT_URL") or None
        self._api_key = credentials.get("AWS_SECRET_ACCESS_KEY")
        self.deadlines = deadlines or Deadlines()
        keys: dict[str, Any] = {
            "aws_access_key": credentials.get("AWS_ACCESS_KEY_ID") or None,
            "aws_secret_key": credentials.get("AWS_SECRET_ACCESS_KEY") or None,
            "aws_session_token": credentials.get("AWS_SESSION_TOKEN") or None,
        }
        if not (keys["aws_access_key"] and keys["aws_secret_key"]):
            keys = {}
        self._client = AnthropicBedrock(  # type: ignore[assignment]
            aws_region=region(credentials),
            aws_profile=credentials.get("AWS_PROFILE") or None,
            base_url=self.base_url,
            timeout=httpx_timeout(self.deadlines),
            max_retries=0,
            http_client=deadline_http_client(self.deadlines),
            **keys,
        )
        self.base_host = base_host(self._client.base_url)

    def complete(self, request: LLMRequest) -> LLMReply:
        try:
            return super().complete(request)
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - botocore (credentials, signing) outside the anthropic SDK
            raise ProviderError("auth", sanitize(f"{type(exc).__name__}: {exc}", self._api_key)) from None

    def stream(self, request: LLMRequest) -> TextStream:
        """The whole reply, handed out in pieces (Bedrock streams in AWS event-stream framing)."""
        return stream_from_reply(self.complete(request))
