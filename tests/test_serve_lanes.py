"""A slow job holds one lane, not the service: the real service (serve/jobs.py) with two CPU lanes and the real
engine, client B submitting two candidates that sleep at import, client A a quick one after B's first runs.

* Lanes take work as they free: A's job ends while B's first sleeper still runs. Before, one engine thread
  took B's two sleepers as one batch and ran it to its end; A's job waited for both.
* One client holds at most all lanes but one: B's second sleeper starts only after its first ended, so the
  other lane was A's. Lanes without that cap give B's second sleeper the free lane and A waits for a sleeper.

Ordering, not wall time, is asserted (a loaded host slows everything alike): a sleeper is held at import (when it
is built and when it is loaded) until the test releases it once A's job is done, at most 60 s
(tests/_held_sleeper.py); a quick plain-PyTorch candidate takes about a second once the lane's zygote is up. It
slept a fixed 10 s twice before: ~48 s of the suite's wall on CI, nearly all of it a worker waiting.
"""

from __future__ import annotations

import threading
import time

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.config import EngineConfig
from tests._held_sleeper import held, release

RELU = "activation.relu"
HEAD = "import torch\nimport torch.nn as nn\n"


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
        sleepers = [kernel(f"sleeper {k}", held()) for k in (1, 2)]
        b1, b2 = service.submit("B", [Submission(RELU, src) for src in sleepers])
        started = threading.Event()
        for _ in range(600):  # B's first sleeper is on a lane (its zygote may still be importing)
            if service.get(b1.id, "B").state == JobState.RUNNING:
                started.set()
                break
            started.wait(0.1)
        assert started.is_set()
        (a,) = service.submit("A", [Submission(RELU, kernel("quick"))])
        a = wait_finished(service, a, "A", 300)
        for src in sleepers:  # B's second is released before it starts: it must still wait for the first's end
            release(build_root, src)
        b1 = wait_finished(service, b1, "B", 300)
        b2 = wait_finished(service, b2, "B", 300)
    finally:
        service.close()
    assert a.state == JobState.DONE and a.view()["result"]["status"] == "correct", a.view()
    assert b1.state == b2.state == JobState.DONE
    assert a.finished_at < b1.finished_at, "A's quick job waited for B's sleeper"
    assert b2.started_at >= b1.finished_at, "B held both lanes at once"



def wait_state(service, job, client: str, timeout: float, state, preemptions: int = 0):
    """Until ``job`` is in ``state`` having been stopped ``preemptions`` times (polled: the lanes report no event
    for a start)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = service.get(job.id, client)
        if got.state == state and got.preemptions == preemptions:
            return got
        time.sleep(0.05)
    raise AssertionError(f"job {job.id} not {state} after {preemptions} preemptions within {timeout} s: {got.view()}")


PREEMPT_AFTER_S = 1.5


@pytest.mark.slow
def test_a_long_job_over_its_share_is_stopped_requeued_then_ended(build_root, suite, tmp_path):
    """One lane. B's sleeper holds it; A's quick job arrives: B's job is stopped after PREEMPT_AFTER_S (its
    client is over its share, A is not), A's job runs, B's job runs again from the start. Stopped a second
    time (max_preemptions=1: on sufferance now, at once) it fails with a one-line ``preempted:`` message.
    B's shorter sleeper, taken while B is over its share, is stopped as soon as A's next job waits (not after
    PREEMPT_AFTER_S; a stop that does not count: it never outlasted the bound), then finishes with its real
    result, and the results store holds that result only (nothing from the killed runs). Before preemption
    A's jobs waited for B's sleepers to end."""
    from multikernelbench.serve.jobs import EvalService, JobState, ServiceConfig, Submission
    from multikernelbench.store import ResultStore

    engine = EngineConfig(build_root=build_root, allow_code_execution=True, seed=5, skip_timing=True,
                          policy="kernelbench",
                          anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    db = tmp_path / "results.sqlite"
    service = EvalService(ServiceConfig(engine=engine, db=db, lanes=1, preempt_after_s=PREEMPT_AFTER_S,
                                        max_preemptions=1), {RELU: suite[RELU]})
    try:
        (b1,) = service.submit("B", [Submission(RELU, kernel("long sleeper", "import time\ntime.sleep(30)\n"))])
        wait_state(service, b1, "B", 300, JobState.RUNNING)
        (a1,) = service.submit("A", [Submission(RELU, kernel("quick 1"))])
        a1 = wait_finished(service, a1, "A", 120)
        assert service.get(b1.id, "B").preemptions == 1
        wait_state(service, b1, "B", 120, JobState.RUNNING, preemptions=1)  # again, from the start
        (a2,) = service.submit("A", [Submission(RELU, kernel("quick 2"))])
        a2 = wait_finished(service, a2, "A", 120)
        b1 = wait_finished(service, b1, "B", 60)

        short = kernel("short sleeper", held())  # held until A's next job is done (it slept 2.5 s twice before)
        (b2,) = service.submit("B", [Submission(RELU, short)])
        wait_state(service, b2, "B", 60, JobState.RUNNING)
        (a3,) = service.submit("A", [Submission(RELU, kernel("quick 3"))])
        a3 = wait_finished(service, a3, "A", 120)
        release(build_root, short)
        b2 = wait_finished(service, b2, "B", 120)
    finally:
        service.close()
    for a in (a1, a2, a3):
        assert a.state == JobState.DONE and a.view()["result"]["status"] == "correct", a.view()
    assert a1.finished_at < b1.finished_at and a3.finished_at < b2.finished_at
    assert b1.state == JobState.FAILED and b1.result_json is None, b1.view()
    assert b1.message.startswith("preempted: stopped 2 times") and "\n" not in b1.message, b1.message
    assert b2.state == JobState.DONE and (b2.stops, b2.preemptions) == (1, 0), (b2.view(), b2.stops)
    assert b2.view()["result"]["status"] == "correct", b2.view()
    store = ResultStore(db)
    try:
        rows = store._conn.execute("SELECT code_hash, status FROM results").fetchall()
    finally:
        store.close()
    assert sorted(s for h, s in rows if h == b2.code_hash) == ["correct"], rows
    assert not [r for r in rows if r[0] == b1.code_hash], rows
