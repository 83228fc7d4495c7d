"""The upload size bound, checked in our code so the person reads a Japanese sentence (Streamlit's own
over-limit notice is an English line and an icon). Matches `.streamlit/config.toml` server.maxUploadSize."""

from __future__ import annotations

MAX_UPLOAD_MB = 20  # .streamlit/config.toml [server] maxUploadSize
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
UPLOAD_TOO_LARGE = f"ファイルが大きすぎます（上限 {MAX_UPLOAD_MB} MB）。"


def upload_limit_caption(limit_mb: int = MAX_UPLOAD_MB, what: str = "ファイル") -> str:
    """「ファイルは 20 MB まで読み込めます。」: the caption beside every uploader."""
    return f"{what}は {limit_mb} MB まで読み込めます。大きすぎるファイルは読み込まれません。"
