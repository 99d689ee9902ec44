"""Runs on sufferance evaluate at a lower CPU priority (``ServiceConfig.sufferance_nice``, serve/worker_nice.py),
read from /proc of the workers a real service forks (uvicorn in a thread, loopback, one CPU lane, the real
engine, no timing).

Why: issue #42's soak on a shared core. A lane nobody cheaper wants goes to a client over its share (the
scheduler is work-conserving), and that client's workers then took the core at the same priority as the honest
clients' evaluations and above the niced HTTP front. Here client B (weight 0.25) is within its share for its
first job (its workers at nice 0, like every protected run) and over it for the next, which is taken only
because the lane was idle: its workers run at ``NICE``.

A timeout of such a run is not a verdict: a niced worker gets the core only when nobody else wants it, and
"timeout" from starvation would be cached as the candidate's answer. So it goes back to its queue once and runs
again at full priority; that run's timeout is the answer (B's candidate sleeps past ``COMPILE_TIMEOUT_S`` at
import, so both runs time out).
"""

from __future__ import annotations

import time

import pytest

from tests._serve_run import served
from tests.test_serve_priority import nice, zygote_children

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from multikernelbench.anticheat.config import AntiCheatConfig  # noqa: E402
from multikernelbench.client import Client  # noqa: E402
from multikernelbench.engine.config import EngineConfig  # noqa: E402

pytestmark = pytest.mark.slow

RELU = "activation.relu"
TOKEN_A = "niced-a-0123456789abcdef"
TOKEN_B = "niced-b-0123456789abcdef"
HEAD = "import torch\nimport torch.nn as nn\n"
NICE = 17
COMPILE_TIMEOUT_S = 15.0


def kernel(tag: str, prelude: str = "") -> str:
    return (HEAD + prelude + f"# {tag}\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        return torch.clamp_min(x, 0.0)\n")


def watch_workers(client: Client, job_id: str, timeout: float) -> tuple[dict, list[tuple[int, int]]]:
    """Poll the job until it ends; meanwhile the nice of every worker forked for it, by pid in the order first
    seen (the last reading of each: a worker just forked still has its zygote's nice until its limits apply)."""
    import os

    seen: dict[int, int] = {}
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for pid in zygote_children(os.getpid()):
            try:
                seen[pid] = nice(f"/proc/{pid}/stat")
            except (OSError, IndexError, ValueError):
                pass
        job = client.job(job_id)
        if job["state"] in ("done", "failed"):
            return job, list(seen.items())
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not end within {timeout:.0f} s (workers seen: {seen})")


def test_a_run_on_sufferance_is_niced_and_its_timeout_is_retried_at_full_priority(build_root, suite, tmp_path):
    from multikernelbench.serve.app import create_app
    from multikernelbench.serve.auth import TokenBook
    from multikernelbench.serve.jobs import EvalService, ServiceConfig

    tokens = tmp_path / "tokens"
    tokens.write_text(f"A {TOKEN_A}\nB {TOKEN_B} 0.25\n")
    engine = EngineConfig(build_root=build_root, allow_code_execution=True, seed=7, skip_timing=True,
                          policy="kernelbench", compile_timeout_s=COMPILE_TIMEOUT_S,
                          anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    service = EvalService(ServiceConfig(engine=engine, db=tmp_path / "results.sqlite", tokens=TokenBook(tokens),
                                        lanes=1, idle_grace_s=300.0, sufferance_nice=NICE), {RELU: suite[RELU]})
    try:
        with served(create_app(service)) as port:
            url = f"http://127.0.0.1:{port}"
            with Client(url, TOKEN_A) as a, Client(url, TOKEN_B) as b:
                warm = a.evaluate(RELU, kernel("warm"))
                assert warm["status"] == "correct", warm
                # B's first job: a newcomer, level with A, within its share: a protected run, workers at nice 0
                (first,) = b.submit(RELU, kernel("b within its share", "import time\ntime.sleep(3)\n"))
                done, workers = watch_workers(b, first, 180)
                assert done["result"]["status"] == "correct", done
                assert workers and {n for _, n in workers} == {0}, workers
                # B (weight 0.25) is now over its share; A is engaged and idle: the lane is B's on sufferance
                (slow,) = b.submit(RELU, kernel("sleeps past the compile timeout", "import time\ntime.sleep(120)\n"))
                done, workers = watch_workers(b, slow, 4 * COMPILE_TIMEOUT_S + 120)
                assert done["result"]["status"] == "timeout", done
                nices = [n for _, n in workers]
                assert nices and nices[0] == NICE, f"the run on sufferance was not niced: {workers}"
                assert nices[-1] == 0, f"the run after its niced timeout was not at full priority: {workers}"
                job = service.get(slow, "B")
                assert job is not None and job.stops == 1 and job.preemptions == 0, (job.stops, job.preemptions)
    finally:
        service.close()
