"""What an attachment expands to, checked before and while it is parsed (bounded extraction).

The upload limit only bounds the bytes on disk; a 3 MB DOCX can hold 1 GB of XML and a small PDF a
stream that inflates to gigabytes. These checks read the zip directory before anything is inflated,
stream every XML part through expat counting elements and text (no tree is built), and bound what
pypdf may decode. Each check raises `BoundExceeded(code, details)`; core.documents.attachments turns it into an
`AttachmentError` with the Japanese message of that code.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from xml.parsers import expat

if TYPE_CHECKING:
    from pypdf import PageObject


_READ_CHUNK = 64 * 1024
# Below this size a member's compression ratio says nothing (a short run of spaces compresses 100:1).
RATIO_MIN_BYTES = 1024 * 1024


class BoundExceeded(Exception):
    """A limit on what an attachment expands to; `code` is a key of core.documents.attachments.ERROR_MESSAGES."""

    def __init__(self, code: str, **details: Any):
        self.code = code
        self.details = details
        super().__init__(code)


@dataclass(frozen=True)
class ZipBounds:
    max_uncompressed: int
    max_ratio: int
    max_members: int


@dataclass(frozen=True)
class XmlBounds:
    max_elements: int
    max_text_node: int
    max_text_total: int


def check_zip_directory(archive: zipfile.ZipFile, bounds: ZipBounds) -> None:
    """Refuse an archive from its central directory alone: too many members, too large, or a bomb's ratio.

    Python's zipfile never returns more than a member's declared `file_size` (it checks the CRC), so
    the declared sizes are a true upper bound of what reading can produce.
    """
    members = archive.infolist()
    if len(members) > bounds.max_members:
        raise BoundExceeded("too_many_parts", count=len(members), limit=bounds.max_members)
    total = 0
    for info in members:
        total += info.file_size
        if total > bounds.max_uncompressed:
            raise BoundExceeded("expands_too_large", size=total, limit=bounds.max_uncompressed)
        if info.file_size >= RATIO_MIN_BYTES:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > bounds.max_ratio:
                raise BoundExceeded("compression_ratio", ratio=ratio, limit=bounds.max_ratio)


def _is_xml(name: str) -> bool:
    return name.endswith((".xml", ".rels"))


class _XmlCounter:
    """Expat handlers counting elements and text; refuses a DOCTYPE (entity expansion) outright."""

    def __init__(self, bounds: XmlBounds):
        self.bounds = bounds
        self.elements = 0
        self.text_total = 0
        self.text_run = 0  # characters of the current text node (expat may deliver it in pieces)

    def start(self, _name: str, _attrs: Any) -> None:
        self.elements += 1
        self.text_run = 0
        if self.elements > self.bounds.max_elements:
            raise BoundExceeded("too_many_elements", count=self.elements, limit=self.bounds.max_elements)

    def end(self, _name: str) -> None:
        self.text_run = 0

    def text(self, data: str) -> None:
        self.text_run += len(data)
        self.text_total += len(data)
        if self.text_run > self.bounds.max_text_node:
            raise BoundExceeded("text_node_too_long", chars=self.text_run, limit=self.bounds.max_text_node)
        if self.text_total > self.bounds.max_text_total:
            raise BoundExceeded("xml_text_too_long", chars=self.text_total, limit=self.bounds.max_text_total)

    def doctype(self, *_args: Any) -> None:
        raise BoundExceeded("unsafe_xml")


def check_xml_parts(archive: zipfile.ZipFile, bounds: XmlBounds) -> None:
    """Stream every XML part through expat: element and text counts over all parts, no DTDs.

    Malformed XML is left to the real parser to report (as a corrupt file); only limits raise here.
    """
    counter = _XmlCounter(bounds)
    for info in archive.infolist():
        if not _is_xml(info.filename):
            continue
        parser = expat.ParserCreate()
        parser.StartElementHandler = counter.start
        parser.EndElementHandler = counter.end
        parser.CharacterDataHandler = counter.text
        parser.StartDoctypeDeclHandler = counter.doctype
        parser.EntityDeclHandler = counter.doctype
        try:
            with archive.open(info) as member:
                while chunk := member.read(_READ_CHUNK):
                    parser.Parse(chunk, False)
                parser.Parse(b"", True)
        except expat.ExpatError:
            continue  # not well-formed: python-docx will say the file is corrupt


@contextmanager
def pdf_decoding_bounds(max_stream_bytes: int) -> Iterator[None]:
    """pypdf's own decompression limits, lowered to `max_stream_bytes` per stream for this block."""
    from pypdf import apply_configuration  # noqa: PLC0415 - pypdf takes ~1 s to import; pages load without it

    with apply_configuration(
        zlib_maximum_output_length=max_stream_bytes,
        lzw_maximum_output_length=max_stream_bytes,
        run_length_maximum_output_length=max_stream_bytes,
        array_based_stream_maximum_output_length=max_stream_bytes,
        brotli_maximum_output_length=max_stream_bytes,
        jbig2_maximum_output_length=max_stream_bytes,
        image_maximum_buffer_size=max_stream_bytes,
        stream_decoding_work_maximum_length=max_stream_bytes * 4,
    ):
        yield


def page_content_bytes(page: PageObject) -> int:
    """Decoded bytes of a page's content streams (pypdf caches the decoded data for text extraction)."""
    from pypdf.generic import ArrayObject, StreamObject  # noqa: PLC0415 - see pdf_decoding_bounds

    contents = page.get("/Contents")
    if contents is None:
        return 0
    resolved = contents.get_object()
    streams = resolved if isinstance(resolved, ArrayObject) else [resolved]
    total = 0
    for item in streams:
        stream = item.get_object()
        if isinstance(stream, StreamObject):
            total += len(stream.get_data())
    return total
