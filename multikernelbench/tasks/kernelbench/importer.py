"""``mkb tasks import PATH --format kernelbench``: a folder of KernelBench-format problems -> task files.

Every ``*.py`` under PATH that defines ``Model``, ``get_inputs`` and ``get_init_inputs`` becomes
``<out>/<prefix>.<folder>/<stem>.py`` (id ``<prefix>.<folder>.<stem>``: ``kb.level1.19_ReLU``,
``mkb_ref.activation.relu``). The task file keeps the problem's text verbatim with its SHA-256, so the task's
content hash (stored on every result) names exactly the problem text that was measured.

Each problem is probed (probe.py) in a child process with a time limit: a reference that hangs or is too big
for this CPU costs one problem, not the import.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multikernelbench.tasks.record import DTYPE_TOLERANCE

VERSION = "1"


@dataclass
class ImportRow:
    """One problem's line of the import table."""

    path: str
    task_id: str
    imported: bool
    why: str = ""
    derived_shapes: int = 0
    flags: list[str] = field(default_factory=list)


def default_prefix(root: Path) -> str:
    if root.name == "reference" or root.parent.name == "reference":
        return "mkb_ref"
    if re.fullmatch(r"level\d+", root.name) or (root / "level1").is_dir() or root.name == "KernelBench":
        return "kb"
    return _clean(root.name) or "byo"


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def problem_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.py") if not p.name.startswith("_") and "__pycache__" not in p.parts)


def task_id_of(root: Path, path: Path, prefix: str) -> tuple[str, str]:
    """(category, name): the category is ``<prefix>.<folder>`` (the file's own folder, or the root's name)."""
    folder = path.parent.name if root.is_dir() and path.parent != root else \
        (root.name if root.is_dir() else path.parent.name)
    category = f"{prefix}.{_clean(folder)}" if _clean(folder) != prefix else prefix
    return category, _clean(path.stem)


def render(info: dict[str, Any], source: str, rel: str, tolerance: tuple[float, float] | None) -> str:
    """The task file (our format) of one probed problem."""
    flags = list(info.get("flags") or [])
    desc = info["description"].replace('"""', "'''").replace("\\", "/")
    lines = [
        f'"""{desc}"""',
        "# Imported by `mkb tasks import --format kernelbench` (importer version "
        f"{VERSION}) from {rel}.",
        "# The problem's text is kept verbatim in ORIGINAL; its module-level sizes come from each named shape",
        "# and its inputs from the harness's generator (multikernelbench/tasks/kernelbench/runtime.py).",
        "from multikernelbench.tasks.kernelbench.runtime import task_namespace",
        "",
        f"ORIGINAL_PATH = {rel!r}",
        f"ORIGINAL_SHA256 = {info['sha256']!r}",
        f"ORIGINAL = {source!r}",
        f"SIZE_NAMES = {tuple(info['size_names'])!r}",
        f"IMPORT_FLAGS = {flags!r}",
        f"TEST_SHAPES = {info['test_shapes']!r}",
        f"BENCH_SHAPE = {info['bench_shape']!r}",
        f"CPU_BENCH_SHAPE = {info['test_shapes'][-1]!r}",
        "# [FLOPs (torch.utils.flop_counter), floating elements, integer bytes] of inputs+outputs+parameters,",
        "# measured once at import per shape (the problem's own shape on the meta device: nothing computed).",
        f"COSTS = {info['costs']!r}",
    ]
    if tolerance is not None:
        lines.append(f"TOLERANCE = {{'float32': {tuple(tolerance)!r}}}")
    lines += [
        "_NS = task_namespace(ORIGINAL, SIZE_NAMES, COSTS, ORIGINAL_PATH)",
        "Model = _NS.Model",
        "get_init_inputs = _NS.get_init_inputs",
        "get_inputs = _NS.get_inputs",
        "flops = _NS.flops",
        "bytes_moved = _NS.bytes_moved",
        "",
    ]
    return "\n".join(lines)


class _Child:
    """A long-lived probe process; killed and replaced when a problem overruns its time limit."""

    def __init__(self) -> None:
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "multikernelbench.tasks.kernelbench.probe"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env)
        assert self.proc.stdout
        # Starting (importing torch) is not the problem's time: wait for "ready" before any clock starts.
        ready, _, _ = select.select([self.proc.stdout], [], [], 600)
        if not ready or self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the probe process did not start")

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else {"error": "the probe process died (crash in the reference?)"}

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def import_folder(root: Path, out: Path, prefix: str | None = None, time_limit: float = 60.0,
                  tolerance: tuple[float, float] | None = None, forward_s: float = 2.0,
                  log: Callable[[str], None] | None = None) -> list[ImportRow]:
    """Import every problem under ``root`` into ``out``; returns the import table."""
    root = root.resolve()
    prefix = prefix or default_prefix(root)
    tol = tolerance or DTYPE_TOLERANCE["float32"]
    rows: list[ImportRow] = []
    child: _Child | None = None
    try:
        for path in problem_files(root):
            category, name = task_id_of(root, path, prefix)
            task_id = f"{category}.{name}"
            rel = str(path.relative_to(root.parent if root.is_dir() else path.parent))
            if child is None:
                child = _Child()
            t0 = time.monotonic()
            ans = child.ask({"path": str(path), "tolerance": list(tol), "forward_s": forward_s}, time_limit)
            if ans is None:
                child.close()
                child = None
                ans = {"error": f"over the per-problem time limit ({time_limit:g} s)"}
            if "error" in ans:
                row = ImportRow(rel, task_id, False, ans["error"])
            else:
                dest = out / category / f"{name}.py"
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(render(ans, path.read_text(), rel, tolerance))
                row = ImportRow(rel, task_id, True, derived_shapes=int(ans.get("derived_shapes", 0)),
                                flags=list(ans.get("flags") or []))
            rows.append(row)
            if log:
                notes = "; ".join([*row.flags, row.why] if row.why else row.flags)
                log(f"{task_id}: {'imported' if row.imported else 'NOT imported'} "
                    f"({row.derived_shapes} derived test shapes{'; ' + notes if notes else ''}) "
                    f"[{time.monotonic() - t0:.1f} s]")
    finally:
        if child is not None:
            child.close()
    (out / "import_table.json").parent.mkdir(parents=True, exist_ok=True)
    (out / "import_table.json").write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    return rows


def table(rows: list[ImportRow]) -> str:
    """The printed import table: one line per problem, then totals."""
    lines = [f"{'task':48s} {'imported':8s} {'tests':5s} why / flags"]
    for r in rows:
        lines.append(f"{r.task_id:48s} {'yes' if r.imported else 'NO':8s} {r.derived_shapes:<5d} "
                     f"{r.why or '; '.join(r.flags)}")
    imported = [r for r in rows if r.imported]
    flagged = [r for r in imported if r.flags]
    lines.append(f"{len(imported)}/{len(rows)} imported ({sum(r.derived_shapes >= 3 for r in imported)} with 3 "
                 f"derived test shapes), {len(flagged)} flagged, {len(rows) - len(imported)} not imported")
    return "\n".join(lines)
