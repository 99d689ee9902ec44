"""The benchmark's candidates: distinct variants of the shipped solutions (correct ones spread over every task,
fast-failing wrong ones), each with its own code hash and extension name."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .common import REPO

INCLUDE = "#include <torch/extension.h>"
# Wrong kinds that fail fast (no hangs, no OOM), per backend: file stem in solutions/<backend>/wrong/.
WRONG_KINDS = {
    "cuda": ("relu_compile_error", "relu_raises", "relu_skips_tail"),
    "cpu": ("compile_error", "wrong_result", "wrong_shape"),
}
_HEADER = re.compile(r"^#\s*(task|expect)\s*:\s*(.+?)\s*$", re.M)
_NAME = re.compile(r'(\bname\s*=\s*")([A-Za-z_][A-Za-z0-9_]*)(")')


def read_headers(source: str) -> dict[str, str]:
    head = "\n".join(source.splitlines()[:10])
    return {m.group(1): m.group(2) for m in _HEADER.finditer(head)}


def make_variant(source: str, number: int) -> tuple[str, str]:
    """A distinct build of ``source``: a ``// variant N`` line in the C++/CUDA source and a unique extension name."""
    if source.count(INCLUDE) != 1:
        raise ValueError(f"expected exactly one {INCLUDE!r}")
    names = _NAME.findall(source)
    if len(names) != 1:
        raise ValueError(f"expected exactly one load_inline name=..., found {len(names)}")
    source = source.replace(INCLUDE, f"// variant {number}\n{INCLUDE}", 1)
    new_name = f"{names[0][1]}_v{number}"
    source = _NAME.sub(lambda m: f"{m.group(1)}{new_name}{m.group(3)}", source, count=1)
    return source, new_name


def _spread(paths: list[Path]) -> list[Path]:
    """Round-robin over categories (activation.x, reduce.y, ...) so that small --n still spans categories."""
    by_cat: dict[str, list[Path]] = {}
    for p in sorted(paths):
        by_cat.setdefault(p.stem.split(".")[0], []).append(p)
    out, lists = [], list(by_cat.values())
    while any(lists):
        for lst in lists:
            if lst:
                out.append(lst.pop(0))
    return out


def generate_candidates(backend: str, n: int, src_root: Path, out_dir: Path, known: set[str],
                        wrong_fraction: float) -> list[dict]:
    correct_src = [p for p in _spread(list(src_root.glob("*.py"))) if p.stem in known]
    wrong_src = []
    for kind in WRONG_KINDS.get(backend, ()):
        p = src_root / "wrong" / f"{kind}.py"
        if p.exists() and read_headers(p.read_text()).get("task") in known:
            wrong_src.append(p)
    if not correct_src:
        raise SystemExit(f"no shipped solutions for known tasks under {src_root}")
    n_wrong = int(round(n * wrong_fraction)) if wrong_src else 0
    if n >= 2 and wrong_src and wrong_fraction > 0:
        n_wrong = max(1, n_wrong)
    n_correct = n - n_wrong
    plan = [(correct_src[i % len(correct_src)], "correct") for i in range(n_correct)]
    plan += [(wrong_src[j % len(wrong_src)], "wrong") for j in range(n_wrong)]
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for number, (path, sort) in enumerate(plan, start=1):
        base = path.read_text()
        headers = read_headers(base)
        task_id = headers.get("task") or path.stem
        kind = "ok" if sort == "correct" else path.stem
        source, ext_name = make_variant(base, number)
        rel = Path(task_id) / f"v{number:03d}_{kind}.py"
        (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / rel).write_text(source)
        rows.append({"label": str(rel), "task_id": task_id, "variant": number, "kind": kind,
                     "code_hash": hashlib.sha256(source.encode()).hexdigest()[:20],  # as the engine keys it
                     "expected": headers.get("expect", "correct") if sort == "wrong" else "correct",
                     "from": str(path.relative_to(REPO) if REPO in path.parents else path),
                     "ext_name": ext_name, "path": str(out_dir / rel)})
    # mkb takes candidates sorted by (task id, label) (discover_solutions); the KernelBench-style pipeline
    # builds and evaluates in the same order, so a pipeline cut by its cap has seen the same mix.
    rows.sort(key=lambda r: (r["task_id"], r["label"]))
    return rows


def task_specs(task_ids: set[str]) -> dict[str, dict]:
    from multikernelbench.tasks import load_suite

    specs = {}
    for t in load_suite(ids=sorted(task_ids)):
        specs[t.id] = {"id": t.id, "source": t.source, "test_shapes": list(t.test_shapes),
                       "bench_shape": t.bench_shape, "cpu_bench_shape": t.cpu_bench_shape, "dtype": t.dtype,
                       "atol": t.atol, "rtol": t.rtol}
    return specs


def known_task_ids() -> set[str]:
    from multikernelbench.tasks import load_suite

    return {t.id for t in load_suite()}
