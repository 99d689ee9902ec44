"""The engine as a pipeline: builds overlap, references are computed once per (task, shape, seed), and the
precompiled header never serialises builds -- also with two runs sharing one cache.

Real workers, real C++ builds (CPU backend), real subprocesses; nothing of the engine is mocked.

The run's policy (references computed once and released after a task's last job, built or not; the time limit;
statuses of compiled candidates that crash or hang) is tested on both executors through the ``executor`` fixture
(tests/_executors.py). Local-only, because Ray has no such thing: build overlap (a Ray run's builds are as many as
the cluster's free cores, not ``compile_workers``), the parent's warmed precompiled header (``mkb eval``'s own
machine), and lanes sharing one device's turns (a Ray lane actor owns its GPU).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import Runner
from multikernelbench.records import Status
from multikernelbench.store import ResultStore
from tests._executors import runner_for

# C++ builds in folders of their own: the shared precompiled headers first (see conftest.cpu_pch).
pytestmark = [pytest.mark.usefixtures("cpu_pch"), pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
RELU = "activation.relu"


def plain_config(build_root: Path, **kw) -> EngineConfig:
    """Plain-PyTorch candidates: the static filter and the own-kernel rule off (they would stop them)."""
    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=3,
                        timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                        backend_options={"pch": False}, **kw)


def sleepy(k: int, seconds: float) -> Candidate:
    """A candidate whose build step (executing the module) is slow but cheap: it sleeps."""
    src = textwrap.dedent(f"""
        import time
        import torch
        import torch.nn as nn
        time.sleep({seconds})  # build {k}
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0)
        """)
    return Candidate(task_id=RELU, source=src, label=f"sleepy{k}")


def test_builds_overlap(suite, tmp_path):
    """W sleep-bound builds with W compile workers finish in about one build's time, not W."""
    w, seconds = 4, 4.0
    trace = tmp_path / "trace.log"
    cfg = plain_config(tmp_path / "builds", compile_workers=w, skip_timing=True, trace_path=trace)
    results = Runner(cfg, progress=False).evaluate([suite[RELU]], [sleepy(k, seconds) for k in range(w)])
    assert all(r.status == Status.CORRECT for r in results), [r.message for r in results]
    ends = [float(line.split("+", 1)[1].split("s", 1)[0]) for line in trace.read_text().splitlines()
            if "build end" in line]
    assert len(ends) == w
    assert max(ends) - min(ends) < seconds, ends  # one at a time would space them `seconds` apart
    # Each build took about one sleep (plus a worker start), not a queue's worth of them.
    assert max(r.compile_time_s for r in results) < 2 * seconds + 5, [r.compile_time_s for r in results]


def test_references_computed_once_per_task_and_released(suite, tmp_path, executor):
    """Two candidates of each of two tasks: each trial's reference runs once, not per candidate, and no task's
    references are held once its last candidate is done -- on the local lanes and in the Ray lane actors."""
    honest = "import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" \
             "        return torch.clamp_min(x, 0.0)  # {k}\n"
    sig = "import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" \
          "        return torch.sigmoid(x)  # {k}\n"
    cands = [Candidate(task_id=RELU, source=honest.format(k=k), label=f"relu{k}") for k in range(2)]
    cands += [Candidate(task_id="activation.sigmoid", source=sig.format(k=k), label=f"sig{k}") for k in range(2)]
    cfg = plain_config(tmp_path / "builds", compile_workers=2, skip_timing=True)
    runner = runner_for(executor, cfg)
    results = runner.evaluate([suite[RELU], suite["activation.sigmoid"]], cands)
    assert all(r.status == Status.CORRECT for r in results), [r.message for r in results]
    trials = sum(len(suite[t].test_shapes) * suite[t].seeds_per_shape for t in (RELU, "activation.sigmoid"))
    assert sum(runner.reference_counts.values()) == trials, runner.reference_counts
    assert all(r.correctness.trials == r.correctness.passed > 0 for r in results)
    assert_nothing_held(runner)


