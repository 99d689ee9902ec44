"""engine/build_gate.py: builds at once from measured CPU use (real processes for the CPU reading)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from multikernelbench.engine import build_gate as bg


def test_workers_follow_cores_per_build():
    assert bg.workers_for(16, 2.0) == 8  # the old fixed half, when builds keep two cores busy
    assert bg.workers_for(16, 1.25) == 13  # lighter builds: more at once
    assert bg.workers_for(16, 3.2) == 5
    assert bg.workers_for(2, 3.0) == 1 and bg.workers_for(4, 0.01) == 4  # at least one, at most the cores


def test_cores_per_build_ignores_cache_hits_and_instant_failures():
    samples = [bg.BuildSample(30.0, 20.0), bg.BuildSample(45.0, 30.0), bg.BuildSample(0.2, 0.1)]
    assert bg.cores_per_build(samples) == 1.5
    assert bg.cores_per_build([bg.BuildSample(0.1, 0.05)]) is None


def test_a_crowded_build_counts_the_cores_it_would_have_used():
    """16 builds on 16 cores, two threads each: each measures one core (CPU over wall) while 32 threads were
    runnable. Taken at face value the limit stays 16 and every build runs at half speed; with the crowding
    out, two cores per build and a limit of 8."""
    crowded = [bg.BuildSample(cpu_s=35.0, wall_s=35.0, crowding=2.0) for _ in range(4)]
    assert bg.cores_per_build(crowded) == 2.0 and bg.workers_for(16, 2.0) == 8
    assert bg.BuildSample(10.0, 20.0, crowding=0.4).cores == 0.5  # an idle host says nothing more


@pytest.mark.slow
def test_the_run_queue_sees_threads_waiting_for_a_core(tmp_path):
    """Real CPU burners, three per core, beside a gate holding one build: the crowding it reports for that
    build is well above one (a quiet host reads ~1)."""
    cores = os.cpu_count() or 1
    gate = bg.BuildGate(cores=cores, estimate=1.0, profile_dir=None)
    burn = "import time\nt = time.time()\nwhile time.time() - t < 2.0: pass"
    with gate:
        mark = gate.queue.mark()
        burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(3 * cores)]
        for proc in burners:
            proc.wait(timeout=60)
        crowding = gate.crowding(mark)
    assert crowding >= 1.8, crowding
    assert gate.queue.mean_since(gate.queue.mark()) is None  # no span yet: no figure


def test_profile_round_trip_keeps_the_recent_builds(tmp_path):
    for i in range(bg.KEEP + 5):
        bg.record(tmp_path, bg.BuildSample(2.0 * (i + 1), i + 1.0))
    rows = bg.read_profile(tmp_path)
    assert len(rows) == bg.KEEP and rows[-1] == bg.BuildSample(2.0 * (bg.KEEP + 5), bg.KEEP + 5.0)
    bg.record(tmp_path, bg.BuildSample(30.0, 20.0, crowding=1.5))
    assert bg.read_profile(tmp_path)[-1] == bg.BuildSample(30.0, 20.0, 1.5)
    (tmp_path / bg.PROFILE).write_text('[{"cpu_s": 3.0, "wall_s": 2.0}]')  # written before crowding was kept
    assert bg.read_profile(tmp_path) == [bg.BuildSample(3.0, 2.0, 1.0)]
    (tmp_path / bg.PROFILE).write_text("{not json")
    assert bg.read_profile(tmp_path) == []  # a broken profile is no profile


@pytest.mark.slow
def test_cpu_of_a_process_includes_the_children_it_waited_for():
    before = bg.process_cpu_seconds(os.getpid())
    subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                    "while time.process_time() - t < 0.6: pass"], check=True)
    after = bg.process_cpu_seconds(os.getpid())
    assert before is not None and after - before >= 0.5
    assert bg.process_cpu_seconds(2 ** 22 + 12345) is None  # no such process


def _max_concurrent(gate: bg.BuildGate, n: int) -> int:
    """Start ``n`` builders that hold the gate until as many as it allows are inside (or 10 s pass); return the
    most that were inside at once."""
    running, peak, lock, release = [0], [0], threading.Lock(), threading.Event()
    expect = min(n, gate.limit())

    def build():
        with gate:
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            release.wait(10)
            with lock:
                running[0] -= 1

    threads = [threading.Thread(target=build) for _ in range(n)]
    for t in threads:
        t.start()
    end = time.monotonic() + 10
    while gate.running < expect and time.monotonic() < end:
        time.sleep(0.02)
    time.sleep(0.1)  # a builder over the limit would be inside by now
    release.set()
    for t in threads:
        t.join()
    return peak[0]


def test_gate_starts_from_the_estimate_then_follows_measurements(tmp_path):
    gate = bg.BuildGate(cores=8, estimate=2.0, profile_dir=tmp_path)
    assert gate.limit() == 4 and _max_concurrent(gate, 8) == 4
    gate.add(bg.BuildSample(cpu_s=40.0, wall_s=20.0 * 2))  # measured: one core per build
    assert gate.limit() == 8 and _max_concurrent(gate, 8) == 8
    # The next run on this build root starts from what this one measured.
    assert bg.BuildGate(cores=8, estimate=2.0, profile_dir=tmp_path).limit() == 8
    gate.add(bg.BuildSample(cpu_s=0.01, wall_s=0.5))  # a cache hit: not a measurement
    assert len(gate.samples) == 1


def test_a_lower_limit_holds_new_builds_until_enough_finish(tmp_path):
    gate = bg.BuildGate(cores=4, estimate=1.0, profile_dir=None)
    entered = threading.Event()
    release = threading.Event()
    holders = []

    def hold():
        with gate:
            entered.set()
            release.wait(5)

    for _ in range(4):
        holders.append(threading.Thread(target=hold))
        holders[-1].start()
    entered.wait(5)
    time.sleep(0.1)
    assert gate.running == 4
    gate.add(bg.BuildSample(cpu_s=40.0, wall_s=10.0))  # builds turn out to use 4 cores each: limit 1
    late = threading.Thread(target=lambda: gate.__enter__() and gate.__exit__())
    late.start()
    late.join(0.3)
    assert late.is_alive()  # waits: 4 running, limit 1
    release.set()
    for t in holders:
        t.join()
    late.join(5)
    assert not late.is_alive() and gate.running == 0


@pytest.mark.slow
def test_engine_records_each_builds_cpu_from_the_compile_worker(tmp_path, suite):
    """A real run (cpu backend, default concurrency): the parent reads the compile worker's CPU, compilers it
    waited for included, and the build root's profile gets the build (here a child that burns ~1 s of CPU
    while the candidate module loads: a build's compilers, as far as the parent can tell)."""
    from multikernelbench.engine.runner import evaluate_candidates
    from tests.test_engine_python import RELU, cand, quick_config

    body = """
        import subprocess, sys
        subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                        "while time.process_time() - t < 1.2: pass"], check=True)

        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0)
        """
    cfg = quick_config(tmp_path, 5, backend="cpu", run_timeout_s=60.0, skip_timing=True)
    assert cfg.compile_workers == 0  # the gate's case
    [result] = evaluate_candidates([suite[RELU]], [cand(body)], cfg)
    assert result.status.value == "correct", result.message
    [sample] = bg.read_profile(tmp_path / "cpu")
    assert sample.wall_s >= 1.0 and sample.cpu_s >= 1.1, sample


