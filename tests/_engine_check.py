"""Run a backend's shipped solutions (and its wrong/ examples) through the real engine, correctness only."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def evaluate_backend_solutions(backend: str, build_root: Path, timing=None, lean: bool = False):
    """``timing``: a TimingConfig to also time the correct ones (backends that time natively on the CPU).
    ``lean``: each task's first two test shapes, one seed each (Numba's CUDA simulator runs every GPU thread as
    a Python thread: the 257^3 matmul trial alone costs minutes of CPU there)."""
    from multikernelbench.engine.candidates import discover_solutions
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.tasks import load_suite

    cands = discover_solutions(ROOT / "solutions" / backend)
    ids = {c.task_id for c in cands}
    tasks = [t for t in load_suite(categories=sorted({i.split(".")[0] for i in ids})) if t.id in ids]
    if lean:
        import dataclasses

        tasks = [dataclasses.replace(t, test_shapes=t.test_shapes[:2], seeds_per_shape=1) for t in tasks]
    # Correctness only (no timing) unless asked, so two device workers check candidates side by side.
    extra = {"timing": timing, "device_workers": 1} if timing is not None else {"skip_timing": True, "device_workers": 2}
    cfg = EngineConfig(backend=backend, build_root=build_root, allow_code_execution=True, seed=7,
                       compile_workers=2, memory_limit_gb=0.0, run_timeout_s=300.0, **extra)
    results = evaluate_candidates(tasks, cands, cfg)
    return {c.label: (c, r) for c, r in zip(cands, results, strict=True)}
