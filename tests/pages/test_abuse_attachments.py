"""pages/ui/knowledge/attachments.py in a running script (issue #15 item 1): a bomb is refused in Japanese and read
once (reruns hit the cache), and a PDF that needs a password asks for it and opens with it."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest


def script() -> None:
    import io  # noqa: PLC0415 - AppTest.from_function runs this body as its own script

    import streamlit as st  # noqa: PLC0415
    from pypdf import PdfReader, PdfWriter  # noqa: PLC0415

    from core.samples.knowledge.build_samples import build_pdf  # noqa: PLC0415
    from pages.ui.knowledge import attachments  # noqa: PLC0415
    from tests.abuse.bombs import bomb_docx  # noqa: PLC0415

    class Upload:
        def __init__(self, name: str, data: bytes):
            self.name, self.file_id, self._data = name, name, data

        def getvalue(self) -> bytes:
            return self._data

    if "test_files" not in st.session_state:
        writer = PdfWriter()
        for page in PdfReader(io.BytesIO(build_pdf(["第1条（目的）"]))).pages:
            writer.add_page(page)
        writer.encrypt(user_password="pw", owner_password="owner", algorithm="AES-256")
        locked = io.BytesIO()
        writer.write(locked)
        st.session_state["test_files"] = [
            Upload("bomb.docx", bomb_docx()),
            Upload("locked.pdf", locked.getvalue()),
        ]
    docs, errors = attachments.read_files(st.session_state["test_files"], "t")
    for doc in docs:
        st.success(f"{doc.filename}: {doc.paragraphs[0]}")
    for error in errors:
        st.error(error.message)
    attachments.password_field("t")


def test_bomb_refused_once_and_password_asked_for() -> None:
    at = AppTest.from_function(script, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    messages = [e.value for e in at.error]
    assert any("展開後のサイズが大きすぎます（bomb.docx" in m for m in messages)
    assert any("パスワードで保護された PDF です（locked.pdf" in m for m in messages)
    started = time.monotonic()
    at.run()  # an unrelated rerun: both outcomes come from the cache
    assert time.monotonic() - started < 1.0 and len(at.error) == 2
    at.text_input(key="t_pdf_password").input("pw").run()
    assert [s.value for s in at.success] == ["locked.pdf: 第1条（目的）"]
    assert len(at.error) == 1
