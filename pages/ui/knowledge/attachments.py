"""Attachments on a page: extracted once, in the worker, with progress, cancel and a PDF password.

Extraction runs in core.documents.extract's subprocess with a time and memory budget; outcomes are kept in a
process-wide cache keyed by the bytes' hash, so reruns do not read a file again. While a file is read,
a progress bar and a 「読み取りを中止」 button show: clicking it makes Streamlit rerun, which stops the
waiting script (the child is killed on the way out) and marks the files being read as cancelled.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.documents.attachments import DEFAULT_LIMITS, AttachmentError, ExtractedDocument, attachment_name
from core.documents.extract import ExtractionCache, Tick, WorkerBudget, extract_once

PASSWORD_CODES = ("pdf_password", "wrong_password")
SHOW_PROGRESS_AFTER_S = 0.3


@st.cache_resource(show_spinner=False)
def extraction_cache() -> ExtractionCache:
    """The process's cache of extraction outcomes (bounded; keyed by content hash, not by session)."""
    return ExtractionCache()


def _file_id(f: Any) -> str:
    return str(getattr(f, "file_id", None) or f.name)


class _Progress:
    """A progress bar drawn only when a read takes a while; every tick is also where a rerun can stop us."""

    def __init__(self, slot: Any, budget: WorkerBudget):
        self.slot, self.budget, self.bar = slot, budget, None

    def __call__(self, tick: Tick) -> bool:
        if tick.elapsed < SHOW_PROGRESS_AFTER_S:
            return True
        fraction = (
            tick.fraction if tick.fraction is not None else min(tick.elapsed / self.budget.seconds, 0.99)
        )
        pages = f"（{tick.done}/{tick.total} ページ）" if tick.total else ""
        text = (
            f"{tick.filename} を読み取り中…{pages} {tick.elapsed:.0f} 秒（上限 {self.budget.seconds:.0f} 秒）"
        )
        if self.bar is None:
            self.bar = self.slot.progress(min(max(fraction, 0.0), 1.0), text=text)
        else:
            self.bar.progress(min(max(fraction, 0.0), 1.0), text=text)
        return True


def _size(f: Any) -> int:
    size = getattr(f, "size", None)
    return size if isinstance(size, int) else len(f.getvalue())


def read_files(files: list[Any], prefix: str) -> tuple[list[ExtractedDocument], list[AttachmentError]]:
    """Each file's document (from the cache or the worker) or its AttachmentError, in upload order.

    `prefix` names the session keys (cancel button, password field, cancelled files). A file over the size
    bound (from the uploader or the chat input's ＋) is refused in Japanese before it is hashed or sent to the
    worker.
    """
    ss = st.session_state
    cancelled: set[str] = ss.setdefault(f"{prefix}_cancelled_files", set())
    reading_key = f"{prefix}_reading_files"
    if ss.get(f"{prefix}_cancel_reading"):  # the click that interrupted the last read
        cancelled.update(ss.get(reading_key) or [])
    ss[reading_key] = []
    password = ss.get(f"{prefix}_pdf_password") or None
    cache = extraction_cache()
    outcomes: dict[int, ExtractedDocument | AttachmentError] = {}
    pending: list[tuple[int, Any]] = []
    for index, f in enumerate(files):
        if _size(f) > DEFAULT_LIMITS.max_bytes:
            name = attachment_name(f.name)
            outcomes[index] = AttachmentError(
                "too_large", name, size=_size(f), limit=DEFAULT_LIMITS.max_bytes
            )
            continue
        cached = cache.get(ExtractionCache.key(f.getvalue(), password, DEFAULT_LIMITS), f.name)
        if _file_id(f) in cancelled:
            outcomes[index] = AttachmentError("cancelled", f.name)
        elif cached is not None:
            outcomes[index] = cached
        else:
            pending.append((index, f))
    if pending:
        outcomes.update(_read_pending(pending, prefix, password, cache))
    if any(isinstance(o, AttachmentError) and o.code in PASSWORD_CODES for o in outcomes.values()):
        ss[f"{prefix}_pdf_password_needed"] = True
    docs = [o for _, o in sorted(outcomes.items()) if isinstance(o, ExtractedDocument)]
    errors = [o for _, o in sorted(outcomes.items()) if isinstance(o, AttachmentError)]
    return docs, errors


def _read_pending(
    pending: list[tuple[int, Any]], prefix: str, password: str | None, cache: ExtractionCache
) -> dict[int, ExtractedDocument | AttachmentError]:
    """Read files not in the cache, with the cancel button and a progress bar on screen meanwhile."""
    ss = st.session_state
    reading_key = f"{prefix}_reading_files"
    ss[reading_key] = [_file_id(f) for _, f in pending]
    budget = WorkerBudget.from_env()
    outcomes: dict[int, ExtractedDocument | AttachmentError] = {}
    slot = st.empty()
    with slot.container():
        st.button("読み取りを中止", key=f"{prefix}_cancel_reading", icon=":material/cancel:")
        progress = _Progress(st.empty(), budget)
        for index, f in pending:
            try:
                outcomes[index] = extract_once(
                    cache, f.name, f.getvalue(), password=password, budget=budget, on_tick=progress
                )
            except AttachmentError as exc:
                outcomes[index] = exc
    slot.empty()
    ss[reading_key] = []
    return outcomes


def password_field(prefix: str) -> None:
    """The PDF password field, shown once an attached PDF asked for one (never stored or logged)."""
    key = f"{prefix}_pdf_password"
    if st.session_state.get(f"{prefix}_pdf_password_needed") or st.session_state.get(key):
        st.text_input(
            "PDFのパスワード",
            type="password",
            key=key,
            help="パスワード付きの PDF を開くためだけに使います。保存もログへの記録もしません。入力後、もう一度送信してください。",
        )