def assert_nothing_held(runner: Runner) -> None:
    """Every lane (one here: ``device_workers`` is 1 on both executors) reported, and holds no task's references."""
    assert len(runner.reference_held) == 1 and list(runner.reference_held.values()) == [[]], runner.reference_held


def test_a_tasks_references_go_after_its_last_job_even_one_that_failed_to_build(suite, tmp_path, executor):
    """A task's last finished job frees its references, whatever it was: here the other candidate failed to
    build (the local lanes once counted only the jobs they evaluated, and kept such a task's references to the
    run's end)."""
    honest = "import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" \
             "        return torch.clamp_min(x, 0.0)\n"
    cands = [Candidate(task_id=RELU, source="import torch\nclass ModelNew(\n", label="broken"),
             Candidate(task_id=RELU, source=honest, label="honest")]
    runner = runner_for(executor, plain_config(tmp_path / "builds", skip_timing=True))
    results = runner.evaluate([suite[RELU]], cands)
    assert [r.status for r in results] == [Status.COMPILE_ERROR, Status.CORRECT], [r.message for r in results]
    assert_nothing_held(runner)


def test_past_the_time_limit_nothing_more_starts(suite, tmp_path, executor):
    """One build at a time and a 2 s limit: the first candidate's build (a 5 s sleep) runs past it, so it is
    built but never started on a lane, and the second is not even built; both come back with the message a
    rerun relies on and neither is stored. The same on both executors."""
    db = tmp_path / "r.sqlite"
    cfg = plain_config(tmp_path / "builds", compile_workers=1, skip_timing=True, stop_after_s=2.0)
    with ResultStore(db) as store:
        runner = runner_for(executor, cfg, store)
        results = runner.evaluate([suite[RELU]], [sleepy(0, 5.0), sleepy(1, 0.0)])
    messages = [r.message for r in results]
    assert all(m.startswith("not started: the run's time limit (2 s) was reached first") for m in messages), messages
    assert results[0].compile_time_s is not None and results[1].compile_time_s is None
    assert runner.rescheduled == []
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone() == (0,)



def test_compiled_kernels_crash_and_hang_alike_on_both_executors(suite, build_root, tmp_path, executor):
    """Real C++ kernels: the shipped relu, one writing through a null pointer and one spinning forever give the
    same statuses through either executor, in the candidates' order, each stored once; a second run on the store
    returns the stored records and evaluates nothing. The session's build folder: the anticheat tests build these
    very sources, so in the whole suite they are built once for all."""
    sources = {"shipped": (RELU, REPO / "solutions" / "cpu" / f"{RELU}.py"),
               "segfault": (RELU, REPO / "solutions" / "cpu" / "wrong" / "segfault.py"),
               "infinite_loop": ("activation.sigmoid", REPO / "solutions" / "cpu" / "wrong" / "infinite_loop.py")}
    cands = [Candidate(task_id=task, source=path.read_text(), label=name) for name, (task, path) in sources.items()]
    cfg = EngineConfig(build_root=build_root, allow_code_execution=True, seed=3, skip_timing=True, compile_workers=2,
                       run_timeout_s=8.0, anticheat=AntiCheatConfig(static_checks=False))
    with ResultStore(tmp_path / "r.sqlite") as store:
        runner = runner_for(executor, cfg, store)
        results = runner.evaluate([suite[RELU], suite["activation.sigmoid"]], cands)
    got = [(r.candidate, r.status) for r in results]
    assert got == [("shipped", Status.CORRECT), ("segfault", Status.CRASH), ("infinite_loop", Status.TIMEOUT)], \
        [(r.candidate, r.status, r.message) for r in results]
    assert "SIGSEGV" in results[1].message, results[1].message
    assert runner.rescheduled == []
    with ResultStore(tmp_path / "r.sqlite") as store:
        again = runner_for(executor, cfg, store)
        resumed = again.evaluate([suite[RELU], suite["activation.sigmoid"]], cands)
    assert [(r.status, r.finished_at) for r in resumed] == [(r.status, r.finished_at) for r in results]
    assert again.reference_counts == {}  # no lane ran
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone() == (3,)


