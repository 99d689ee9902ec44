"""A slow job holds one lane, not the service: the real service (serve/jobs.py) with two CPU lanes and the real
engine, client B submitting two candidates that sleep at import, client A a quick one after B's first runs.

* Lanes take work as they free: A's job ends while B's first sleeper still runs. Before, one engine thread
  took B's two sleepers as one batch and ran it to its end; A's job waited for both.
* One client holds at most all lanes but one: B's second sleeper starts only after its first ended, so the
  other lane was A's. Lanes without that cap give B's second sleeper the free lane and A waits for a sleeper.

Ordering, not wall time, is asserted (a loaded host slows everything alike): a sleeper sleeps 10 s (twice: when it is built and when it is loaded), a quick
plain-PyTorch candidate takes about a second once the lane's zygote is up.
"""

from __future__ import annotations

import threading

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.config import EngineConfig

RELU = "activation.relu"
HEAD = "import torch\nimport torch.nn as nn\n"
SLEEP_S = 10


def kernel(tag: str, prelude: str = "") -> str:
    return (HEAD + prelude + f"# {tag}\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        return torch.clamp_min(x, 0.0)\n")


def wait_finished(service, job, client: str, timeout: float):
    done = threading.Event()
    service.watch(job.id, client, done.set)
    if not service.get(job.id, client).finished:
        assert done.wait(timeout), f"job {job.id} did not finish in {timeout} s"
    return service.get(job.id, client)


@pytest.mark.slow
def test_a_sleeper_holds_one_lane_and_its_client_not_both(build_root, suite, tmp_path):
    from multikernelbench.serve.jobs import EvalService, JobState, ServiceConfig, Submission

    engine = EngineConfig(build_root=build_root, allow_code_execution=True, seed=5, skip_timing=True,
                          policy="kernelbench",
                          anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    service = EvalService(ServiceConfig(engine=engine, db=tmp_path / "results.sqlite", lanes=2),
                          {RELU: suite[RELU]})
    try:
        sleeper = f"import time\ntime.sleep({SLEEP_S})\n"
        b1, b2 = service.submit("B", [Submission(RELU, kernel("sleeper 1", sleeper)),
                                      Submission(RELU, kernel("sleeper 2", sleeper))])
        started = threading.Event()
        for _ in range(600):  # B's first sleeper is on a lane (its zygote may still be importing)
            if service.get(b1.id, "B").state == JobState.RUNNING:
                started.set()
                break
            started.wait(0.1)
        assert started.is_set()
        (a,) = service.submit("A", [Submission(RELU, kernel("quick"))])
        a = wait_finished(service, a, "A", 300)
        b1 = wait_finished(service, b1, "B", 300)
        b2 = wait_finished(service, b2, "B", 300)
    finally:
        service.close()
    assert a.state == JobState.DONE and a.view()["result"]["status"] == "correct", a.view()
    assert b1.state == b2.state == JobState.DONE
    assert a.finished_at < b1.finished_at, "A's quick job waited for B's sleeper"
    assert b2.started_at >= b1.finished_at, "B held both lanes at once"

