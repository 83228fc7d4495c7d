"""The launcher (`python -m pages.ui.shell.launch`, what `make run` starts): the modules it imports ahead of the
first script run are the ones the shell and the home page import, and it waits for the server before it does.
The browser tests start the app through it (tests/e2e/conftest.py)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from pages.ui.shell import launch

ROOT = Path(__file__).resolve().parents[2]


def test_imported_by_names_top_level_modules_not_attributes(tmp_path: Path) -> None:
    script = tmp_path / "page.py"
    script.write_text(
        "import json\n"
        "import xml.dom.minidom\n"
        "from pages.ui.shell import render, state\n"
        "from pages.ui.shell.nav import HOME\n"
        "from core.settings import provider_label\n"
        "from . import sibling\n"
        "def later():\n"
        "    import csv\n",
        encoding="utf-8",
    )
    assert launch.imported_by(script) == [
        "json",
        "xml.dom.minidom",
        "pages.ui.shell",
        "pages.ui.shell.render",
        "pages.ui.shell.state",
        "pages.ui.shell.nav",
        "core.settings",
    ]


def test_first_run_modules_follow_the_shell_and_the_home_page() -> None:
    modules = launch.first_run_modules()
    assert launch.APP == ROOT / "streamlit_app.py" and launch.HOME == ROOT / "pages" / "home.py"
    for name in ("core.services", "pages.ui.shell.auth", "pages.ui.shell.state", "pages.ui.shell.render"):
        assert name in modules
    assert modules[-len(launch.STREAMLIT_FIRST_RUN) :] == list(launch.STREAMLIT_FIRST_RUN)
    assert len(modules) == len(set(modules))


def test_warm_imports_every_first_run_module_once_the_server_listens() -> None:
    # a fresh interpreter, so that what warm() imports is not already loaded by other tests
    code = (
        "import sys\n"
        "from pages.ui.shell import launch\n"
        "assert 'numpy' not in sys.modules and 'pages.ui.shell.state' not in sys.modules\n"
        "launch._server_listening = lambda: True\n"
        "print(launch.warm(wait_s=1.0))\n"
        "print(sorted(m for m in launch.first_run_modules() if m not in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "[]"]


def test_warm_gives_up_quietly_when_no_server_starts(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=launch.__name__):
        assert launch.warm(wait_s=0.05) == []
    assert [r.getMessage() for r in caplog.records] == [
        "サーバーが 0 秒以内に起動しなかったため、事前の読み込みを省きました"
    ]


def test_warm_reports_a_module_that_fails_to_import(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(launch, "_server_listening", lambda: True)
    monkeypatch.setattr(launch, "first_run_modules", lambda: ["json", "katachi_no_such_module"])
    with caplog.at_level(logging.WARNING, logger=launch.__name__):
        assert launch.warm(wait_s=1.0) == ["katachi_no_such_module"]
    assert [r.getMessage() for r in caplog.records] == [
        "事前の読み込みに失敗しました: katachi_no_such_module"
    ]


def test_streamlit_args_run_the_shell_with_the_callers_options() -> None:
    assert launch.streamlit_args(["--server.port=8502", "--server.address=127.0.0.1"]) == [
        "run",
        str(ROOT / "streamlit_app.py"),
        "--server.port=8502",
        "--server.address=127.0.0.1",
    ]
