"""Lanes sharing one device (engine/gpu_turns.py): checks side by side, every clock alone.

The engine test runs the real engine (Runner, subprocess workers, real timing) with two CPU lanes taking turns
on one pseudo-device (``cpu_lanes_take_turns``) and reads the windows from the run's ``--trace`` file; the
GPU test does the same with two lanes on one GPU and the shipped CUDA solutions.

Local lanes only (not the ``executor`` fixture): the turns are taken between a runner's lane threads; a Ray CPU
lane actor runs one job at a time, and its GPU slots share a plain lock inside the actor.
"""

from __future__ import annotations

import re
import textwrap
import threading
import time
from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine import lane_count
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.gpu_turns import GpuTurns
from multikernelbench.engine.runner import Runner
from multikernelbench.engine.trace_windows import check, request_spans
from multikernelbench.records import Status

REPO = Path(__file__).resolve().parents[1]
RELU = "activation.relu"

Span = tuple[float, float]


# ---- the lock itself ---------------------------------------------------------------------------------------
def _hold(turns: GpuTurns, side: str, seconds: float, log: list, name: str) -> None:
    with (turns.shared() if side == "shared" else turns.exclusive()):
        log.append((name, "in", time.monotonic()))
        time.sleep(seconds)
        log.append((name, "out", time.monotonic()))


def _spans(log: list) -> dict[str, Span]:
    out: dict[str, list[float]] = {}
    for name, _, at in log:
        out.setdefault(name, []).append(at)
    return {k: (v[0], v[1]) for k, v in out.items()}