def _flagless_relu() -> str:
    """The shipped relu without its ``extra_cflags``: it builds with the flagless precompiled header, ~12 s of
    CPU against ~22 at -O3, for the tests here that check who makes or finds the header, not the code."""
    src = (REPO / "solutions" / "cpu" / f"{RELU}.py").read_text()
    flags = '    extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],\n'
    assert src.count(flags) == 1
    return src.replace(flags, "")


def test_a_default_run_builds_main_cpp_with_the_warmed_header(suite, tmp_path, cpu_pch):
    """With no backend options the build worker finds the parent's precompiled headers. A worker's ``HOME``
    is its own folder, so a backend that resolved ``~`` in the worker looked in the wrong place and built
    every ``main.cpp`` from the text headers (twice the CPU), with every result still correct."""
    from multikernelbench.backends.cpu import CpuBackend
    from multikernelbench.backends.extbuild.cuda_warm import pch_dirs

    src = _flagless_relu()
    cfg = EngineConfig(build_root=tmp_path / "builds", allow_code_execution=True, seed=3, skip_timing=True)
    (result,) = Runner(cfg, progress=False).evaluate([suite[RELU]], [Candidate(task_id=RELU, source=src, label="shipped")])
    assert result.status == Status.CORRECT, result.message
    marks = list((tmp_path / "builds").rglob("mkb_pch_used"))
    assert len(marks) == 1, sorted(str(p) for p in (tmp_path / "builds").rglob("*"))
    sig = marks[0].read_text().split()
    warmed = {folder.name for folder in pch_dirs(cpu_pch, CpuBackend.WARM_VARIANTS).values()}
    assert sig[0] in warmed and sig[1:] == ["light"], (sig, warmed)  # main.cpp read the light header


@pytest.mark.slow
def test_two_runs_share_one_pch_cache_and_no_build_waits(tmp_path, cpu_pch):
    """Two `mkb eval` runs at once on a cold, shared PCH folder: their builds never make the precompiled
    header (a worker's file-size limit is far below the ~0.7 GB .gch, and builds that made it under a shared
    lock is what made CUDA builds end one at a time; they may wait, bounded, for the warmer's: see
    tests/test_warm_wait.py), both runs are correct, and the two background warmers leave nothing half-made
    behind, nor a warming mark.

    The folder is cold for the build's flag set only: the backend's other warmed set (the shipped solutions') is
    linked in from the session's warm folder, so the warmers work on one header rather than two (~50 s of CPU
    less). The candidate is the shipped relu without its flags: the cold set is the flagless one, whose builds
    cost ~12 s of CPU against ~22 at -O3 (what is checked here is who makes the header, not the code)."""
    from multikernelbench.backends.cpu import CpuBackend
    from multikernelbench.backends.extbuild.cuda_warm import pch_dirs

    pch_root = tmp_path / "pch"
    pch_root.mkdir()
    plain: tuple[str, ...] = ()
    assert plain in CpuBackend.WARM_VARIANTS
    others = [v for v in CpuBackend.WARM_VARIANTS if v != plain]
    for folder in pch_dirs(cpu_pch, tuple(others)).values():
        (pch_root / folder.name).symlink_to(folder, target_is_directory=True)
    # The cold set's header text is there already (the warmer writes it before compiling the .gch), so every
    # build finds the PCH being made and waits for it inside the kernel sandbox (a check of the warmer's pid
    # from the build worker itself was once reported as a sandbox violation: os.kill(pid, 0)).
    (cold,) = pch_dirs(cpu_pch, (plain,)).values()
    (pch_root / cold.name).mkdir()
    for header in cold.glob("*.h"):
        (pch_root / cold.name / header.name).write_text(header.read_text())
    sol = tmp_path / "sol"
    sol.mkdir()
    (sol / f"{RELU}.py").write_text(_flagless_relu())
    env = {**os.environ, "MKB_ALLOW_CODE_EXECUTION": "1"}
    procs = []
    for k in range(2):
        cmd = [sys.executable, "-m", "multikernelbench.cli.main", "eval", "--backend", "cpu", "--solutions", str(sol),
               "--db", str(tmp_path / f"r{k}.sqlite"), "--build-root", str(tmp_path / f"b{k}"), "--json",
               "--no-progress", "--no-timing", "--compile-workers", "1", "--backend-option", f"pch_root={pch_root}",
               "--trace", str(tmp_path / f"t{k}.log")]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
        rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert [r["status"] for r in rows] == ["correct"], rows
    # Builds ran beside the warmers and wrote nothing there (a worker that tried would leave a partial .gch
    # cut at its file-size limit); a warmer stopped at its run's end leaves nothing half-written either.
    leftovers = sorted(p.name for p in [*pch_root.rglob("*.tmp"), *pch_root.rglob(".warming")])
    assert not leftovers, leftovers
    # Nor a log: neither warmer failed (one built, the other found it being built, or was stopped).
    logs = sorted(p.name for p in pch_root.glob("warm.*.log"))
    assert not logs, logs
    for k in range(2):
        text = (tmp_path / f"t{k}.log").read_text()
        assert "build end" in text and ": ok" in text, text
        # mkb eval started the zygote before reading the suite and the candidates, and the run used that one
        assert text.index("zygote started early") < text.index("waiting for the zygote started early"), text


