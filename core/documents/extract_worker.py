"""The extraction subprocess: `python -m core.documents.extract_worker` (bounded extraction).

Reads one request from stdin (a JSON header line, then the file's bytes), lowers its own address-space
and CPU limits first, extracts with core.documents.attachments, and writes JSON lines to stdout: progress
`{"progress": [done, total]}` while PDF pages are read, then one result, `{"ok": true, "document":
{...}}` or `{"ok": false, "code": ..., "details": {...}}`. It never writes a file (RLIMIT_FSIZE 0). A
bomb that slips past every check runs out of memory here, not in the app process.
"""

from __future__ import annotations

import json
import resource
import sys
from typing import Any, BinaryIO

from core.documents.attachments import AttachmentError, AttachmentLimits, extract_text_from_document


def _limit(kind: int, value: int) -> None:
    """Lower a resource limit (never above the hard limit the parent already has)."""
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, hard))


def _write(out: BinaryIO, payload: dict[str, Any]) -> None:
    out.write(json.dumps(payload, ensure_ascii=False).encode() + b"\n")
    out.flush()


def run(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve one request (see the module docstring); the exit status is 0 whenever a result was written."""
    header = json.loads(stdin.readline() or b"{}")
    _limit(resource.RLIMIT_AS, int(header.get("memory_bytes") or 1024**3))
    _limit(resource.RLIMIT_CPU, int(header.get("cpu_seconds") or 60))
    _limit(resource.RLIMIT_FSIZE, 0)
    data = stdin.read()
    limits = AttachmentLimits(**header.get("limits") or {})

    def progress(done: int, total: int) -> None:
        _write(stdout, {"progress": [done, total]})

    try:
        document = extract_text_from_document(
            str(header.get("filename") or ""),
            data,
            limits=limits,
            password=header.get("password") or None,
            progress=progress,
        )
    except AttachmentError as exc:
        _write(stdout, {"ok": False, "code": exc.code, "details": exc.details})
        return 0
    except MemoryError:
        del data
        _write(stdout, {"ok": False, "code": "memory", "details": {}})
        return 0
    _write(stdout, {"ok": True, "document": document.to_dict()})
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.stdin.buffer, sys.stdout.buffer))
