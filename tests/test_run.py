"""`python -m tests.run`, what `make test` runs: pytest's verdict is the exit code, whatever the teardown does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# An object whose destructor dereferences a null pointer when the interpreter tears the module down, as a native
# extension's did after a green CI run (「2626 passed」, then SIGSEGV).
CRASHES_IN_TEARDOWN = """
import ctypes

class CrashesInTeardown:
    def __del__(self, string_at=ctypes.string_at):
        string_at(0)

KEEP = CrashesInTeardown()
"""


def run(tmp_path: Path, body: str, *, module: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_demo.py").write_text(textwrap.dedent(body), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", module, "-q", "-p", "no:cacheprovider", "test_demo.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_plain_pytest_fails_a_green_run_that_crashes_in_the_teardown(tmp_path: Path) -> None:
    done = run(tmp_path, CRASHES_IN_TEARDOWN + "\ndef test_ok():\n    assert True\n", module="pytest")
    assert "1 passed" in done.stdout
    assert done.returncode == -signal.SIGSEGV


def test_the_runner_exits_with_the_verdict_of_a_green_run(tmp_path: Path) -> None:
    done = run(tmp_path, CRASHES_IN_TEARDOWN + "\ndef test_ok():\n    assert True\n", module="tests.run")
    assert "1 passed" in done.stdout
    assert done.returncode == 0


def test_a_failed_test_still_fails_the_run(tmp_path: Path) -> None:
    done = run(tmp_path, CRASHES_IN_TEARDOWN + "\ndef test_bad():\n    assert 1 == 2\n", module="tests.run")
    assert "1 failed" in done.stdout
    assert done.returncode == 1


def test_no_tests_is_pytests_own_status(tmp_path: Path) -> None:
    done = run(tmp_path, "X = 1\n", module="tests.run")
    assert "no tests ran" in done.stdout
    assert done.returncode == 5


def test_a_crash_while_the_tests_run_fails_the_run_with_its_stack(tmp_path: Path) -> None:
    body = "import ctypes\n\ndef test_crash():\n    ctypes.string_at(0)\n"
    done = run(tmp_path, body, module="tests.run")
    assert done.returncode == -signal.SIGSEGV
    assert "Fatal Python error: Segmentation fault" in done.stderr
    assert 'test_demo.py", line 4 in test_crash' in done.stderr


def test_the_atexit_callbacks_still_run(tmp_path: Path) -> None:
    body = f"""
import atexit
from pathlib import Path

atexit.register(lambda: Path({str(tmp_path / "ran")!r}).write_text("yes"))

def test_ok():
    assert True
"""
    done = run(tmp_path, body, module="tests.run")
    assert done.returncode == 0
    assert (tmp_path / "ran").read_text() == "yes"
