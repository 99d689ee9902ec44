"""Dependencies go one way: the package's imports, read with ``ast`` (nothing is imported), form no cycle and
never point up the layer map below.

Every module of the installed package is read from its source folder (``backends/`` installs as
``multikernelbench.backends``, ``dataset_builder/`` as ``multikernelbench.dataset_builder``; see setup.py).
Imports inside functions count (a lazy import is still a dependency); imports under ``if TYPE_CHECKING:``
do not (annotations only). ``from pkg import name`` depends on ``pkg.name`` when that is a module, else on
``pkg`` itself; importing ``a.b.c`` is not counted as depending on ``a.b``'s ``__init__``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "multikernelbench"

#: Source folder -> the package name it installs as (setup.py's mapping).
SOURCE_FOLDERS = {
    "multikernelbench": "multikernelbench",
    "backends": "multikernelbench.backends",
    "dataset_builder": "multikernelbench.dataset_builder",
}

#: The layers, top to bottom. A module may import modules of its own layer and of any layer below it, never
#: one above. Entries are module-name prefixes relative to ``multikernelbench`` ("" is the package's
#: ``__init__``; a trailing "." matches submodules only); a module belongs to the entry with the longest
#: matching prefix. Task and exemplar files (``suite``, the files under ``prompts/exemplars/``) and the demo's
#: candidates (``demo_solutions/``) run with the tasks, so they sit with them.
LAYERS: list[tuple[str, list[str]]] = [
    ("command line, the service's client and the reward function", ["cli", "client", "reward"]),
    ("the evaluation service", ["serve"]),
    ("sampling (drives prompts and the engine)", ["sampling"]),
    ("the engine on a Ray cluster", ["cluster"]),
    ("evaluation engine", ["engine"]),
    ("reports and the dataset", ["report", "dataset_builder", "hfcache"]),
    ("prompts and scores", ["prompts", "scoring"]),
    ("backends", ["backends"]),
    ("tasks, anti-cheat probes, timing, results store", [
        "tasks", "suite", "prompts.exemplars.", "demo_solutions.", "anticheat", "timing", "store", "interop",
    ]),
    ("records and utilities", ["", "records", "flags", "reasons", "wire", "util", "registry", "roofline", "host_peaks", "hardware", "extract",
                               "baselines"]),
]


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module
    file: str  # the importing file, relative to the repository
    line: int

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def module_files() -> dict[str, Path]:
    """Installed module name -> source file, for every module of the package."""
    out: dict[str, Path] = {}
    for folder, name in SOURCE_FOLDERS.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([name, *parts])] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node: ast.AST):
    """Every Import/ImportFrom under ``node``, at any depth, skipping ``if TYPE_CHECKING:`` bodies."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for sub in child.orelse:
                yield from _import_nodes_of(sub)
            continue
        yield from _import_nodes_of(child)


def _import_nodes_of(node: ast.AST):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    yield from _import_nodes(node)


def imports_of(module: str, path: Path, modules: dict[str, Path], root: Path = ROOT) -> list[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    file = str(path.relative_to(root))
    is_package = path.name == "__init__.py"
    out = []
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            if node.level:  # relative: resolve against this module's package
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in dict.fromkeys(targets):
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                # ``import a.b.c`` where only ``a.b`` is a module (an attribute import): the nearest module
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target != module:
                    out.append(Import(module, target, file, node.lineno))
    return out


def all_imports() -> list[Import]:
    modules = module_files()
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]


def layer_of(module: str) -> int:
    rel = module[len(PACKAGE) + 1:] if module != PACKAGE else ""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix.endswith("."):
                matches = rel.startswith(prefix)
            else:
                matches = rel == prefix or (prefix != "" and rel.startswith(prefix + "."))
            if matches and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    return best


def upward_imports(imports: list[Import]) -> list[str]:
    out = []
    for imp in imports:
        src, dst = layer_of(imp.source), layer_of(imp.target)
        if dst < src:
            out.append(f"{imp.where()}: {imp.source} ({LAYERS[src][0]}) imports {imp.target} ({LAYERS[dst][0]})")
    return out


def cycles(imports: list[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each as sorted module names."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.source, set()).add(imp.target)
        graph.setdefault(imp.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer():
    for name in module_files():
        layer_of(name)


def test_no_import_cycles():
    imports = all_imports()
    found = cycles(imports)
    lines = []
    for comp in found:
        members = set(comp)
        lines.append("cycle: " + " <-> ".join(comp))
        lines += [f"  {imp.where()}: {imp.source} imports {imp.target}"
                  for imp in imports if imp.source in members and imp.target in members]
    print("\n".join(lines))
    assert not found, "import cycles:\n" + "\n".join(lines)


def test_imports_follow_the_layers():
    bad = upward_imports(all_imports())
    print("\n".join(bad))
    assert not bad, f"{len(bad)} import(s) against the layer order (top to bottom: " + \
        " > ".join(name for name, _ in LAYERS) + "):\n" + "\n".join(bad)


# ---- the checker checks itself on small made-up sources ------------------------------------------------

def _imports_from(tmp_path: Path, files: dict[str, str]) -> list[Import]:
    modules = {}
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        parts = list(Path(rel).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules, tmp_path)]


def test_checker_sees_lazy_relative_and_from_imports_but_not_type_checking(tmp_path):
    imports = _imports_from(tmp_path, {
        "multikernelbench/__init__.py": "",
        "multikernelbench/records.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from multikernelbench.cli import main\n"
            "def f():\n    from .engine import runner\n    import multikernelbench.sampling.base as b\n"),
        "multikernelbench/cli/__init__.py": "",
        "multikernelbench/cli/main.py": "from multikernelbench.records import Status\n",
        "multikernelbench/engine/__init__.py": "",
        "multikernelbench/engine/runner.py": "",
        "multikernelbench/sampling/__init__.py": "",
        "multikernelbench/sampling/base.py": "from . import base2\nfrom multikernelbench import records\n",
        "multikernelbench/sampling/base2.py": "",
    })
    pairs = {(i.source, i.target, i.line) for i in imports}
    assert ("multikernelbench.records", "multikernelbench.engine.runner", 5) in pairs
    assert ("multikernelbench.records", "multikernelbench.sampling.base", 6) in pairs
    assert not any(i.target == "multikernelbench.cli.main" for i in imports)
    assert ("multikernelbench.sampling.base", "multikernelbench.sampling.base2", 1) in pairs
    assert ("multikernelbench.sampling.base", "multikernelbench.records", 2) in pairs
    assert cycles(imports) == [["multikernelbench.records", "multikernelbench.sampling.base"]]
    up = upward_imports(imports)
    assert any("records.py:5" in u and "engine.runner" in u for u in up)
    assert not any("cli/main.py" in u for u in up)
