"""Workers' OpenMP threads spin briefly before they sleep (util/worker_env.py, ``OMP_SPIN_DEFAULTS``).

Why it is a trust matter: the parent's clock audit reads the worker's CPU time as evidence that does not grow
with the host's load (anticheat/clock_audit.py, "CPU time"). With libgomp's default spin count it did grow: a
thread waiting at a barrier for a descheduled partner burned its whole spin, and on CI an honest OpenCL
``deep_mlp`` was convicted of "work hidden in the renewal" (eager: 220 ms of CPU per call in the candidate's
worker, 110 ms in the clean worker, 13 ms on a quiet host).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from multikernelbench.anticheat.clock_audit import AuditConfig
from multikernelbench.backends.registry import get_backend
from multikernelbench.util.worker_env import OMP_SPIN_DEFAULTS, base_env

# Eager deep_mlp at its CPU bench shape: nine Linear layers, each a few OpenMP regions with a barrier.
CHILD = r"""
import json, sys, time, torch
from multikernelbench.tasks.loader import load_suite
from multikernelbench.tasks.module import materialize
t = [t for t in load_suite() if t.id == "architecture.deep_mlp"][0]
mod = materialize(t)
model = mod.Model(*mod.get_init_inputs(t.cpu_bench_shape))
ins = mod.get_inputs(t.cpu_bench_shape, torch.Generator().manual_seed(0))
with torch.no_grad():
    for _ in range(3):
        model(*ins)
    c0 = time.process_time()
    for _ in range(20):
        model(*ins)
print(json.dumps({"cpu_ms": (time.process_time() - c0) * 1e3 / 20, "threads": torch.get_num_threads()}))
"""


def test_every_worker_env_carries_the_spin_count(tmp_path, monkeypatch):
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    for name in ("cpu", "opencl", "triton", "cuda"):
        env = get_backend(name).worker_env(tmp_path)
        assert env["GOMP_SPINCOUNT"] == OMP_SPIN_DEFAULTS["GOMP_SPINCOUNT"], name
    monkeypatch.setenv("GOMP_SPINCOUNT", "2500")  # the harness's own choice passes through
    assert get_backend("cpu").worker_env(tmp_path)["GOMP_SPINCOUNT"] == "2500"


def _eager_cpu_ms(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_multithreaded_eager_beside_busy_loops_keeps_its_cpu_time(tmp_path):
    """The same eager call, with a worker's environment, quiet and beside three busy loops: the CPU time it
    burns per call may not grow by half the audit's CPU floor (with libgomp's default spin count it grew by
    ~49 ms here, 13 -> 62 ms; with the workers' setting by ~5 ms: omp_spin_bench.py)."""
    env = {**base_env(str(tmp_path)), **get_backend("cpu").worker_env(tmp_path)}
    env.pop("TORCH_EXTENSIONS_DIR", None)
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    quiet = _eager_cpu_ms(env)
    if quiet["threads"] < 2:
        pytest.skip("one OpenMP thread: nothing waits at a barrier")
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        time.sleep(0.5)
        loaded = _eager_cpu_ms(env)
    finally:
        for p in burners:
            p.kill()
            p.wait()
    grew = loaded["cpu_ms"] - quiet["cpu_ms"]
    print(f"eager deep_mlp CPU per call: quiet {quiet['cpu_ms']:.1f} ms, beside busy loops {loaded['cpu_ms']:.1f} ms "
          f"(GOMP_SPINCOUNT={env.get('GOMP_SPINCOUNT')})")
    assert grew < AuditConfig().cpu_floor_ms / 2, (quiet, loaded)
