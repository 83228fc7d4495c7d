"""Keep the newest turn of a chat in view: after a message is added, scroll to the start of the newest turn.

Every chat page calls `follow(flow)` once after drawing its history. When the flow's chat grew since the
last run, a fixed script scrolls the chat box (a fixed-height container) and then the page so that the
newest turn is visible: the whole turn when it fits, else from the newest question down. Nothing a model
wrote goes into the script; only the selector of the chat box and the number of messages. The script makes
its last passes once the app has finished its run (Streamlit may scroll to the bottom late on a busy server);
until then the page's root element carries data-chat-scroll="pending" (then "settled").
"""

from __future__ import annotations

import json

import streamlit as st

SEEN_KEY = "chat_scroll_seen"  # data key: {flow: number of chat items when the page was last drawn}
MARGIN_PX = 12  # space kept above the newest question
HEADER_PX = 64  # Streamlit's fixed header covers the top of the page
IDLE_WAIT_MS = 15_000  # the last passes wait for the app to finish its run, but no longer than this

_SCRIPT = """<script>
(() => {
  const scopeSelector = %(scope)s, margin = %(margin)d, header = %(header)d, nonce = %(nonce)d;
  const scrollable = (el) => {
    for (let node = el.parentElement; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (/(auto|scroll)/.test(style.overflowY) && node.scrollHeight > node.clientHeight + 1) return node;
    }
    return document.scrollingElement;
  };
  // Show first..last inside `box`: all of it when it fits (moving as little as possible), else from the
  // top of `first`.
  const reveal = (box, first, last) => {
    const r = box === document.scrollingElement ? {top: 0, bottom: window.innerHeight} : box.getBoundingClientRect();
    const pinned = document.querySelector('[data-testid="stBottom"]');  // the chat input pinned to the bottom
    const floor = pinned && pinned.offsetParent ? pinned.getBoundingClientRect().top : window.innerHeight;
    const viewTop = Math.max(r.top, header) + margin, viewBottom = Math.min(r.bottom, floor) - margin;
    const a = first.getBoundingClientRect().top, b = last.getBoundingClientRect().bottom;
    let delta = 0;
    if (b - a > viewBottom - viewTop || a < viewTop) delta = a - viewTop;
    else if (b > viewBottom) delta = b - viewBottom;
    if (Math.abs(delta) > 1) box.scrollTop += delta;
  };
  const run = () => {
    const scope = document.querySelector(scopeSelector);
    if (!scope) return;
    const messages = [...scope.querySelectorAll('[data-testid="stChatMessage"]')].filter((m) => m.offsetParent);
    if (!messages.length) return;
    const isUser = (m) => m.querySelector('[data-testid="stChatMessageAvatarUser"]');
    const last = messages[messages.length - 1];
    let first = last;
    for (let i = messages.length - 1; i >= 0; i--) { if (isUser(messages[i])) { first = messages[i]; break; } }
    const inner = scrollable(first);
    if (inner !== document.scrollingElement) reveal(scrollable(inner), inner, inner);  // the chat box in the page
    reveal(inner, first, last);  // then the newest turn in the chat box
  };
  // Streamlit lays the chat out over a few frames, and its own scroll to the bottom can come late: on a busy
  // server the run goes on after the first passes. So: a few passes while it draws, then wait until the app
  // is idle (at most IDLE_WAIT_MS) and make the last passes after that. While a script still has passes to
  // make, the root element's data-chat-scroll is "pending": the page may still move (a scroll closes an open
  // list box, so the browser tests wait for "settled").
  const root = document.documentElement, started = Date.now();
  const idle = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !app || app.dataset.testScriptState === 'notRunning' || Date.now() - started > %(idle_wait)d;
  };
  const pass = () => { try { run(); } catch (error) { /* the page changed under us: the next pass tries */ } };
  window.__chatScrollRuns = (window.__chatScrollRuns || 0) + 1;
  root.dataset.chatScroll = 'pending';
  [60, 250, 600].forEach((ms) => setTimeout(pass, ms));
  const afterIdle = () => {
    if (!idle()) { setTimeout(afterIdle, 100); return; }
    [0, 250, 600].forEach((ms, i, all) => setTimeout(() => {
      pass();
      if (i === all.length - 1 && --window.__chatScrollRuns <= 0) root.dataset.chatScroll = 'settled';
    }, ms));
  };
  setTimeout(afterIdle, 700);
  void nonce;
})();
</script>"""


def script(scope_selector: str, nonce: int) -> str:
    """The fixed script for one chat (`nonce` makes each run's element new, so the browser runs it again)."""
    return _SCRIPT % {
        "scope": json.dumps(scope_selector),
        "margin": MARGIN_PX,
        "header": HEADER_PX,
        "nonce": nonce,
        "idle_wait": IDLE_WAIT_MS,
    }


def grew(flow: str, count: int) -> bool:
    """Whether the flow's chat has more items than when the page was last drawn (and remember the count)."""
    seen: dict[str, int] = st.session_state.setdefault(SEEN_KEY, {})
    before = seen.get(flow)
    seen[flow] = count
    return count > 0 and (before is None or count > before)


def follow(flow: str, scope_selector: str = '[data-testid="stMainBlockContainer"]') -> None:
    """Scroll to the newest turn of `st.session_state.chat[flow]` when it grew since the last run.

    `scope_selector` names the element holding this chat's messages (a keyed container: `.st-key-<key>`).
    """
    count = len(st.session_state.chat.get(flow) or [])
    if grew(flow, count):
        st.html(script(scope_selector, count), unsafe_allow_javascript=True)
