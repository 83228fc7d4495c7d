"""Japanese PDFs from Chromium's print-to-PDF and Word-like DOCX files yield no radicals (issue 12 item 1).

The Chromium fixture is made here: a Japanese font whose cmap maps each Kangxi radical and CJK Radicals
Supplement code point to the glyph of the ideograph it looks like (as Source Han / Noto CJK and the MS fonts
do), embedded in an HTML page printed with Playwright's page.pdf(). Chromium names each glyph by its lowest
code point in the PDF's ToUnicode map, so a plain extractor reads 「⺝額」 for 「月額」: the real-world defect.
"""

from __future__ import annotations

import base64
import io
import unicodedata
from pathlib import Path

import docx
import pytest
from pypdf import PdfReader

from core.documents.attachments import extract_text_from_document
from core.text.textnorm import KANGXI_RADICALS, RADICALS_SUPPLEMENT, has_radicals

CHROMIUM = "/usr/bin/chromium"
FONT = Path("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf")
TEXT = (
    "第4条（委託料）月額80万円を支払う。長期の取引、食品、西日本、青色の示談書、竹、民法、"
    "母、麦、黄色、歯、竜、亀、鬼、見る、言う、金、門、雨、馬、魚、鳥"
)


def _shared_glyph_font() -> bytes:
    ttlib = pytest.importorskip("fontTools.ttLib")
    if not FONT.exists():
        pytest.skip(f"{FONT} not found: install Debian's fonts-ipafont-gothic")
    font = ttlib.TTFont(str(FONT))
    pairs = dict(RADICALS_SUPPLEMENT)
    pairs.update(
        {
            cp: ord(unicodedata.normalize("NFKC", chr(cp)))
            for cp in KANGXI_RADICALS
            if unicodedata.name(chr(cp), None)
        }
    )
    for table in font["cmap"].tables:
        if table.isUnicode():
            for radical, ideograph in pairs.items():
                if ideograph in table.cmap and (table.format == 12 or radical < 0x10000):
                    table.cmap[radical] = table.cmap[ideograph]
    buf = io.BytesIO()
    font.save(buf)
    return buf.getvalue()


def chromium_pdf() -> bytes:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    font = base64.b64encode(_shared_glyph_font()).decode()
    html = (
        "<html><head><meta charset='utf-8'><style>"
        f"@font-face {{font-family: Shared; src: url(data:font/ttf;base64,{font});}}"
        "body {font-family: Shared}</style></head>"
        f"<body><h1>業務委託契約書</h1><p>{TEXT}</p></body></html>"
    )
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page()
            page.set_content(html)
            page.evaluate("document.fonts.ready")
            return page.pdf()
        finally:
            browser.close()


def word_like_docx() -> bytes:
    """A DOCX whose runs carry radicals, as Word keeps them when text is pasted from such a PDF."""
    document = docx.Document()
    document.add_paragraph("第4条（委託料）⽉額80万円を⽀払う。")
    document.add_paragraph("⻑期の取引、⻝品、⻄⽇本、⻘⾊の⺬談書")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "⽀払期⽇", "毎⽉末⽇"
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def test_chromium_print_to_pdf_yields_no_radicals():
    pdf = chromium_pdf()
    raw = "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    assert has_radicals(raw), "the fixture must reproduce the defect before the fix"
    doc = extract_text_from_document("chromium.pdf", pdf)
    text = "".join(doc.paragraphs)
    assert not has_radicals(text)
    assert "月額80万円を支払う" in text and "長期の取引、食品、西日本、青色の示談書" in text
    assert "（委託料）" in text  # only the radicals changed: full-width brackets kept as written


def test_word_like_docx_yields_no_radicals():
    doc = extract_text_from_document("契約.docx", word_like_docx())
    assert doc.paragraphs == [
        "第4条（委託料）月額80万円を支払う。",
        "長期の取引、食品、西日本、青色の示談書",
        "支払期日 | 毎月末日",
    ]
    assert not has_radicals("".join(doc.paragraphs))
