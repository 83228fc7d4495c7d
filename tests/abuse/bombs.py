"""Hostile attachments, generated at test time (issue #15): zip-bomb DOCX, whitespace DOCX, PDF stream bomb.

Inflating a gigabyte is cheap to *describe*: deflate a block once with a full flush (which makes the
compressed bytes self-contained and byte-aligned), repeat those bytes, and finish the stream. A DOCX
built this way is a few MB on disk and about 1 GB of XML inside, like the one in the issue; the
zip is written by hand because zipfile cannot store pre-compressed data.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import docx

_BLOCK = 4 * 1024 * 1024
_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _deflate_repeated(prefix: bytes, block: bytes, repeats: int, suffix: bytes, *, wbits: int) -> bytes:
    """A deflate stream of prefix + block * repeats + suffix, built from one compression of `block`."""
    head = zlib.compressobj(9, zlib.DEFLATED, wbits)
    start = head.compress(prefix) + head.flush(zlib.Z_FULL_FLUSH)
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    unit = body.compress(block) + body.flush(zlib.Z_FULL_FLUSH)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    end = tail.compress(suffix) + tail.flush(zlib.Z_FINISH)
    return start + unit * repeats + end


def _crc_repeated(prefix: bytes, block: bytes, repeats: int, suffix: bytes) -> int:
    crc = zlib.crc32(prefix)
    for _ in range(repeats):
        crc = zlib.crc32(block, crc)
    return zlib.crc32(suffix, crc)


def _zip(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of (name, raw deflate data, crc32, uncompressed size) members."""
    out, central = io.BytesIO(), io.BytesIO()
    for name, data, crc, size in members:
        encoded = name.encode()
        offset = out.tell()
        out.write(
            struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size, len(encoded), 0)
        )
        out.write(encoded + data)
        central.write(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                8,
                0,
                0x21,
                crc,
                len(data),
                size,
                len(encoded),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
        )
        central.write(encoded)
    directory = central.getvalue()
    start = out.tell()
    out.write(directory)
    out.write(
        struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(directory), start, 0)
    )
    return out.getvalue()


def _docx_with_document_xml(prefix: bytes, block: bytes, repeats: int, suffix: bytes) -> bytes:
    """A real python-docx document whose word/document.xml is prefix + block * repeats + suffix."""
    buf = io.BytesIO()
    docx.Document().save(buf)
    members = []
    with zipfile.ZipFile(buf) as source:
        for info in source.infolist():
            if info.filename == "word/document.xml":
                data = _deflate_repeated(prefix, block, repeats, suffix, wbits=-15)
                size = len(prefix) + len(block) * repeats + len(suffix)
                members.append((info.filename, data, _crc_repeated(prefix, block, repeats, suffix), size))
            else:
                raw = source.read(info)
                packer = zlib.compressobj(9, zlib.DEFLATED, -15)
                members.append(
                    (info.filename, packer.compress(raw) + packer.flush(), zlib.crc32(raw), len(raw))
                )
    return _zip(members)


def bomb_docx(expanded_bytes: int = 1 << 30) -> bytes:
    """A zip bomb disguised as DOCX: about `expanded_bytes` of paragraphs inside (the issue's 3 MB / 1 GB)."""
    paragraph = "<w:p><w:r><w:t>爆</w:t></w:r></w:p>".encode()
    block = paragraph * (_BLOCK // len(paragraph))
    prefix = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {_W}><w:body>'.encode()
    return _docx_with_document_xml(
        prefix, block, max(expanded_bytes // len(block), 1), b"</w:body></w:document>"
    )


def whitespace_docx(expanded_bytes: int = 1 << 30) -> bytes:
    """A DOCX whose document holds one text node of about `expanded_bytes` spaces (the issue's 1 MB / 1 GB)."""
    prefix = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {_W}><w:body>'
        '<w:p><w:r><w:t xml:space="preserve">'
    ).encode()
    block = b" " * _BLOCK
    return _docx_with_document_xml(
        prefix, block, max(expanded_bytes // _BLOCK, 1), b"</w:t></w:r></w:p></w:body></w:document>"
    )


def many_elements_docx(elements: int = 3_000_000) -> bytes:
    """A DOCX under every size limit whose XML holds millions of tiny elements (a parser-memory bomb)."""
    unit = b"<w:p/>"
    block = unit * (256 * 1024)
    prefix = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {_W}><w:body>'.encode()
    return _docx_with_document_xml(prefix, block, max(elements // (256 * 1024), 1), b"</w:body></w:document>")


def bomb_pdf(expanded_bytes: int = 1 << 30, pages: int = 1) -> bytes:
    """A PDF whose one content stream (shared by `pages` pages) inflates to about `expanded_bytes`."""
    prefix = b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n"
    block = b" " * _BLOCK
    repeats = max(expanded_bytes // _BLOCK, 1)
    stream = _deflate_repeated(prefix, block, repeats, b"", wbits=-15)
    adler = zlib.adler32(prefix)
    for _ in range(repeats):
        adler = zlib.adler32(block, adler)
    stream = b"\x78\xda" + stream + struct.pack(">I", adler)
    kids = " ".join(f"{5 + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    objects += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 3 0 R >> >> >>"
    ] * pages
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()
