"""Map an openai / anthropic SDK exception to a ProviderError. Both SDKs share the same exception names."""

from __future__ import annotations

import json
from types import ModuleType

from core.llm.base import ProviderError, ProviderErrorKind

# What the SDKs raise on a body that is not what they expect (HTML with status 200, invalid JSON, SSE
# events of the wrong shape or order): each becomes ProviderError("malformed"), never reaches a page.
MALFORMED = (
    json.JSONDecodeError,
    ValueError,
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
    AssertionError,
)


def sanitize(text: str, secret: str | None) -> str:
    """Remove the API key from an error text (the SDKs do not put it there; this is a belt)."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text


def map_sdk_error(sdk: ModuleType, exc: Exception, api_key: str | None = None) -> ProviderError:
    """The ProviderError (kind, sanitized detail, status) for an exception of `sdk` (openai or anthropic).

    Callers raise the result `from None`: the SDK exception (its request, headers and body) is not
    chained, so a printed traceback cannot carry a key the server echoed back.
    """
    import httpx2  # noqa: PLC0415 - the providers' registry imports this module; httpx2 only when a call failed

    if isinstance(exc, httpx2.TimeoutException):  # raised by our overall deadline while a body is read
        return ProviderError("timeout", sanitize(f"{type(exc).__name__}: {exc}", api_key))
    if isinstance(exc, httpx2.HTTPError):
        return ProviderError("connection", sanitize(f"{type(exc).__name__}: {exc}", api_key))
    status = getattr(exc, "status_code", None)
    detail = sanitize(f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}", api_key)
    if isinstance(exc, sdk.APITimeoutError) or status == 408:
        kind: ProviderErrorKind = "timeout"
    elif isinstance(exc, sdk.APIConnectionError):
        kind = "connection"
    elif isinstance(exc, sdk.RateLimitError) or status == 429:
        kind = "rate_limit"
    elif isinstance(exc, sdk.InternalServerError) or (isinstance(status, int) and status >= 500):
        kind = "server_error"  # includes Anthropic's 529 overloaded
    elif isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError) or status in (401, 403):
        kind = "auth"
    else:
        kind = "bad_request"
    request_id = getattr(exc, "request_id", None)  # APIStatusError: the x-request-id / request-id header
    return ProviderError(
        kind,
        detail,
        status if isinstance(status, int) else None,
        request_id if isinstance(request_id, str) else None,
    )


def malformed(exc: BaseException, api_key: str | None = None) -> ProviderError:
    """The ProviderError for a reply the SDK could not read (see MALFORMED); raise it `from None`."""
    return ProviderError("malformed", sanitize(f"{type(exc).__name__}: {exc}"[:500], api_key))
