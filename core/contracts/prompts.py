"""Load prompts/* by name and fill `{NAME}` placeholders; unknown names and paths are refused."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

PROMPT_DIR = Path(__file__).resolve().parents[2] / "prompts"
_NAME = re.compile(r"^[A-Za-z0-9_\-]+(\.(md|txt))?$")


class UnknownPromptError(KeyError):
    """A prompt name that is malformed or has no file under prompts/."""


@cache
def load_prompt(name: str) -> str:
    """The text of `prompts/{name}` (`.md` or `.txt` may be left off). No path traversal."""
    if not _NAME.fullmatch(name):
        raise UnknownPromptError(name)
    candidates = [name] if "." in name else [f"{name}.md", f"{name}.txt"]
    for candidate in candidates:
        path = PROMPT_DIR / candidate
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise UnknownPromptError(name)


def fill(template: str, **values: str) -> str:
    """Replace `{KEY}` for each given key; other braces (JSON examples) are left alone."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template