def test_shared_side_overlaps_and_exclusive_side_is_alone():
    turns, log = GpuTurns(), []
    threads = [threading.Thread(target=_hold, args=(turns, "shared", 0.4, log, f"check{i}")) for i in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    clock = threading.Thread(target=_hold, args=(turns, "exclusive", 0.2, log, "clock"))
    clock.start()
    for t in threads + [clock]:
        t.join(10)
    s = _spans(log)
    checks = [s[f"check{i}"] for i in range(3)]
    assert max(a for a, _ in checks) < min(b for _, b in checks), checks  # the checks ran side by side
    c0, c1 = s["clock"]
    assert all(b <= c0 or c1 <= a for a, b in checks), (s["clock"], checks)  # the clock waited for them
    assert turns.state() == (0, False, 0)


def test_a_waiting_clock_goes_before_later_checks():
    """Writers first: a check that asks after a clock started waiting runs after that clock."""
    turns, log = GpuTurns(), []
    first = threading.Thread(target=_hold, args=(turns, "shared", 0.5, log, "first"))
    first.start()
    time.sleep(0.1)
    clock = threading.Thread(target=_hold, args=(turns, "exclusive", 0.2, log, "clock"))
    clock.start()
    deadline = time.monotonic() + 5
    while turns.state()[2] == 0 and time.monotonic() < deadline:  # until the clock waits
        time.sleep(0.01)
    late = threading.Thread(target=_hold, args=(turns, "shared", 0.1, log, "late"))
    late.start()
    for t in (first, clock, late):
        t.join(10)
    s = _spans(log)
    assert s["first"][1] <= s["clock"][0] <= s["clock"][1] <= s["late"][0], s


def test_clocks_run_in_the_order_asked():
    """A lane whose checks end and that asks for its clock at once does not pass a clock already waiting (the
    engine run above showed it: the lane that had waited longest timed last)."""
    turns, order = GpuTurns(), []

    def clock(name: str) -> None:
        with turns.exclusive():
            order.append(name)

    turns.acquire_shared()
    first = threading.Thread(target=clock, args=("waiting",))
    first.start()
    deadline = time.monotonic() + 5
    while turns.state()[2] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    turns.release_shared()
    clock("asked at once")
    first.join(10)
    assert order == ["waiting", "asked at once"]


def test_nesting_rules():
    turns = GpuTurns()
    with turns.exclusive():
        with turns.shared():  # a clock's holder ends a worker inside it: already alone
            assert turns.state()[1]
    with turns.shared():
        with turns.shared():
            pass
        with pytest.raises(RuntimeError):
            turns.acquire_exclusive()  # would wait for itself
    assert turns.state() == (0, False, 0)


def test_auto_lanes_from_memory_and_cores():
    gb = 10**9
    h200 = lane_count.choose([139 * gb], cores=16)
    assert h200.per_gpu == lane_count.MAX_AUTO_LANES and h200.by_memory == 7 and h200.by_cores == 8
    assert lane_count.choose([139 * gb], cores=2).per_gpu == 1  # a 2-core host: one lane
    assert lane_count.choose([20 * gb], cores=64).per_gpu == 1  # room for one lane's memory only
    assert lane_count.choose([40 * gb, 139 * gb], cores=16).per_gpu == 2  # the fullest GPU decides; 16/(2*2)=4
    assert lane_count.choose([139 * gb] * 8, cores=128).per_gpu == 4
    unknown = lane_count.choose([None], cores=16)
    assert unknown.per_gpu == 1 and "memory unknown" in unknown.label()


# ---- the engine ------------------------------------------------------------------------------------------
def sleepy_relu(label: str, forward_s: float) -> Candidate:
    """Honest, slow to check: each forward sleeps, so its checks and its timing last seconds."""
    src = textwrap.dedent(f"""
        import time
        import torch
        import torch.nn as nn
        class ModelNew(nn.Module):
            def forward(self, x):
                time.sleep({forward_s})  # {label}
                return torch.clamp_min(x, 0.0)
        """)
    return Candidate(task_id=RELU, source=src, label=label)


def two_lane_config(tmp_path: Path, **kw) -> EngineConfig:
    return EngineConfig(build_root=tmp_path / "builds", allow_code_execution=True, seed=5, trace_path=tmp_path / "t.log",
                        device_workers=2, cpu_lanes_take_turns=True, compile_workers=2,
                        timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                        backend_options={"pch": False}, **kw)


@pytest.mark.slow
def test_two_lanes_check_side_by_side_and_time_alone(suite, tmp_path):
    """Two candidates on two lanes sharing one device: their correctness checks overlap, and no request of one
    (load, check, timing, worker end) runs inside a timing window of the other, the clean reference's timing
    included. Candidate B checks twice as long as A, so A's timing is asked for while B still checks: with
    timing taking the shared side it would run beside B's checks (checked: it then fails)."""
    cfg = two_lane_config(tmp_path)
    cands = [sleepy_relu("A", 0.12), sleepy_relu("B", 0.25)]
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], cands)
    assert all(r.status == Status.CORRECT and r.speedup is not None for r in results), \
        [(r.status, r.message) for r in results]
    spans = request_spans(cfg.trace_path)
    assert len(spans) == 2, spans
    (a, b) = (spans[w] for w in sorted(spans))
    assert a.get("time") and b.get("time"), spans
    checks = [(min(s for s, _ in k["check"]), max(e for _, e in k["check"])) for k in (a, b)]
    assert max(s for s, _ in checks) < min(e for _, e in checks), checks  # the checks overlapped
    windows = check(spans)
    assert windows.clocks >= 3 and windows.overlapping_checks > 0, windows  # 2 timings + the clean reference's
    assert windows.foreign == [], windows.foreign  # no verify of one candidate inside another's clock either
    assert all(k.get("verify") for k in (a, b)), spans


def _lines_by_who(trace: Path) -> dict[str, list[str]]:
    """Each candidate's trace lines (``who: what``), in the order written."""
    out: dict[str, list[str]] = {}
    for line in trace.read_text().splitlines():
        m = re.match(r"\S+ \+\s*[0-9.]+s (.+? \[[0-9a-f]+\]): (.*)$", line)
        if m:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


