"""What the kernel sandbox adds to one worker's start (issue #26 target: <= 5 ms).

Two parts, both per worker:

* ``policy_ms``: the parent computing the worker's :class:`SandboxPolicy` (the cpu backend's real worker
  environment: its build folder, the precompiled headers, the caches) and making its folders;
* ``enter_ms``: the child applying it (no_new_privs, capability drop, Landlock ruleset with every rule,
  seccomp filter), each round in a fresh fork of this process, as a zygote child does.

And, for scale, ``worker_start_ms``: a whole zygote-forked worker from ``Worker.start()`` to its answer to the
first request (the Setup handshake), which includes both.

    python scripts/sandbox_startup_bench.py --rounds 50 --out benchmarks/sandbox/startup_<host>.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path


def _stats(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"n": len(xs), "p50": round(statistics.median(xs), 3), "p90": round(xs[int(0.9 * (len(xs) - 1))], 3),
            "min": round(xs[0], 3), "max": round(xs[-1], 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--workers", type=int, default=10, help="whole zygote workers to start (0: skip)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()

    from multikernelbench.backends.cpu import CpuBackend
    from multikernelbench.engine.kernel_sandbox import SandboxPolicy, measure_enter, support

    backend = CpuBackend()
    root = Path(tempfile.mkdtemp(prefix="mkb-sbx-bench-"))
    env = {**backend.worker_env(root / "cpu" / "cand"), "TMPDIR": str(root / "wd")}
    policy_ms, policy_cpu_ms = [], []
    for _ in range(a.rounds):
        t0, c0 = time.perf_counter(), time.thread_time()
        policy = SandboxPolicy.for_worker(env, str(root / "wd"))
        policy_ms.append((time.perf_counter() - t0) * 1e3)
        policy_cpu_ms.append((time.thread_time() - c0) * 1e3)
    enter = measure_enter(policy, a.rounds)
    report = {"host": platform.node(), "kernel": platform.release(), "machine": platform.machine(),
              "load_avg_1min": os.getloadavg()[0], "cores": os.cpu_count(),
              "sandbox": support().label(), "read_rules": len(policy.read), "write_rules": len(policy.write),
              "policy_ms": _stats(policy_ms), "policy_cpu_ms": _stats(policy_cpu_ms),
              "enter_ms": _stats([w for w, _ in enter]), "enter_cpu_ms": _stats([c for _, c in enter])}
    # CPU time is what the sandbox costs a worker; wall time also counts waiting for a core (see load_avg).
    report["added_cpu_p50_ms"] = round(report["policy_cpu_ms"]["p50"] + report["enter_cpu_ms"]["p50"], 3)
    report["added_wall_p50_ms"] = round(report["policy_ms"]["p50"] + report["enter_ms"]["p50"], 3)

    if a.workers:
        from multikernelbench.engine.messages import Setup
        from multikernelbench.engine.sandbox import Worker
        from multikernelbench.engine.zygote import Zygote

        zygote = Zygote(dict(os.environ), tuple(backend.zygote_preload))
        starts = []
        try:
            for i in range(a.workers):
                build = root / "cpu" / f"cand{i}"
                t0 = time.perf_counter()
                w = Worker("device", backend.worker_env(build), zygote=zygote).start()
                w.send(Setup(backend="cpu", backend_options={}, build_dir=str(build), threads=1).to_header())
                w.receive(time.monotonic() + 60, "the reply to Setup")
                starts.append((time.perf_counter() - t0) * 1e3)
                w.close()
        finally:
            zygote.close()
        report["worker_start_ms"] = _stats(starts)
    text = json.dumps(report, indent=1)
    print(text)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
