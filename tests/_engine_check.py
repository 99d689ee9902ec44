"""Run a backend's shipped solutions (and its wrong/ examples) through the real engine, correctness only."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def evaluate_backend_solutions(backend: str, build_root: Path):
    from multikernelbench.engine.candidates import discover_solutions
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.tasks import load_suite

    cands = discover_solutions(ROOT / "solutions" / backend)
    ids = {c.task_id for c in cands}
    tasks = [t for t in load_suite(categories=sorted({i.split(".")[0] for i in ids})) if t.id in ids]
    # Correctness only (no timing), so two device workers check candidates side by side.
    cfg = EngineConfig(backend=backend, build_root=build_root, allow_code_execution=True, seed=7,
                       skip_timing=True, compile_workers=2, device_workers=2, memory_limit_gb=0.0,
                       run_timeout_s=300.0)
    results = evaluate_candidates(tasks, cands, cfg)
    return {c.label: (c, r) for c, r in zip(cands, results)}
