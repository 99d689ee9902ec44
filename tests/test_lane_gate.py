"""A candidate out of device memory beside other lanes is evaluated again with the device to itself
(engine/lane_gate.py).

Why: with CUDA's lanes automatic by default, an honest candidate that fits on the GPU alone can run out of memory
while the other lanes' workers hold theirs; scored as its ``runtime_error`` the run's own crowding would count
against the model. The engine tests run the real engine (Runner, subprocess workers) with two CPU lanes taking
turns on one pseudo-device (as tests/test_lane_turns.py does) and read the order of events from the run's trace.
"""

from __future__ import annotations

import re
import textwrap
import threading
import time
from pathlib import Path

import pytest

from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.lane_gate import LaneGate
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.runner import Runner
from multikernelbench.flags import FlagKind, of_kind
from multikernelbench.records import FailureKind, Status
from tests.test_lane_turns import RELU, sleepy_relu, two_lane_config


# ---- the gate itself ---------------------------------------------------------------------------------------
def test_alone_waits_for_running_stages_and_new_stages_wait_for_it():
    gate, log = LaneGate(3), []

    def stage(name: str, seconds: float) -> None:
        with gate.stage():
            log.append((name, "in", time.monotonic()))
            time.sleep(seconds)
            log.append((name, "out", time.monotonic()))

    def alone() -> None:
        with gate.alone():
            log.append(("alone", "in", time.monotonic()))
            time.sleep(0.2)
            log.append(("alone", "out", time.monotonic()))

    first = threading.Thread(target=stage, args=("first", 0.4))
    first.start()
    time.sleep(0.1)
    retry = threading.Thread(target=alone)
    retry.start()
    time.sleep(0.1)  # the retry now waits for "first"; a stage asked for now waits behind the retry
    late = threading.Thread(target=stage, args=("late", 0.1))
    late.start()
    for t in (first, retry, late):
        t.join(10)
    at = {(name, edge): t for name, edge, t in log}
    assert at[("first", "out")] <= at[("alone", "in")], log
    assert at[("alone", "out")] <= at[("late", "in")], log


def test_only_an_out_of_memory_is_retried():
    oom = DeviceOutcome(message="running on shape {}: MemoryError: CUDA out of memory", failure=FailureKind.RESOURCE_LIMIT)
    too_big = DeviceOutcome(message="file too large", failure=FailureKind.RESOURCE_LIMIT)
    crash = DeviceOutcome(message="out of memory, it says", failure=FailureKind.EXCEPTION)
    assert oom.out_of_memory()
    assert not too_big.out_of_memory() and not crash.out_of_memory()


CUBLAS = "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"


def test_a_cuda_librarys_allocation_failure_is_an_out_of_memory_and_retried():
    """What an honest candidate's timing raised with eight lanes on an 80 GB H100 (benchmarks/throughput/README.md,
    2026-12-07 third session): scored a runtime error before, as an exception, and never evaluated again alone."""
    from multikernelbench.engine.messages import ErrorKind, Failed
    from multikernelbench.engine.session import failed_verdict
    from multikernelbench.engine.worker_channel import classify

    for text in (CUBLAS, "cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "CUDA out of memory. Tried to allocate 2.00 GiB"):
        assert classify(RuntimeError(text)) is ErrorKind.OUT_OF_MEMORY, text
    assert classify(RuntimeError("CUDA error: CUBLAS_STATUS_EXECUTION_FAILED")) is ErrorKind.EXCEPTION
    assert classify(ValueError(CUBLAS)) is ErrorKind.EXCEPTION  # only where torch raises it: a RuntimeError
    verdict = failed_verdict(Failed(kind=ErrorKind.OUT_OF_MEMORY, error=f"RuntimeError: {CUBLAS}"), "timing on shape {}")
    outcome = DeviceOutcome(message=verdict.message, failure=verdict.failure)
    assert outcome.out_of_memory(), outcome


# ---- the engine ------------------------------------------------------------------------------------------
OOM_RELU = textwrap.dedent("""
    import torch
    import torch.nn as nn
    class ModelNew(nn.Module):
        def forward(self, x):
            raise MemoryError("out of memory (a test candidate)")
    """)


def _events(trace: Path) -> list[tuple[str, str]]:
    """(who, what) per trace line of a candidate (who: ``task [code hash]``), in the order written."""
    out = []
    for line in trace.read_text().splitlines():
        m = re.match(r"\S+ \+\s*[0-9.]+s (.+? \[[0-9a-f]+\]): (.*)$", line)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


@pytest.mark.slow
def test_an_out_of_memory_beside_another_lane_is_evaluated_again_alone(suite, tmp_path):
    """A runs out of memory at its first check while B (slow checks) holds the other lane; C waits in the queue.
    A is evaluated again only once B's stage ended, and C's stage starts only after A's second one: nothing of
    another candidate between A's "alone" lines. A stays the candidate's failure (it runs out of memory alone
    too), now flagged; B and C are correct and unflagged. Fails on the old code (no second stage, no flag)."""
    cfg = two_lane_config(tmp_path)
    a = Candidate(task_id=RELU, source=OOM_RELU, label="A")
    b, c = sleepy_relu("B", 0.1), sleepy_relu("C", 0.02)
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], [a, b, c])
    ra, rb, rc = results
    assert ra.status == Status.RUNTIME_ERROR and ra.failure is FailureKind.RESOURCE_LIMIT, (ra.status, ra.message)
    assert "out of memory" in ra.message
    assert len(of_kind(ra.flags, FlagKind.REEVALUATED_ALONE)) == 1, ra.flags
    for r in (rb, rc):
        assert r.status == Status.CORRECT and not of_kind(r.flags, FlagKind.REEVALUATED_ALONE), (r.status, r.message)
    events = _events(cfg.trace_path)
    a_who = next(who for who, what in events if what.startswith("out of memory beside"))
    start = events.index((a_who, "alone on its device"))
    end = events.index((a_who, "alone on its device: done"))
    assert len({who for who, _ in events}) == 3, events  # three candidates, told apart by their code hash
    between = {who for who, _ in events[start:end + 1]}
    assert between == {a_who}, events[start:end + 1]
    # A's first stage started (and failed) once, its second once: two "device stage start" lines.
    assert sum(1 for who, what in events if who == a_who and what.startswith("device stage start")) == 2