def _before_confirming(lines: list[str]) -> list[str]:
    """A candidate's trace lines before its confirming timing, if it had one (engine/device_stage.py)."""
    cut = next((i for i, what in enumerate(lines) if what.startswith("confirming timing")), len(lines))
    return lines[:cut]


@pytest.mark.slow
def test_the_clean_worker_starts_before_the_clock_turn_when_lanes_share_a_device(suite, tmp_path):
    """Issue #44: lanes sharing a device do not start workers ahead (engine/prefetch.py), so the task's clean
    reference worker was started inside the exclusive clock turn (fork, set-up, CUDA context: ~0.2-0.3 s on a GPU
    while every other lane's clock waited). Now it starts in a shared turn while its candidate is checked: inside
    the turn the clean timing starts at once, with no worker start before it, and the result is the same
    (correct, a clean timing behind it). Likewise the timing shape's models (a heavy model's weights took ~1 s of
    an H100 turn): made by a ``prepare`` request before the turn. Fails on the old code (a ``setup start`` inside
    the turn, no ``prepare``)."""
    cfg = two_lane_config(tmp_path)
    cands = [sleepy_relu("A", 0.12), sleepy_relu("B", 0.25)]
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], cands)
    assert all(r.status == Status.CORRECT and r.speedup is not None for r in results), \
        [(r.status, r.message) for r in results]
    assert all((r.host_load or {}).get("clean") for r in results), [r.host_load for r in results]
    clean_start = "time start (timing the reference in a clean worker)"
    lines = _lines_by_who(cfg.trace_path)
    # One clean timing for the task, by whichever lane came first. A confirming timing (the clock audit's retry,
    # which load alone can set off: seen in a CI-like run on two busy cores) recalibrates the clean worker beside
    # it, uncached, so only clean timings before a lane's confirming timing count here.
    timed_clean = [w for w, ls in lines.items() if clean_start in _before_confirming(ls)]
    assert len(timed_clean) == 1, lines
    own = lines[timed_clean[0]]
    taken = next(i for i, what in enumerate(own) if what.startswith("clock turn taken"))
    inside = own[taken:own.index(clean_start)]
    assert not any(what.startswith("setup start") for what in inside), own
    assert sum(what.startswith("setup start") for what in own[:taken]) == 2, own  # its worker and the clean one
    # And each candidate's timing-shape models were made before its turn (a Prepare request in a shared turn).
    for who, ls in lines.items():
        if any(what.startswith("clock turn taken") for what in ls):
            first = next(i for i, what in enumerate(ls) if what.startswith("clock turn taken"))
            assert any(what.startswith("prepare end") for what in ls[:first]), (who, ls)


BEATING_RELU = textwrap.dedent("""
    import _thread
    import sys
    import time
    import torch
    import torch.nn as nn

    def _beat():  # left running after import: says when it was kept from running for over 0.15 s
        last = time.time()
        while True:
            time.sleep(0.01)
            now = time.time()
            if now - last > 0.15:
                print(f"GAP {last:.3f} {now:.3f}", file=sys.stderr, flush=True)
            last = now

    _thread.start_new_thread(_beat, ())  # below threading's registry; asleep when the harness looks for busy threads

    class ModelNew(nn.Module):
        def forward(self, x):
            if x.numel() > 1_000_000:  # the timing shape: fail there, so this worker's output is the result's
                raise RuntimeError("not timed")
            time.sleep(0.25)
            return torch.clamp_min(x, 0.0)
    """)


