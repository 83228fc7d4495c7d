"""Browser tests: the app as `make run` starts it, on a free port with the demo model, driven by Playwright and
Debian's chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    if Path(CHROMIUM).exists():
        return
    skip = pytest.mark.skip(reason=f"{CHROMIUM} not found: install Debian's chromium to run browser tests")
    for item in items:
        if "e2e" in item.nodeid.split("::")[0]:
            item.add_marker(skip)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """The app as `make run` starts it (`python -m pages.ui.shell.launch`: `streamlit run streamlit_app.py`) with
    its own data dir: the demo model unless `env` says otherwise, on a free port unless `port` is given (a restart
    on the same port lets an open tab reconnect).

    Its secrets are `secrets` (TOML text) written to the data dir and passed with `--secrets.files`, never
    the repository's own `.streamlit/secrets.toml` (so a developer's `[auth]` or keys never reach a test).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        env: dict[str, str] | None = None,
        port: int | None = None,
        secrets: str = "",
    ):
        self.data_dir = data_dir
        self.port = port or free_port()
        secrets_file = data_dir / "secrets.toml"
        secrets_file.write_text(secrets, encoding="utf-8")
        self.url = f"http://127.0.0.1:{self.port}"
        clean = {
            k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENAI_")
        }
        clean.update(
            APP_DATA_DIR=str(data_dir), KATACHI_PROVIDER="demo", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false"
        )
        clean.update(env or {})
        env = clean
        self.log = open(data_dir / "streamlit.log", "a")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pages.ui.shell.launch",
                "--server.headless=true",
                f"--server.port={self.port}",
                "--server.address=127.0.0.1",
                "--server.fileWatcherType=none",
                f"--secrets.files={secrets_file}",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("streamlit did not start: " + (data_dir / "streamlit.log").read_text())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = AppServer(tmp_path_factory.mktemp("e2e-data"))
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def browser():  # type: ignore[no-untyped-def]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, app_url):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    context.close()
