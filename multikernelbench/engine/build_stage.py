"""Build one candidate in a fresh compile worker (CPU only, many at once), cached by code hash.

The static checks run here first (no worker needed). A build folder holds one code hash; a completed build
leaves a marker, so a rerun, a second candidate with the same source (a dtype variant of one operator) or
the device worker's load finds it built. Two builders of one folder take a lock: the second waits and
reuses the first build instead of racing it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import threading
import time
from pathlib import Path

from multikernelbench.anticheat.static import check_task_candidate
from multikernelbench.backends.base import Backend
from multikernelbench.engine import build_cache, disk_quota
from multikernelbench.engine.build_gate import BuildGate, BuildSample, process_cpu_seconds
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.device_stage import worker_limits
from multikernelbench.engine.messages import Compile, Compiled, Setup
from multikernelbench.engine.outcomes import BuildOutcome, record
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.engine.trace import Trace, trace_label
from multikernelbench.records import EvalResult, Status
from multikernelbench.tasks.record import Task
from multikernelbench.util.filelock import file_lock

MARKER = "mkb_compiled.json"


def read_marker(build_dir: Path, toolchain: dict[str, str] | None = None) -> float | None:
    """Seconds the cached build took, or None when there is no complete build (an unreadable marker is
    a miss, not an error: the build simply runs again). With ``toolchain`` (``Backend.toolchain``), a build
    made by another one (another venv, compiler or torch) is a miss too: its objects are not what this
    environment's load would link, and the load would rebuild them under a device request's timeout."""
    try:
        marker = json.loads((build_dir / MARKER).read_text())
        seconds = marker.get("seconds")
    except (OSError, ValueError, AttributeError):
        return None
    if toolchain is not None and marker.get("toolchain") != toolchain:
        return None
    return float(seconds) if isinstance(seconds, (int, float)) else None


def write_marker(build_dir: Path, seconds: float, toolchain: dict[str, str] | None = None) -> None:
    tmp = build_dir / f".{MARKER}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"seconds": seconds, "toolchain": toolchain}))
    os.replace(tmp, build_dir / MARKER)  # readers never see a half-written marker


class BuildStage:
    def __init__(self, backend: Backend, config: EngineConfig, trace: Trace, zygote=None) -> None:
        self.backend, self.config, self.trace, self.zygote = backend, config, trace, zygote
        self._gate: BuildGate | None = None
        self._gate_lock = threading.Lock()

    @functools.cached_property
    def toolchain(self) -> dict[str, str]:
        """The backend's toolchain, read at the first build (a stage made only for :meth:`build_dir` never asks)."""
        return self.backend.toolchain()

    @property
    def gate(self) -> BuildGate | None:
        """Builds at once from their measured CPU use (engine/build_gate.py); None when the user fixed the
        number (``compile_workers``). Made at the first build under a lock: the build threads ask at once, and
        two gates (each reading the profile, which lets the other thread in) admitted their builds at rank 0
        under no shared limit."""
        if self.config.compile_workers:
            return None
        with self._gate_lock:
            if self._gate is None:
                from multikernelbench.util.procs import usable_cores

                estimate = self.config.build_cores_estimate or float(getattr(self.backend, "build_cores_estimate",
                                                                             1.0))
                self._gate = BuildGate(usable_cores(), estimate, Path(self.config.build_root) / self.backend.name)
            return self._gate

    def build_dir(self, cand: Candidate) -> Path:
        return Path(self.config.build_root) / self.backend.name / cand.code_hash

    def run(self, task: Task, cand: Candidate, result: EvalResult) -> BuildOutcome:
        """:meth:`build`, its outcome written into ``result`` (one candidate built alone, outside a run)."""
        outcome = self.build(task, cand)
        outcome.result = record(result, outcome)
        return outcome

    def build(self, task: Task, cand: Candidate) -> BuildOutcome:
        """Static checks, then the build (or the cached one); never touches a record."""
        ac = self.config.anticheat
        if ac.static_checks:
            findings = check_task_candidate(cand.source, task, self.backend.name, ac.require_custom_kernel)
            if findings:
                return BuildOutcome(False, Status.CHEAT_DETECTED,
                                    message="static check: " + "; ".join(str(f) for f in findings[:10]))
        build_dir = self.build_dir(cand)
        build_dir.mkdir(parents=True, exist_ok=True)
        with file_lock(build_dir / build_cache.LOCK):
            build_cache.touch(build_dir)  # used now: the cache's pruning keeps it (engine/build_cache.py)
            seconds = read_marker(build_dir, self.toolchain)
            if seconds is not None:  # build cache keyed by code hash and this toolchain
                return BuildOutcome(True, compile_time_s=seconds, cached=True)
            gate = self.gate
            if gate is None:
                return self._build(task, cand, build_dir)
            rank = gate.admit()
            try:
                return self._build(task, cand, build_dir, rank)
            finally:
                gate.release()

    def _nice(self, rank: int) -> int | None:
        """The compile worker's nice: on device backends builds run beside the device stage, so at least
        ``build_nice``; with the build gate, one more per build already running as this one entered (up to 19).
        The aim: under a full host the earlier builds finish near their alone speed and the lane gets its first
        candidates early and one after another; at one nice for all, a run's first wave of 8 shared the cores
        evenly and ended within 15 s of each other at +52-66 s, and the lane sat idle 12.6 s for the next wave
        (H200, 2026-12-03; the runs with this rank were on a slower machine and not set against runs without it,
        so its effect is not measured yet). Nice only orders builds against each other; a build cannot undo it."""
        base = self.config.build_nice if self.backend.device_type != "cpu" else 0
        step = rank if self.config.build_rank_nice else 0
        return min(19, base + step) if (base or step) else None

    def _build(self, task: Task, cand: Candidate, build_dir: Path, rank: int = 0) -> BuildOutcome:
        ac = self.config.anticheat
        who = trace_label(task.id, cand.code_hash)
        t0 = time.perf_counter()
        queue_mark = self.gate.queue.mark() if self.gate is not None else None
        self.trace(who, "build start")
        outcome = BuildOutcome(True)
        session = None
        cpu_s = None
        try:
            setup = Setup(backend=self.backend.name, backend_options=self.backend.options, build_dir=str(build_dir),
                          threads=1, runtime_checks=ac.runtime_checks,
                          require_custom_kernel=ac.require_custom_kernel)
            limits = worker_limits(self.config, self.backend)
            nice = self._nice(rank)
            if nice is not None:
                limits = dataclasses.replace(limits, nice=max(nice, limits.nice))
            session = WorkerSession("compile", self.backend.worker_env(build_dir), limits, setup, zygote=self.zygote,
                                    anticheat=ac, trace=None, who=who)
            from multikernelbench.engine.init_build import init_args_for

            init_args = None if self.config.reference_only else init_args_for(task, cand.source)
            reply, _ = session.call(Compile(cand.source, init_args), timeout=self.config.compile_timeout_s,
                                    what="compiling",
                                    expect=Compiled)
            if not reply.ok:
                outcome = BuildOutcome(False, Status.COMPILE_ERROR, message=reply.message)
        except Verdict as v:
            # an exception while building/importing is a compile error
            status = Status.COMPILE_ERROR if v.status == Status.RUNTIME_ERROR else v.status
            outcome = BuildOutcome(False, status, v.failure, v.message)
        finally:
            if session is not None:
                outcome.stdout = session.stdout()
                proc = session.worker.proc
                if outcome.ok and proc is not None:  # the worker and every compiler it waited for, read before it goes
                    cpu_s = process_cpu_seconds(proc.pid)
                over = disk_quota.over_quota([session.worker.workdir, build_dir], self.config.disk_quota_mb)
                session.close()
                if over:
                    disk_quota.remove(build_dir)
                    outcome = BuildOutcome(False, Status.RUNTIME_ERROR, message=over, stdout=outcome.stdout)
        seconds = outcome.compile_time_s = time.perf_counter() - t0
        self.trace(who, f"build end after {seconds:.1f} s: "
                        f"{'ok' if outcome.ok else outcome.status.value if outcome.status else '?'}")
        if not outcome.ok:  # the folder is the compile worker's to write: a marker it planted is not a build
            with contextlib.suppress(OSError):
                (build_dir / MARKER).unlink(missing_ok=True)
            return outcome
        write_marker(build_dir, seconds, self.toolchain)
        if cpu_s is not None and self.gate is not None and queue_mark is not None:
            self.gate.add(BuildSample(cpu_s, seconds, self.gate.crowding(queue_mark)))
        return outcome
