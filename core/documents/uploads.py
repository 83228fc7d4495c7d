"""Upload size bounds, checked in our code so the person reads a Japanese sentence (Streamlit's own over-limit
notice is an English line and an icon, drawn in the browser before the file reaches the app).

Two numbers: MAX_UPLOAD_MB is the app's bound, checked by each reader (debug JSONL here; attachments in
core.documents.document.MAX_FILE_BYTES; review JSON in core.flows.review_chat.records.MAX_IMPORT_BYTES), each with a
Japanese message. TRANSPORT_MAX_MB is Streamlit's `.streamlit/config.toml` server.maxUploadSize, kept at twice
the app's bound so that a file somewhat over a bound still reaches our check and is refused in Japanese; only a
file past the transport bound gets Streamlit's line, next to our caption that states the limit.
"""

from __future__ import annotations

MAX_UPLOAD_MB = 20
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
TRANSPORT_MAX_MB = (
    2 * MAX_UPLOAD_MB
)  # .streamlit/config.toml [server] maxUploadSize (a test keeps them equal)
UPLOAD_TOO_LARGE = f"ファイルが大きすぎます（上限 {MAX_UPLOAD_MB} MB）。"


def upload_limit_caption(limit_mb: int = MAX_UPLOAD_MB, what: str = "ファイル") -> str:
    """「ファイルは 20 MB まで読み込めます。」: the caption beside every uploader."""
    return f"{what}は {limit_mb} MB まで読み込めます。大きすぎるファイルは読み込まれません。"
