"""Idle figures (anticheat/sched_idle.py) of honest candidates and the sleeping-padding attack, beside pinned load.

Prints, for every timing the engine audits (first, confirming and clean-worker timings alike), per callable:
each interval's idle ms (wall - the worker threads' on-CPU + run-queue time - the parent's service time), the
lower quartile the audit judges, and the bound; then each candidate's verdict. Load: ``--burners N`` busy loops
pinned round-robin to the usable cores (0: none).

    python benchmarks/verdicts_under_load/idle_figures.py --burners 4 [--detail] [--which quiet,relu_twin]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _pin(core: int):  # type: ignore[no-untyped-def]
    return lambda: os.sched_setaffinity(0, {core})


def _burners(n: int) -> list[subprocess.Popen]:
    cores = sorted(os.sched_getaffinity(0))
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             preexec_fn=_pin(cores[i % len(cores)]))
            for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--burners", type=int, default=4)
    ap.add_argument("--which", default="quiet,twin,relu,relu_twin")
    ap.add_argument("--detail", action="store_true", help="every sample's figures of each audited timing")
    args = ap.parse_args()

    from multikernelbench.anticheat import timing_judge, timing_records
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.tasks import load_suite

    real = timing_judge.audit_clock

    def traced(evidence):  # type: ignore[no-untyped-def]
        found = real(evidence)
        for fn in evidence.fns:
            idles = [iv.idle_ms for iv in found.intervals if iv.fn == fn]
            shown = " ".join("-" if x is None else f"{x:.1f}" for x in idles)
            print(f"    audit {fn}: idle ms per sample [{shown}]", flush=True)
        if args.detail:  # every sample's figures, as tests/test_load_verdicts.py rebuilds them
            from multikernelbench.anticheat.sched_idle import runnable_ms
            asks = evidence.log.asks
            n = {fn: 0 for fn in evidence.fns}
            for a, b in zip(asks, asks[1:], strict=False):
                if a.phase.value != "sample":
                    continue
                claimed = evidence.series[a.fn][n[a.fn]] * a.calls
                n[a.fn] += 1
                cpu = (b.cpu - a.cpu) * 1e3 if a.cpu is not None and b.cpu is not None else None
                print(f"      ({a.fn!r}, {(b.t - a.t) * 1e3:.1f}, {claimed:.2f}, {cpu:.0f}, {a.served * 1e3:.1f}, "
                      f"{runnable_ms(a.sched, b.sched) or 0:.1f}, {runnable_ms(a.own_answered, b.own_arrival) or 0:.1f}),"
                      "  # fn, wall, claimed, cpu, served, worker runnable, parent runnable (ms)", flush=True)
        for f in found.idle:
            print(f"    audit {f.fn}: low {f.low_ms:.2f} median {f.median_ms:.2f} bound {f.bound(cfg_idle):.2f} "
                  f"({f.samples} known, {f.voided} voided)", flush=True)
        print(f"    findings: {[x.kind.value for x in found.found]}", flush=True)
        return found

    from multikernelbench.anticheat.clock_records import AuditConfig
    cfg_idle = AuditConfig().idle
    timing_judge.audit_clock = traced
    # the clean worker's timing is not audited by the judge: show its intervals too
    real_from_samples = timing_records.CleanTiming.from_samples.__func__  # type: ignore[attr-defined]

    def clean_from_samples(cls, log, stats, series, calls, load=None):  # type: ignore[no-untyped-def]
        from multikernelbench.anticheat.clock_audit import intervals
        ivs, _ = intervals(log, series, calls, ["eager"])
        shown = " ".join("-" if iv.idle_ms is None else f"{iv.idle_ms:.1f}" for iv in ivs)
        print(f"    clean eager: idle ms per sample [{shown}]", flush=True)
        return real_from_samples(cls, log, stats, series, calls, load)

    timing_records.CleanTiming.from_samples = classmethod(clean_from_samples)  # type: ignore[method-assign,assignment]

    suite = {t.id: t for t in load_suite()}
    pick = {
        "quiet": ("matmul.square", REPO / "tests/data/timing_attacks/renew_profile_quiet_balanced.py", False),
        "twin": ("matmul.square", REPO / "tests/data/honest_twins/matmul.square.py", True),
        "relu": ("activation.relu", REPO / "solutions/cpu/activation.relu.py", True),
        "relu_twin": ("activation.relu", REPO / "tests/data/honest_twins/activation.relu.py", True),
    }
    procs = _burners(args.burners)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in args.which.split(","):
                task_id, path, custom = pick[name]
                cfg = EngineConfig(backend="cpu", build_root=Path(tmp), allow_code_execution=True, seed=4040,
                                   compile_timeout_s=600.0, run_timeout_s=600.0, compile_workers=2,
                                   anticheat=AntiCheatConfig(require_custom_kernel=custom, quiet_wait_s=5.0),
                                   timing=TimingConfig(min_runs=8, max_runs=30, budget_s=1.0, warmup=1,
                                                       target_rse=0.0))
                print(f"== {name} ({args.burners} burners)", flush=True)
                cand = Candidate(task_id=task_id, source=path.read_text(), label=name)
                r = evaluate_candidates([suite[task_id]], [cand], cfg)[0]
                print(f"== {name}: {r.status.value} speedup {r.speedup} load "
                      f"{(r.host_load or {}).get('timing')} :: {r.message[:500]}", flush=True)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
