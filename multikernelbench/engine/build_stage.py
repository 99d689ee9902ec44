"""Build one candidate in a fresh compile worker (CPU only, many at once), cached by code hash.

The static checks run here first (no worker needed). A build folder holds one code hash; a completed build
leaves a marker, so a rerun, a second candidate with the same source (a dtype variant of one operator) or
the device worker's load finds it built. Two builders of one folder take a lock: the second waits and
reuses the first build instead of racing it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from multikernelbench.anticheat.static import check_task_candidate
from multikernelbench.backends.base import Backend
from multikernelbench.engine.build_gate import BuildGate, BuildSample, process_cpu_seconds
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.device_stage import worker_limits
from multikernelbench.engine.messages import Compile, Compiled, Setup
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.engine.trace import Trace, trace_label
from multikernelbench.records import EvalResult, Status
from multikernelbench.tasks.record import Task
from multikernelbench.util.filelock import file_lock

MARKER = "mkb_compiled.json"


def read_marker(build_dir: Path) -> float | None:
    """Seconds the cached build took, or None when there is no complete build (an unreadable marker is
    a miss, not an error: the build simply runs again)."""
    try:
        seconds = json.loads((build_dir / MARKER).read_text()).get("seconds")
    except (OSError, ValueError, AttributeError):
        return None
    return float(seconds) if isinstance(seconds, (int, float)) else None


def write_marker(build_dir: Path, seconds: float) -> None:
    tmp = build_dir / f".{MARKER}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"seconds": seconds}))
    os.replace(tmp, build_dir / MARKER)  # readers never see a half-written marker


@dataclass
class BuildOutcome:
    """``ok``: built (or found built), go on to the device stage; else ``result`` holds the final verdict."""

    ok: bool
    result: EvalResult
    cached: bool = False


class BuildStage:
    def __init__(self, backend: Backend, config: EngineConfig, trace: Trace, zygote=None) -> None:
        self.backend, self.config, self.trace, self.zygote = backend, config, trace, zygote
        self._gate: BuildGate | None = None

    @property
    def gate(self) -> BuildGate | None:
        """Builds at once from their measured CPU use (engine/build_gate.py); None when the user fixed the
        number (``compile_workers``)."""
        if self._gate is None and not self.config.compile_workers:
            from multikernelbench.util.procs import usable_cores

            self._gate = BuildGate(usable_cores(), float(getattr(self.backend, "build_cores_estimate", 1.0)),
                                   Path(self.config.build_root) / self.backend.name)
        return self._gate

    def build_dir(self, cand: Candidate) -> Path:
        return Path(self.config.build_root) / self.backend.name / cand.code_hash

    def run(self, task: Task, cand: Candidate, result: EvalResult) -> BuildOutcome:
        ac = self.config.anticheat
        if ac.static_checks:
            findings = check_task_candidate(cand.source, task, self.backend.name, ac.require_custom_kernel)
            if findings:
                result.status = Status.CHEAT_DETECTED
                result.message = "static check: " + "; ".join(str(f) for f in findings[:10])
                return BuildOutcome(False, result)
        build_dir = self.build_dir(cand)
        build_dir.mkdir(parents=True, exist_ok=True)
        with file_lock(build_dir / ".mkb_build.lock"):
            seconds = read_marker(build_dir)
            if seconds is not None:  # build cache keyed by code hash
                result.compile_time_s = seconds
                return BuildOutcome(True, result, cached=True)
            gate = self.gate
            if gate is None:
                return self._build(task, cand, build_dir, result)
            with gate:
                return self._build(task, cand, build_dir, result)

    def _build(self, task: Task, cand: Candidate, build_dir: Path, result: EvalResult) -> BuildOutcome:
        ac = self.config.anticheat
        who = trace_label(task.id, cand.code_hash)
        t0 = time.perf_counter()
        self.trace(who, "build start")
        ok = True
        session = None
        cpu_s = None
        try:
            setup = Setup(backend=self.backend.name, backend_options=self.backend.options, build_dir=str(build_dir),
                          threads=1, runtime_checks=ac.runtime_checks,
                          require_custom_kernel=ac.require_custom_kernel)
            session = WorkerSession("compile", self.backend.worker_env(build_dir),
                                    worker_limits(self.config, self.backend), setup, zygote=self.zygote,
                                    anticheat=ac, trace=None, who=who)
            reply, _ = session.call(Compile(cand.source), timeout=self.config.compile_timeout_s, what="compiling",
                                    expect=Compiled)
            if not reply.ok:
                ok = False
                result.status, result.message = Status.COMPILE_ERROR, reply.message
        except Verdict as v:
            ok = False
            result.status, result.failure, result.message = v.status, v.failure, v.message
            if v.status == Status.RUNTIME_ERROR:  # an exception while building/importing is a compile error
                result.status = Status.COMPILE_ERROR
        finally:
            if session is not None:
                result.stdout = session.stdout()
                if ok:  # the worker and every compiler it waited for, read before it goes
                    cpu_s = process_cpu_seconds(session.worker.proc.pid)
                session.close()
        result.compile_time_s = time.perf_counter() - t0
        self.trace(who, f"build end after {result.compile_time_s:.1f} s: "
                        f"{'ok' if ok else result.status.value}")
        if ok:
            write_marker(build_dir, result.compile_time_s)
            if cpu_s is not None and self.gate is not None:
                self.gate.add(BuildSample(cpu_s, result.compile_time_s))
        return BuildOutcome(ok, result)