@pytest.mark.slow
@pytest.mark.parametrize("rank_nice", [True, False])
def test_builds_that_enter_beside_others_run_nicer(tmp_path, suite, rank_nice):
    """A real run (cpu backend, the gate on, two builds at once on this host): each candidate's module, run by
    its compile worker, notes that worker's nice. The build that entered first runs at the engine's priority,
    the one that entered beside it one step nicer, so under a full host the first one finishes first."""
    from multikernelbench.engine.runner import evaluate_candidates
    from tests.test_engine_python import RELU, cand, quick_config

    def body(tag: str) -> str:
        return f"""
        import os, time
        try:  # the compile worker notes its nice (the device worker's load may not write here)
            with open(os.path.join(os.path.dirname(__file__), "mkb_nice.txt"), "a") as fh:
                fh.write(f"{{os.nice(0)}}\\n")
        except OSError:
            pass
        time.sleep(2.0)  # {tag}: both builds run at once

        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0)
        """
    cfg = quick_config(tmp_path, 5, backend="cpu", run_timeout_s=60.0, skip_timing=True, compile_workers=0)
    cfg.build_cores_estimate = 0.5  # two at once (CI has two cores)
    cfg.build_rank_nice = rank_nice
    results = evaluate_candidates([suite[RELU]], [cand(body("a"), label="a"), cand(body("b"), label="b")], cfg)
    assert [r.status.value for r in results] == ["correct", "correct"], [r.message for r in results]
    firsts = sorted(int(f.read_text().split()[0]) for f in (tmp_path / "cpu").glob("*/mkb_nice.txt"))
    assert firsts == ([0, 1] if rank_nice else [0, 0]), firsts  # off (--no-build-rank-nice): all alike


def test_builds_that_ask_at_once_share_one_gate(tmp_path):
    """The build stage makes its gate at the first build. Two build threads asking at once each made one (a look,
    then a profile read that lets the other thread run, then the store): each build was admitted by a gate of its
    own, at rank 0 and under no shared limit. CI saw it as ranks [0, 0] where one build entered beside the other
    (test_builds_that_enter_beside_others_run_nicer). Here many threads ask at once, with thread switches made
    frequent, many times over."""
    from multikernelbench.backends.registry import get_backend
    from multikernelbench.engine.build_stage import BuildStage
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.trace import Trace

    (tmp_path / "cpu").mkdir()
    bg.record(tmp_path / "cpu", bg.BuildSample(cpu_s=3.0, wall_s=2.0))  # a profile to read
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(40):
            stage = BuildStage(get_backend("cpu"), EngineConfig(build_root=tmp_path, compile_workers=0), Trace(None))
            start = threading.Barrier(8)
            gates: list[object] = []

            def ask(stage=stage, start=start, gates=gates) -> None:
                start.wait()
                gates.append(stage.gate)

            threads = [threading.Thread(target=ask) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len({id(g) for g in gates}) == 1, f"{len({id(g) for g in gates})} gates for one stage"
    finally:
        sys.setswitchinterval(before)