@pytest.mark.slow
def test_a_lane_alone_on_its_device_does_not_retry(suite, tmp_path):
    """One lane: the out-of-memory is the candidate's at once, as before lanes shared a device."""
    cfg = two_lane_config(tmp_path)
    cfg.device_workers = 1
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], [Candidate(task_id=RELU, source=OOM_RELU,
                                                                             label="A")])
    assert results[0].failure is FailureKind.RESOURCE_LIMIT and not results[0].flags, results[0].flags
    assert "alone on its device" not in cfg.trace_path.read_text()


def _parent_oom_once_task(marker: Path):
    """The relu task, but its reference runs out of memory once in the harness's own process, at the timing
    shape, while ``marker`` exists: the parent's check of the timed outputs failing as it did on an H100 beside
    three other lanes' workers (2026-12-06). The environment variable naming the marker is the parent's only: a
    worker's environment is an allow-list (engine/sandbox.py), so the reference in the workers never raises."""
    from multikernelbench.tasks.loader import tasks_from_source

    src = (Path(__file__).parents[1] / "multikernelbench/suite/activation/relu.py").read_text()
    src = src.replace('CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}', 'CPU_BENCH_SHAPE = {"batch": 64, "dim": 1024}')
    src = src.replace("        return torch.relu(x)\n", (
        "        import os\n"
        "        marker = os.environ.get(\"MKB_TEST_PARENT_OOM\")\n"
        "        if tuple(x.shape) == (64, 1024) and marker and os.path.exists(marker):\n"
        "            os.remove(marker)\n"
        "            raise torch.OutOfMemoryError(\"CUDA out of memory. Tried to allocate 2.00 GiB (a test task)\")\n"
        "        return torch.relu(x)\n"))
    assert "MKB_TEST_PARENT_OOM" in src
    return tasks_from_source(src, "activation", "relu_parent_oom")[0]


@pytest.mark.slow
def test_the_harness_running_out_of_memory_beside_another_lane_is_evaluated_again_alone(suite, tmp_path,
                                                                                         monkeypatch):
    """The harness's own step (here the parent's check of the timed outputs) runs out of memory while another
    lane shares the device: a crowding of the run's own making, not the candidate's failure nor a harness bug to
    report. A is evaluated again alone and is correct, flagged; B (the other lane) is untouched. Fails before the
    change: A came back ``runtime_error``, "harness error while evaluating: OutOfMemoryError(...)"."""
    marker = tmp_path / "oom_once"
    marker.write_text("")
    monkeypatch.setenv("MKB_TEST_PARENT_OOM", str(marker))
    task = _parent_oom_once_task(marker)
    cfg = two_lane_config(tmp_path)
    a = Candidate(task_id=task.id, source=sleepy_relu("A", 0.0).source, label="A")
    b = sleepy_relu("B", 0.1)
    ra, rb = Runner(cfg, progress=False).evaluate([task, suite[RELU]], [a, b])
    assert not marker.exists(), "the parent's check never reached the timing shape"
    assert ra.status == Status.CORRECT, (ra.status, ra.message)
    assert len(of_kind(ra.flags, FlagKind.REEVALUATED_ALONE)) == 1, ra.flags
    assert "OutOfMemoryError" in of_kind(ra.flags, FlagKind.REEVALUATED_ALONE)[0].text
    assert rb.status == Status.CORRECT and not of_kind(rb.flags, FlagKind.REEVALUATED_ALONE), (rb.status, rb.message)
