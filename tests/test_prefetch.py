"""The device lane starts the next candidate's worker while the current one is loaded and checked, never beside
a clock (engine/prefetch.py).

Real runs of the engine on the CPU backend (real zygote, real workers, real timing), read back from the run's
trace: which worker started when, against the other candidate's first clock.

Local lanes only (not the ``executor`` fixture): prefetching is the local lane's choice of its next job; a Ray lane
actor is handed its jobs by the driver and starts no worker ahead.
"""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import Runner
from multikernelbench.records import Status

RELU = "activation.relu"
LINE = re.compile(r"^\S+ \+\s*([\d.]+)s (.+?): (.*)$")


def config(tmp_path: Path, **kw) -> EngineConfig:
    return EngineConfig(build_root=tmp_path / "builds", allow_code_execution=True, seed=5,
                        timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                        backend_options={"pch": False}, trace_path=tmp_path / "trace.log", **kw)


def plain(k: int, body: str = "return torch.clamp_min(x, 0.0)") -> Candidate:
    src = textwrap.dedent(f"""
        import torch
        import torch.nn as nn
        # candidate {k}
        class ModelNew(nn.Module):
            def forward(self, x):
                {body}
        """)
    return Candidate(task_id=RELU, source=src, label=f"c{k}")


def events(trace: Path) -> list[tuple[float, str, str]]:
    out = []
    for line in trace.read_text().splitlines():
        m = LINE.match(line)
        if m:
            out.append((float(m.group(1)), m.group(2), m.group(3)))
    return out


def first(evs, who: str, prefix: str) -> float:
    return next(t for t, w, what in evs if w == who and what.startswith(prefix))


def lane_order(evs) -> list[str]:
    """Candidates (trace labels) in the order their device stages started."""
    return [w for _, w, what in evs if what.startswith("device stage start")]


@pytest.mark.slow
def test_next_worker_starts_during_checks_and_before_the_clock(suite, tmp_path):
    cfg = config(tmp_path)
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], [plain(k) for k in range(3)])
    assert [r.status for r in results] == [Status.CORRECT] * 3, [r.message for r in results]
    evs = events(cfg.trace_path)
    a, b, c = lane_order(evs)
    for cur, nxt in ((a, b), (b, c)):
        clock = first(evs, cur, "time start")  # the current candidate's first clock (clean reference or its own)
        setups = [(t, what) for t, w, what in evs if w == nxt and what.startswith("setup")]
        assert setups, f"no worker start for {nxt}"
        # the next worker started after the current stage began, before its clock, and was ready before it
        assert first(evs, cur, "device stage start") <= setups[0][0] < clock
        assert first(evs, nxt, "setup end") <= clock
        # and was the one the next candidate used: no second start of a candidate worker in its own stage
        started = first(evs, nxt, "device stage start")
        assert first(evs, nxt, "load start") >= started
        assert not [t for t, what in setups if t >= started and t < first(evs, nxt, "load start")]
        # one worker ahead, no clean worker: the task's clean timing is made (or being made) by the one before
        assert len([t for t, what in setups if t < started and what.startswith("setup start")]) == 1


@pytest.mark.slow
def test_a_new_tasks_clean_worker_starts_ahead_too(suite, tmp_path):
    """The first candidate of a task needs a clean worker (the reference timed where no candidate code ever ran);
    the lane starts that one ahead as well, and the candidate's timing uses it instead of starting one. (One build
    at a time: the lane takes them in this order, so the sigmoid candidate is the one started ahead.)"""
    cfg = config(tmp_path, compile_workers=1)
    sigmoid = Candidate(task_id="activation.sigmoid", label="s", source=textwrap.dedent("""
        import torch
        import torch.nn as nn
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.sigmoid(x)
        """))
    results = Runner(cfg, progress=False).evaluate([suite[RELU], suite["activation.sigmoid"]],
                                                   [plain(0), sigmoid, plain(1)])
    assert [r.status for r in results] == [Status.CORRECT] * 3, [r.message for r in results]
    evs = events(cfg.trace_path)
    second = lane_order(evs)[1]
    assert second.startswith("activation.sigmoid"), lane_order(evs)
    started = first(evs, second, "device stage start")
    ahead = [t for t, w, what in evs if w == second and what.startswith("setup start") and t < started]
    later = [t for t, w, what in evs if w == second and what.startswith("setup start") and t >= started]
    assert len(ahead) == 2 and not later, (ahead, later)  # its own worker and its task's clean worker
    assert [what for _, w, what in evs if w == second and "clean worker" in what]


@pytest.mark.slow
def test_without_prefetch_each_worker_starts_in_its_own_turn(suite, tmp_path):
    cfg = config(tmp_path, prefetch_workers=False)
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], [plain(k) for k in range(2)])
    assert [r.status for r in results] == [Status.CORRECT] * 2, [r.message for r in results]
    evs = events(cfg.trace_path)
    a, b = lane_order(evs)
    assert first(evs, b, "setup start") >= first(evs, a, "end_workers end")


