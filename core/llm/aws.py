"""What the Bedrock clients (Converse and Claude) and the Bedrock embeddings share: the AWS region, a boto3
session from the provider's settings (or the standard AWS chain), and SDK versions for the debug log."""

from __future__ import annotations

from typing import Any

from core.llm.descriptor import Credentials, first

REGION_SETTINGS = ("KATACHI_BEDROCK_REGION", "AWS_REGION", "AWS_DEFAULT_REGION")


def region(credentials: Credentials) -> str | None:
    return first(credentials, *REGION_SETTINGS)


def sdk_version(package: str) -> str:
    from importlib.metadata import version  # noqa: PLC0415 - ~15 ms to import: only when a client is built

    try:
        return version(package)
    except Exception:  # noqa: BLE001 - a missing distribution only blanks the debug label
        return "?"


def session(credentials: Credentials) -> Any:
    import boto3  # noqa: PLC0415 - boto3 is the optional bedrock extra

    keys = {
        "aws_access_key_id": credentials.get("AWS_ACCESS_KEY_ID") or None,
        "aws_secret_access_key": credentials.get("AWS_SECRET_ACCESS_KEY") or None,
        "aws_session_token": credentials.get("AWS_SESSION_TOKEN") or None,
    }
    if not (keys["aws_access_key_id"] and keys["aws_secret_access_key"]):
        keys = {}  # the standard chain: environment, AWS_PROFILE, SSO, container / instance role
    return boto3.Session(
        region_name=region(credentials), profile_name=credentials.get("AWS_PROFILE") or None, **keys
    )
