"""Cold start to first paint: Katachi's home page beside a bare two-page Streamlit app, in Chromium.

Each round starts a fresh process (the bare app with `streamlit run`, Katachi as `make run` does; the demo
model, an empty data dir), opens the root URL in a new browser context and stops the clock when the page's first heading is visible and the script has finished
(`[data-testid="stApp"][data-test-script-state="notRunning"]`). Rounds alternate between the two apps so a
drift of the machine falls on both. Run: .venv/bin/python tests/bench/cold_start.py [rounds]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from playwright.sync_api import Browser, sync_playwright

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
BARE_APP = textwrap.dedent(
    """
    import streamlit as st

    def home():
        st.title("ホーム")
        st.write("二つのページがある、何もしない Streamlit アプリです。")

    def other():
        st.title("もう一つのページ")

    st.navigation([st.Page(home, title="ホーム"), st.Page(other, title="別のページ")]).run()
    """
)


BARE = ["-m", "streamlit", "run", "app.py"]
KATACHI = [
    "-m",
    "pages.ui.shell.launch",
]  # as `make run` starts it: `streamlit run streamlit_app.py`, see its docstring


def start(command: list[str], cwd: Path, data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(data_dir),
        "APP_DATA_DIR": str(data_dir),
        "KATACHI_PROVIDER": "demo",
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }
    cmd = [sys.executable, *command, "--server.headless=true"]
    cmd += [f"--server.port={port}", "--server.address=127.0.0.1", "--server.fileWatcherType=none"]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, f"http://127.0.0.1:{port}"


def wait_health(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not start")


def one_round(browser: Browser, command: list[str], cwd: Path) -> tuple[float, float]:
    """(seconds to a healthy server, seconds to first paint), both from the process start."""
    with tempfile.TemporaryDirectory(prefix="katachi-cold-") as tmp:
        started = time.perf_counter()
        proc, url = start(command, cwd, Path(tmp))
        try:
            wait_health(url)
            healthy = time.perf_counter() - started
            context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="ja-JP")
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("h1", state="visible", timeout=60_000)
            page.wait_for_selector(IDLE, timeout=60_000)
            painted = time.perf_counter() - started
            context.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return healthy, painted


def main(rounds: int = 5) -> None:
    with tempfile.TemporaryDirectory(prefix="bare-app-") as bare_dir:
        (Path(bare_dir) / "app.py").write_text(BARE_APP, encoding="utf-8")
        results: dict[str, list[tuple[float, float]]] = {"bare": [], "katachi": []}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            one_round(browser, BARE, Path(bare_dir))  # warm the OS file cache for both
            one_round(browser, KATACHI, ROOT)
            for _ in range(rounds):
                results["bare"].append(one_round(browser, BARE, Path(bare_dir)))
                results["katachi"].append(one_round(browser, KATACHI, ROOT))
            browser.close()
    med = {
        k: (statistics.median(h for h, _ in v), statistics.median(f for _, f in v))
        for k, v in results.items()
    }
    print(f"| cold start, median of {rounds} rounds | server healthy s | first paint s |")
    print("|---|---:|---:|")
    print(f"| bare two-page Streamlit app | {med['bare'][0]:.2f} | {med['bare'][1]:.2f} |")
    print(f"| Katachi (home, demo model) | {med['katachi'][0]:.2f} | {med['katachi'][1]:.2f} |")
    print(
        f"| ratio (target <= 1.2) | {med['katachi'][0] / med['bare'][0]:.2f} | {med['katachi'][1] / med['bare'][1]:.2f} |"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
