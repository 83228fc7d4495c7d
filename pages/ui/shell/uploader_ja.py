"""File uploaders in Japanese: the dropzone's own 「Upload」 and 「40MB per file • PDF, …」 replaced by CSS.

Streamlit draws these words itself and has no setting for them; the page shows the limits in Japanese in a
caption under the uploader (core.documents.uploads.upload_limit_caption).
"""

from __future__ import annotations

import streamlit as st

BUTTON_TEXT = "ファイルを選ぶ"
DROP_TEXT = "またはここにドラッグ＆ドロップ"

_CSS = f"""<style>
[data-testid="stFileUploaderDropzone"] [data-testid="stBaseButton-secondary"] [data-testid="stMarkdownContainer"] p {{
  font-size: 0;
}}
[data-testid="stFileUploaderDropzone"] [data-testid="stBaseButton-secondary"] [data-testid="stMarkdownContainer"] p::after {{
  content: "{BUTTON_TEXT}";
  font-size: 0.875rem;
}}
[data-testid="stFileUploaderDropzoneInstructions"] span {{
  font-size: 0;
}}
[data-testid="stFileUploaderDropzoneInstructions"] span::after {{
  content: "{DROP_TEXT}";
  font-size: 0.875rem;
}}
</style>"""


def japanese_uploaders() -> None:
    """Show every file uploader of this page with Japanese words (call once per page run)."""
    st.html(_CSS)
