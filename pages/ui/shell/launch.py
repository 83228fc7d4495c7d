"""Start the app: `python -m pages.ui.shell.launch [options of streamlit run]` (what `make run` does).

This is `streamlit run streamlit_app.py` in this process, with one addition. A process's first script run imports
the shell, the home page and what they import, and numpy and PIL (Streamlit's `image_to_url`, for the app's icon):
about 100 ms of work that a bare Streamlit app does not have, while the browser waits for its first paint. Before
that run, though, the browser spends half a second or more loading and starting the frontend, and the server is
idle. So once the server listens, a thread does those imports; the first script run finds them done
(tests/bench/cold_start.py measures it). The work is the same, only done while nobody waits. `streamlit run
streamlit_app.py` still works; its first paint after a start is just later.

The imports are read from the shell's and the home page's own import statements, so the list cannot drift from
them. A module that fails to import here is only logged: the script run imports it again and reports it there.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import logging
import sys
import threading
import time
from pathlib import Path

from streamlit.runtime import Runtime, RuntimeState
from streamlit.web import cli

ROOT = Path(__file__).resolve().parents[3]
APP = ROOT / "streamlit_app.py"
HOME = ROOT / "pages" / "home.py"
# Imported by Streamlit itself on the first script run: for any image (the icon and logo; `image_to_url`), and for
# the pages' `:material/...:` icons.
STREAMLIT_FIRST_RUN = (
    "numpy",
    "PIL.Image",
    "PIL.ImageFile",
    "PIL.PngImagePlugin",
    "streamlit.material_icon_names",
)
SERVER_WAIT_S = 60.0

log = logging.getLogger(__name__)


def imported_by(script: Path) -> list[str]:
    """The modules a script's top-level import statements name, in order (`from a import b` names `a` and, when b
    is a module, `a.b`; names that are not modules are left out)."""
    names: list[str] = []
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if _is_module(f"{node.module}.{alias.name}")
            ]
    return list(dict.fromkeys(names))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # the parent is a module, not a package: `name` is an attribute of it
        return False


def first_run_modules() -> list[str]:
    """What the process's first script run imports: the shell's modules, the home page's, and Streamlit's own."""
    return list(dict.fromkeys([*imported_by(APP), *imported_by(HOME), *STREAMLIT_FIRST_RUN]))


def _server_listening() -> bool:
    started = (RuntimeState.NO_SESSIONS_CONNECTED, RuntimeState.ONE_OR_MORE_SESSIONS_CONNECTED)
    return Runtime.exists() and Runtime.instance().state in started


def warm(wait_s: float = SERVER_WAIT_S) -> list[str]:
    """Wait until the server listens (its own start is not slowed down), then import the first run's modules.
    Returns those that failed to import (logged; never raised: the script run reports them)."""
    deadline = time.monotonic() + wait_s
    while not _server_listening():
        if time.monotonic() > deadline:
            log.warning("サーバーが %.0f 秒以内に起動しなかったため、事前の読み込みを省きました", wait_s)
            return []
        time.sleep(0.02)
    failed: list[str] = []
    for name in first_run_modules():
        try:
            importlib.import_module(name)
        except Exception:  # the script run imports it again and shows the error there
            log.warning("事前の読み込みに失敗しました: %s", name, exc_info=True)
            failed.append(name)
    return failed


def streamlit_args(options: list[str]) -> list[str]:
    """The command line of `streamlit run` for the app, with the caller's options."""
    return ["run", str(APP), *options]


def main(options: list[str] | None = None) -> None:
    threading.Thread(target=warm, name="katachi-warm-imports", daemon=True).start()
    cli.main(args=streamlit_args(sys.argv[1:] if options is None else options), prog_name="streamlit")


if __name__ == "__main__":
    main()
