"""core.documents.attachments on real files generated here (spec 00 添付ファイル処理)."""

from __future__ import annotations

import io
import zipfile

import docx
import pytest
from pypdf import PdfReader, PdfWriter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from core.documents.attachments import (
    MAX_FILE_BYTES,
    AttachmentError,
    AttachmentLimits,
    extract_text_from_document,
)
from core.samples.knowledge.build_samples import build_pdf


def japanese_pdf(lines=("第1条（目的）", "本契約は業務委託について定める。")) -> bytes:
    return build_pdf(list(lines))


def encrypted(pdf: bytes, user_password: str) -> bytes:
    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(pdf)).pages:
        writer.add_page(page)
    writer.encrypt(user_password=user_password, owner_password="owner-secret")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def docx_with_table() -> bytes:
    document = docx.Document()
    document.add_paragraph("第4条（委託料）")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "区分", "金額"
    table.cell(1, 0).text, table.cell(1, 1).text = "月額", "80万円"
    document.add_paragraph("第5条（再委託）")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def code_of(filename: str, data: bytes, **kw) -> str:
    with pytest.raises(AttachmentError) as info:
        extract_text_from_document(filename, data, **kw)
    assert info.value.message and info.value.filename in info.value.message
    return info.value.code


def test_pdf_with_japanese_text():
    doc = extract_text_from_document("契約.pdf", japanese_pdf())
    assert doc.kind == "pdf" and doc.page_count == 1
    assert doc.paragraphs == ["第1条（目的）", "本契約は業務委託について定める。"]
    assert doc.summary()["paragraphs"] == 2 and doc.warnings == []


def test_docx_paragraphs_and_table_cells_in_order():
    doc = extract_text_from_document("a.docx", docx_with_table())
    assert doc.paragraphs == ["第4条（委託料）", "区分 | 金額", "月額 | 80万円", "第5条（再委託）"]
    assert doc.page_count is None


@pytest.mark.parametrize(
    "encoding,expected", [("cp932", "cp932"), ("utf-8", "utf-8"), ("utf-8-sig", "utf-8")]
)
def test_text_encodings(encoding, expected):
    data = "第8条（秘密保持）\r\n\r\n前項の義務は、本契約終了後３年間存続する。\r\n".encode(encoding)
    doc = extract_text_from_document("memo.txt", data)
    assert doc.paragraphs == ["第8条（秘密保持）", "前項の義務は、本契約終了後３年間存続する。"]
    assert doc.encoding == expected
    assert bool(doc.warnings) == (expected != "utf-8")


def test_markdown_is_text():
    doc = extract_text_from_document("notes.MD", "# 見出し\n本文".encode())
    assert doc.kind == "md" and doc.paragraphs == ["# 見出し", "本文"]


def test_pdf_with_user_password_is_encrypted():
    # issue #15: a PDF that needs a user password asks for it (the code names the password field)
    assert code_of("secret.pdf", encrypted(japanese_pdf(), "pw")) == "pdf_password"


def test_pdf_with_empty_user_password_is_readable():
    doc = extract_text_from_document("restricted.pdf", encrypted(japanese_pdf(), ""))
    assert doc.paragraphs[0] == "第1条（目的）"


def test_truncated_pdf_is_corrupt():
    data = japanese_pdf()
    assert code_of("cut.pdf", data[: len(data) // 3]) == "corrupt"


def test_pdf_that_is_not_a_pdf_is_corrupt():
    assert code_of("fake.pdf", b"hello, not a pdf") == "corrupt"


def test_docx_that_is_not_a_zip_is_corrupt():
    assert code_of("broken.docx", b"this is plain text, not a zip") == "corrupt"


def test_zip_that_is_not_a_docx_is_corrupt():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "x")
    assert code_of("fake.docx", buf.getvalue()) == "corrupt"


def test_encrypted_office_file_is_encrypted():
    assert code_of("locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600) == "encrypted"


def test_empty_files():
    assert code_of("empty.pdf", b"") == "empty"
    assert code_of("blank.txt", b"\r\n  \n") == "empty"
    document = docx.Document()
    buf = io.BytesIO()
    document.save(buf)
    assert code_of("blank.docx", buf.getvalue()) == "no_text"


def test_image_only_pdf():
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf)
    pdf.rect(50, 50, 200, 200, fill=1)
    pdf.save()
    assert code_of("scan.pdf", buf.getvalue()) == "image_only"


def test_pdf_with_some_blank_pages_warns():
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf)
    pdf.showPage()  # blank page 1
    pdfmetrics.registerFont(UnicodeCIDFont("HeiseiMin-W3"))
    pdf.setFont("HeiseiMin-W3", 12)
    pdf.drawString(50, 700, "第2条（業務内容）")
    pdf.save()
    doc = extract_text_from_document("mixed.pdf", buf.getvalue())
    assert doc.page_count == 2 and doc.paragraphs == ["第2条（業務内容）"]
    assert "1 ページ目" in doc.warnings[0]


def test_over_limit_file_size():
    assert code_of("big.txt", b"a" * (MAX_FILE_BYTES + 1)) == "too_large"


def test_page_and_character_limits():
    pdf = build_pdf([f"第{i}条" for i in range(1, 200)])  # several pages
    assert code_of("long.pdf", pdf, limits=AttachmentLimits(max_pages=1)) == "too_many_pages"
    assert (
        code_of("long.txt", ("あ" * 50).encode(), limits=AttachmentLimits(max_chars=10)) == "too_many_chars"
    )


def test_unsupported_and_legacy_formats():
    assert code_of("photo.png", b"\x89PNG....") == "unsupported"
    assert code_of("old.doc", b"\xd0\xcf\x11\xe0") == "legacy_doc"
    assert code_of("noext", b"abc") == "unsupported"


def test_binary_text_file_is_an_encoding_error():
    assert code_of("data.txt", b"\x00\x01\x02binary") == "encoding"


def test_filename_path_parts_are_dropped():
    doc = extract_text_from_document("../../etc/memo.txt", "本文".encode())
    assert doc.filename == "memo.txt"
