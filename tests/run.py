"""`python -m tests.run [pytest args]`: pytest, whose verdict is the exit code (what `make test` runs).

After pytest has printed its report, CPython tears down the modules, and the native extensions the suite loads
(Chroma's Rust bindings with their own runtime threads, grpc, the embedder's C engine, greenlet) run their destructors
in an order nobody controls. One CI run printed 「2626 passed」 and then died of SIGSEGV in that teardown, so `make test`
failed on a green suite. Here pytest runs to its end as always (fixtures torn down, report printed, its own cleanup
done); then the atexit callbacks run (pytest's and filelock's lock files), output is flushed, and the process exits
with pytest's status through `os._exit`, skipping the teardown. A crash while the tests run still fails the run
(pytest's faulthandler prints the stack), as does a failed test, an interrupted session or an internal error.
"""

from __future__ import annotations

import atexit
import os
import sys

import pytest

if __name__ == "__main__":
    status = int(pytest.main())
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