def test_lanes_sharing_a_device_take_turns(suite, tmp_path):
    """Two device stages holding one device lock (two lanes on one GPU): their loads overlap, their checks
    never do. Real workers; each load sleeps 2 s and each forward 0.3 s."""
    import threading

    from multikernelbench.backends import get_backend
    from multikernelbench.engine.build_stage import BuildStage
    from multikernelbench.engine.device_stage import CandidateEvaluation
    from multikernelbench.engine.reference import ReferenceService, SeedSource
    from multikernelbench.engine.trace import Trace
    from multikernelbench.records import EvalResult

    src = textwrap.dedent("""
        import time
        import torch
        import torch.nn as nn
        time.sleep(2.0)  # load {k}
        class ModelNew(nn.Module):
            def forward(self, x):
                time.sleep(0.3)
                return torch.clamp_min(x, 0.0)
        """)
    trace_path = tmp_path / "trace.log"
    cfg = plain_config(tmp_path / "builds", skip_timing=True, trace_path=trace_path)
    backend = get_backend("cpu", **cfg.backend_options)
    trace, seeds, lock, task = Trace(trace_path), SeedSource(3), threading.Lock(), suite[RELU]
    cands = [Candidate(task_id=RELU, source=src.format(k=k), label=f"slow{k}") for k in range(2)]
    stage = BuildStage(backend, cfg, trace)
    results = [EvalResult(task_id=RELU, task_hash=task.content_hash, backend="cpu", candidate=c.label,
                          code_hash=c.code_hash, status=Status.RUNTIME_ERROR) for c in cands]
    for c, r in zip(cands, results, strict=True):
        assert stage.run(task, c, r).ok, r.message

    def device(c: Candidate, r: EvalResult) -> None:
        CandidateEvaluation(task, c.source, stage.build_dir(c), backend, cfg, seeds, ReferenceService(backend.device()),
                            trace=trace, device_lock=lock).run(r)

    threads = [threading.Thread(target=device, args=(c, r)) for c, r in zip(cands, results, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert all(r.status == Status.CORRECT for r in results), [r.message for r in results]

    def span(code_hash: str, op: str) -> tuple[float, float]:
        times = [float(line.split("+", 1)[1].split("s", 1)[0]) for line in trace_path.read_text().splitlines()
                 if f"[{code_hash[:12]}]: {op} " in line and (" start " in line or " end " in line)]
        return min(times), max(times)

    (a0, a1), (b0, b1) = (span(c.code_hash, "check") for c in cands)
    assert a1 <= b0 or b1 <= a0, ((a0, a1), (b0, b1))  # the checks took turns
    (la0, la1), (lb0, lb1) = (span(c.code_hash, "load") for c in cands)
    assert max(la0, lb0) < min(la1, lb1), ((la0, la1), (lb0, lb1))  # the loads overlapped
    # A worker's exit (its device context torn down) is device work: never inside the other lane's checks.
    (ea0, ea1), (eb0, eb1) = (span(c.code_hash, "end_workers") for c in cands)
    assert ea1 <= b0 or b1 <= ea0, ((ea0, ea1), (b0, b1))
    assert eb1 <= a0 or a1 <= eb0, ((eb0, eb1), (a0, a1))


def test_shared_device_compile_runs_its_device_steps_in_turns(suite, tmp_path):
    """Reference-only (the baseline) with two lanes on one device: each torch.compile request makes its
    inputs in one turn and runs its first compiled call in another, compiles outside both, and no turn or
    timing overlaps the other lane's timing. Real workers, real torch.compile on the CPU."""
    import threading

    from multikernelbench.backends import get_backend
    from multikernelbench.engine.device_stage import CandidateEvaluation
    from multikernelbench.engine.gpu_turns import GpuTurns
    from multikernelbench.engine.reference import ReferenceService, SeedSource
    from multikernelbench.engine.runner import reference_candidates
    from multikernelbench.engine.trace import Trace
    from multikernelbench.records import EvalResult

    trace_path = tmp_path / "trace.log"
    cfg = EngineConfig(build_root=tmp_path / "builds", allow_code_execution=True, seed=3, reference_only=True,
                       trace_path=trace_path, timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1,
                                                                  compile_baseline=True))
    backend = get_backend("cpu")
    trace, seeds, lock = Trace(trace_path), SeedSource(3), GpuTurns()  # the compile turns take its clock side
    tasks = [suite[RELU], suite["activation.tanh"]]
    results = [EvalResult(task_id=t.id, task_hash=t.content_hash, backend="cpu", candidate="reference",
                          code_hash="reference", status=Status.RUNTIME_ERROR) for t in tasks]

    def device(task, r: EvalResult) -> None:
        CandidateEvaluation(task, "", tmp_path / "builds" / "ref", backend, cfg, seeds,
                            ReferenceService(backend.device()), trace=trace, device_lock=lock).run(r)

    assert len(reference_candidates(tasks)) == 2
    threads = [threading.Thread(target=device, args=(t, r)) for t, r in zip(tasks, results, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert all(r.status == Status.CORRECT and r.compile_timing is not None for r in results), \
        [(r.status, r.message, r.flags) for r in results]

    events: dict[str, list[tuple[float, str]]] = {t.id: [] for t in tasks}
    for line in trace_path.read_text().splitlines():
        stamp = float(line.split("+", 1)[1].split("s", 1)[0])
        who, what = line.split("s ", 1)[1].split(": ", 1)
        events[who.split(" [")[0]].append((stamp, what))
    busy: dict[str, list[tuple[float, float]]] = {}
    for task_id, ev in events.items():
        takes = [s for s, w in ev if w == "device turn taken"]
        gives = [s for s, w in ev if w == "device turn given back"]
        assert len(takes) == len(gives) == 2, ev  # inputs and weights; the first compiled call
        # Compiled between the two turns, holding nothing: importing inductor and compiling alone take seconds
        # (a turn taken before the compile instead of at its end would follow the first at once).
        assert takes[1] - gives[0] >= 1.0, ev
        t0 = next(s for s, w in ev if w.startswith("time start"))
        t1 = next(s for s, w in ev if w.startswith("time end"))
        busy[task_id] = list(zip(takes, gives, strict=True)) + [(t0, t1)]
    (a, b) = busy.values()
    for x0, x1 in a:
        for y0, y1 in b:
            assert x1 <= y0 or y1 <= x0, (a, b)  # trace stamps are 0.1 s: touching ends are fine
