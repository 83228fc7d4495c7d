"""A file over the app's size bound, through every upload path (the knowledge uploader and the chat input's ＋,
the debug page's two JSONL uploaders, the review import), is refused with a Japanese sentence; Streamlit's own
bound (config.toml) sits above ours so such a file reaches our check instead of Streamlit's English line."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.documents.attachments import MAX_FILE_BYTES
from core.documents.uploads import MAX_UPLOAD_BYTES, TRANSPORT_MAX_MB
from core.flows.review_chat.records import MAX_IMPORT_BYTES
from core.llm.replay import ReplayClient
from pages.ui.knowledge import attachments
from tests.debug_logs import sample_log
from tests.pages.conftest import make_app
from tests.pages.test_debug_rerun_page import open_tab
from tests.pages.test_knowledge_page import valid_turn

ROOT = Path(__file__).resolve().parents[2]
KNOWLEDGE = "pages/knowledge.py"
BIG = b"%PDF-1.7\n" + b"0" * (21 * 1024 * 1024)  # 21 MB: over our 20 MB bound, under Streamlit's
TOO_LARGE_PDF = "ファイルが大きすぎます（big.pdf: 21.0 MB）。上限は 20.0 MB です。必要な部分だけのファイルにしてください。"
LOG_TOO_LARGE = (
    "ログを読み込めませんでした。次の点を確認してください。\n\n- ファイルが大きすぎます（上限 20 MB）。"
)


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file over the bound must be refused before it is hashed or handed to the extraction worker."""

    def refuse(*_args: object, **_kw: object) -> None:
        raise AssertionError("an over-limit file reached the extraction worker")

    monkeypatch.setattr(attachments, "extract_once", refuse)


def test_streamlit_transport_bound_is_above_every_app_bound() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == TRANSPORT_MAX_MB == 40
    transport = TRANSPORT_MAX_MB * 1024 * 1024
    assert MAX_FILE_BYTES == MAX_UPLOAD_BYTES == 20 * 1024 * 1024 and MAX_IMPORT_BYTES == 2_000_000
    assert all(bound < transport for bound in (MAX_FILE_BYTES, MAX_UPLOAD_BYTES, MAX_IMPORT_BYTES))
    assert len(BIG) < transport


def test_the_chat_input_takes_no_files_and_says_where_to_attach(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, client=ReplayClient([]), page=KNOWLEDGE)
    widget = at.chat_input(key="knowledge_input")
    assert widget.placeholder == "事例や回答を入力（ファイルは上の「ファイルを添付」から）"
    assert not widget.proto.accept_file  # one way to attach: the uploader


def test_an_uploaded_file_over_the_bound_with_text_sends_the_text_and_names_the_file(
    tmp_path, no_extraction
) -> None:  # type: ignore[no-untyped-def]
    client = ReplayClient([valid_turn()])
    at = make_app(tmp_path, client=client, page=KNOWLEDGE)
    at.file_uploader(key="knowledge_uploader_0").upload("big.pdf", BIG, "application/pdf")
    run(at)
    at.chat_input(key="knowledge_input").set_value("契約の相談です")
    run(at)
    assert client.requests[0].messages[-1]["content"] == "ユーザー指示:\n契約の相談です"
    user = at.session_state["chat"]["knowledge"][0]
    assert user["meta"]["attachment_errors"] == [TOO_LARGE_PDF]
    assert f"添付できなかったファイル: {TOO_LARGE_PDF}" in [w.value for w in at.warning]


def test_knowledge_uploader_file_over_the_bound_is_a_japanese_error(tmp_path, no_extraction) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, client=ReplayClient([]), page=KNOWLEDGE)
    assert "1ファイルは 20 MB まで読み込めます。大きすぎるファイルは読み込まれません。" in [
        c.value for c in at.caption
    ]
    at.file_uploader(key="knowledge_uploader_0").upload("big.pdf", BIG, "application/pdf")
    run(at)
    assert [e.value for e in at.error] == [TOO_LARGE_PDF]


def test_debug_import_box_file_over_the_bound_is_a_japanese_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page="pages/debug_log.py")
    at.file_uploader(key="debug_import_file").upload("katachi-debug.jsonl", b"{}\n" * (7 * 1024 * 1024))
    run(at)
    assert [e.value for e in at.error] == [LOG_TOO_LARGE]
    assert "debug_imported" not in at.session_state


def test_the_debug_page_has_one_log_uploader_and_replay_uses_the_log_shown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The replay tab reads the log the page shows (a file read at the top of the page, bounded as tested
    above), with no uploader of its own."""
    at = make_app(tmp_path, page="pages/debug_log.py")
    at.session_state["debug_logs"] = sample_log()
    open_tab(at, "リプレイ")
    assert [u.key for u in at.file_uploader] == ["debug_import_file"]
    assert (
        "対象は、このページに表示中のログです（別のログをリプレイするには、ページ上部の"
        "「エクスポートしたログを読み込む（JSONL）」で読み込みます）。" in [c.value for c in at.caption]
    )


def test_review_import_over_its_bound_is_a_japanese_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page="pages/review_chat.py")
    assert "講評JSONファイルは 2 MB まで読み込めます。大きすぎるファイルは読み込まれません。" in [
        c.value for c in at.caption
    ]
    at.file_uploader(key="review_upload").upload(
        "big.json", b" " * (MAX_IMPORT_BYTES + 1), "application/json"
    )
    run(at)
    at.button(key="review_import").click()
    run(at)
    assert [e.value for e in at.error] == [
        "このファイルは読み込めませんでした。次の点を直してください。\n\n- ファイルが大きすぎます（上限 2 MB）。"
    ]
    assert len(at.selectbox(key="review_picker").options) == 1  # the sample only
