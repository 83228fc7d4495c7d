"""Text handling at the boundaries: safe text for storage and safe cells and Markdown for exports.

Beside them: `textnorm` (the one Japanese normalizer), `japanese` (SudachiPy lexical keys) and
`safe_markdown` (model-written text made safe to render).
"""

from core.text.export import csv_cell, csv_text, excel_csv, markdown_text, xml_text
from core.text.safe import (
    CHANGED_NOTICE,
    COMMENT_MAX_CHARS,
    DOCUMENT_MAX_CHARS,
    FIELD_MAX_CHARS,
    TITLE_MAX_CHARS,
    SafeText,
    clean_text,
    safe_fields,
    safe_text,
    safe_value,
    too_long_message,
)

__all__ = [
    "CHANGED_NOTICE",
    "COMMENT_MAX_CHARS",
    "DOCUMENT_MAX_CHARS",
    "FIELD_MAX_CHARS",
    "TITLE_MAX_CHARS",
    "SafeText",
    "clean_text",
    "csv_cell",
    "csv_text",
    "excel_csv",
    "markdown_text",
    "safe_fields",
    "safe_text",
    "safe_value",
    "too_long_message",
    "xml_text",
]
