"""Documents people hand in: attachment text extraction in a bounded subprocess, and upload bounds.

`attachments` turns PDF / DOCX / TXT / MD bytes into paragraphs (`pdf_reader`, `docx_reader`), within the
limits of `bounds`; `document` holds the limits, the errors and the extracted document; `extract` runs
the extraction once per file in a subprocess (`extract_worker`) with a time and memory budget;
`uploads` and `json_bounds` bound what an upload may be before anything reads it.
"""