@pytest.mark.slow
def test_lanes_sharing_a_device_do_not_prefetch(suite, tmp_path):
    cfg = config(tmp_path, device_workers=2, skip_timing=True)
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], [plain(k) for k in range(4)])
    assert [r.status for r in results] == [Status.CORRECT] * 4
    evs = events(cfg.trace_path)
    for who in lane_order(evs):
        assert first(evs, who, "setup start") >= first(evs, who, "device stage start")


@pytest.mark.slow
@pytest.mark.parametrize("first_body", ["import os; os.abort()", "raise RuntimeError('bad kernel')"])
def test_a_candidate_that_fails_before_its_clock_hands_over_the_prepared_worker(suite, tmp_path, first_body):
    """The lane waits for the worker it started ahead at the current candidate's first clock; a candidate that
    crashes or raises in its checks never gets there, and the next one must still get a whole worker."""
    cfg = config(tmp_path)
    cands = [plain(0, first_body), plain(1), plain(2, first_body), plain(3)]
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], cands)
    expected = Status.CRASH if "abort" in first_body else Status.RUNTIME_ERROR
    assert [r.status for r in results] == [expected, Status.CORRECT, expected, Status.CORRECT], \
        [r.message for r in results]


def evaluation(suite, tmp_path: Path, cfg: EngineConfig):
    """One candidate's device stage on the CPU backend, outside any runner (its own build folder)."""
    from multikernelbench.backends import get_backend
    from multikernelbench.engine.device_stage import CandidateEvaluation
    from multikernelbench.engine.reference import ReferenceService, SeedSource

    backend = get_backend("cpu", pch=False)
    build = tmp_path / "builds" / "cpu" / "one"
    build.mkdir(parents=True)
    return CandidateEvaluation(suite[RELU], plain(0).source, build, backend, cfg, SeedSource(5),
                               ReferenceService(backend.reference_device(None)))


@pytest.mark.slow
def test_a_discarded_prepared_worker_is_ended(suite, tmp_path):
    from multikernelbench.engine.prefetch import Prefetch

    ev = evaluation(suite, tmp_path, config(tmp_path))
    pre = Prefetch(object(), ev)
    pre.wait()
    session = ev._prepared
    assert session is not None and session.worker.proc is not None
    proc = session.worker.proc
    assert proc.poll() is None  # started and waiting for its candidate
    pre.discard()
    assert ev._prepared is None and proc.poll() is not None


@pytest.mark.slow
def test_no_clock_starts_before_the_lane_is_quiet(suite, tmp_path):
    """The device stage calls ``before_clock`` (the lane's wait for the worker it is starting ahead) before its
    first clock, the clean reference's included, and does not start one until it returns."""

    cfg = config(tmp_path)
    ev = evaluation(suite, tmp_path, cfg)

    def quiet() -> None:
        ev.trace(ev.who, "hook called")
        time.sleep(0.3)
        ev.trace(ev.who, "hook returned")

    ev.before_clock = quiet
    out = ev.evaluate()
    assert out.status == Status.CORRECT, out.message
    whats = [what for _, w, what in events(cfg.trace_path) if w == ev.who]
    assert "hook returned" in whats
    assert whats.index("hook returned") < next(i for i, w in enumerate(whats) if w.startswith("time start"))


@pytest.mark.slow
def test_a_zygote_started_early_is_the_one_the_run_uses(suite, tmp_path, own_zygotes):
    """``mkb eval`` starts the zygote before it reads the suite and the candidates (Runner.prestart); the run
    then waits for that one instead of starting its own, and its workers come from it (``own_zygotes``: as
    ``mkb eval`` does, without the suite's kept zygotes)."""
    cfg = config(tmp_path)
    runner = Runner(cfg, progress=False)
    runner.prestart()
    early = runner._early_zygote
    assert early is not None and early.alive()
    results = runner.evaluate([suite[RELU]], [plain(0)])
    assert [r.status for r in results] == [Status.CORRECT], [r.message for r in results]
    whats = [what for _, who, what in events(cfg.trace_path) if who == "runner"]
    assert whats[0].startswith("zygote started early"), whats
    assert any(w.startswith("1 to evaluate: waiting for the zygote started early") for w in whats), whats
    assert not [w for w in whats if "starting the zygote" in w], whats  # no second zygote
    assert runner._early_zygote is None and not early.alive()  # adopted, then closed with the run


def test_a_zygote_started_early_and_not_used_is_ended_at_once(tmp_path, own_zygotes):
    """A run that ends before evaluating (no candidates, a usage error) ends the zygote it started, without
    waiting for its imports (torch alone takes seconds)."""

    runner = Runner(config(tmp_path), progress=False)
    runner.prestart()
    early = runner._early_zygote
    assert early is not None
    t0 = time.monotonic()
    runner.discard_prestart()
    assert not early.alive() and time.monotonic() - t0 < 1.0
    assert runner._early_zygote is None
    runner.discard_prestart()  # twice is harmless