@pytest.mark.slow
def test_a_thread_left_running_is_stopped_during_other_lanes_clocks(suite, tmp_path):
    """Attack: candidate A leaves a thread running after its import, below threading's registry and asleep most of
    the time, so the background-thread checks pass it (here it only notes when it could not run; on a GPU it
    would launch kernels). No step of A runs during B's clock, but that thread would: so every clock stops the
    other lanes' loaded workers. A checks longer than B, so B is timed while A's worker is loaded and idle;
    each of B's timing windows before A's own timing must lie inside a stretch where A's thread did not run. (A fails at its own
    timing shape, so its first worker's output is its result's.) Fails when workers are not stopped (checked:
    with ``enlist`` a no-op, A's thread ran through B's clocks)."""
    cfg = two_lane_config(tmp_path)
    runner = Runner(cfg, progress=False)
    attacker = Candidate(task_id=RELU, source=BEATING_RELU, label="A")
    victim = sleepy_relu("B", 0.12)
    results = runner.evaluate([suite[RELU]], [attacker, victim])
    assert results[1].status == Status.CORRECT, results[1].message
    assert results[0].status == Status.RUNTIME_ERROR and "not timed" in results[0].message, results[0].message
    gaps = [(float(a), float(b)) for line in (results[0].stdout or "").splitlines() if line.startswith("GAP ")
            for a, b in [line.split()[1:3]]]
    spans = request_spans(cfg.trace_path)
    who_a, who_b = (next(w for w in spans if c.code_hash[:12] in w) for c in (attacker, victim))
    a_timed = spans[who_a]["time"][0][0]
    assert spans[who_b]["time"][0][1] <= a_timed, spans  # B was timed first
    # Only B's clocks before A's own timing: A's worker ends when that fails, and under load B's timing can go
    # on after it (a confirming timing in a later turn: seen in a CI-like run, where A's worker was gone).
    clocks = [(runner.trace.wall0 + t0, runner.trace.wall0 + t1) for t0, t1 in spans[who_b]["time"] if t1 <= a_timed]
    # Trace stamps are 0.1 s: a window may start or end up to 0.05 s off.
    outside = [c for c in clocks if not any(g0 <= c[0] + 0.1 and c[1] - 0.1 <= g1 for g0, g1 in gaps)]
    assert outside == [], (outside, gaps, {w: spans[w] for w in (who_a, who_b)}, runner.trace.wall0)  # all, to diagnose


@pytest.mark.gpu
@pytest.mark.slow
def test_lanes_on_one_gpu_time_alone(suite, tmp_path):
    """On a GPU: the default lanes (chosen from the GPU's free memory and the cores: at least 2 on an H200) on GPU
    0 over six shipped CUDA solutions (six tasks); no request of one candidate runs inside another's timing
    window, and some checks of different candidates overlapped."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    from multikernelbench.engine.candidates import discover_solutions

    found = discover_solutions(REPO / "solutions" / "cuda", set(suite))
    cands = [c for c in found if c.expect == Status.CORRECT and "wrong" not in c.label][:6]
    assert len(cands) >= 4, [c.task_id for c in found][:20]
    cfg = EngineConfig(backend="cuda", build_root=tmp_path / "builds", allow_code_execution=True, seed=5,
                       trace_path=tmp_path / "t.log", gpus=(0,),  # CUDA's default: automatic lanes, chosen here
                       timing=TimingConfig(min_runs=5, max_runs=30, budget_s=0.3, warmup=2))
    runner = Runner(cfg, progress=False)
    results = runner.evaluate([suite[c.task_id] for c in cands], cands)
    assert runner.lane_choice is not None and runner.lane_choice.per_gpu >= 2, runner.lane_choice
    assert "lanes per GPU (auto" in cfg.trace_path.read_text()
    assert all(r.status == Status.CORRECT for r in results), [(r.task_id, r.status, r.message) for r in results]
    windows = check(request_spans(cfg.trace_path))
    assert windows.clocks >= len(cands) and windows.foreign == [], windows
    assert windows.overlapping_checks > 0, windows
    # Issue #44: the verified calls' reference computed while each worker ended its Time request (verify_ahead.py).
    ahead = re.findall(r"verify start \(.*; (\d+) of (\d+) computed ahead\)", cfg.trace_path.read_text())
    assert len(ahead) >= len(cands) and all(int(n) >= 1 for n, _ in ahead), ahead
