"""The suite baseline's "build" stage: compile each task's reference with ``torch.compile`` ahead of its turn
on the device, so the device stage finds it in a warm inductor cache.

Why: a cold ``torch.compile`` of one reference costs 5-30 s of CPU (inductor codegen plus Triton/C++
compiles), and in the device stage it runs while the GPU sits idle. Run by the build pool instead, many
compiles proceed at once on the host's cores while a lane times earlier tasks; the device worker's own
``CompileBaseline`` is then a cache hit (FX graph and AOT autograd caches, measured: the hit does not depend
on ``compile_threads``) and costs about a second.

Trust: only references (suite code) are compiled into this cache, and only reference-only runs
(``EngineConfig.reference_only``) point their workers at it. Candidate evaluations keep a private inductor
cache per worker (engine/sandbox.py), so a candidate can neither read nor poison the baseline's compiled code
through it.

A warm-up that fails or hangs is not a verdict: the device stage compiles again itself (cold, under its own
timeout) and records a ``compile_error`` on the row if that fails too.
"""

from __future__ import annotations

import time
from pathlib import Path

from multikernelbench.backends.base import Backend
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.device_stage import worker_limits
from multikernelbench.engine.messages import BaselineCompiled, CompileBaseline, Setup
from multikernelbench.engine.reference import SeedSource
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.engine.trace import Trace, trace_label
from multikernelbench.tasks.record import Task
from multikernelbench.util.procs import Limits


def reference_cache_env(config: EngineConfig, backend: Backend) -> dict[str, str]:
    """Inductor and Triton caches shared by the warm-up workers and the device workers of reference-only
    runs (kept across runs under the build root, so a resumed baseline starts warm)."""
    root = Path(config.build_root) / backend.name / "reference-compile-cache"
    return {"TORCHINDUCTOR_CACHE_DIR": str(root / "inductor"), "TRITON_CACHE_DIR": str(root / "triton")}


class ReferenceWarmup:
    """Compiles one task's reference for its timing shape in a fresh worker (trusted code, no sandbox limits
    beyond the usual output cap) and leaves the result in the shared cache."""

    def __init__(self, backend: Backend, config: EngineConfig, seeds: SeedSource, trace: Trace,
                 zygote=None) -> None:
        self.backend, self.config, self.seeds, self.trace, self.zygote = backend, config, seeds, trace, zygote
        self.cache_env = reference_cache_env(config, backend)

    def run(self, task: Task, gpu: int | None) -> tuple[bool, float, str]:
        """(compiled, seconds, why not): the pipeline goes on either way."""
        who = trace_label(task.id, "reference")
        shape = task.shape_for_timing(self.backend.times_on_cpu_shape)
        build_dir = Path(self.config.build_root) / self.backend.name / "reference"
        env = {**self.backend.worker_env(build_dir), **self.backend.lane_env(gpu), **self.cache_env}
        # The device worker's thread count: inductor's CPU code bakes it in and keys its cache on it (a warm-up
        # with another count is a cache miss there, measured); GPU kernels do not depend on it.
        setup = Setup(backend=self.backend.name, backend_options=self.backend.options, build_dir=str(build_dir),
                      threads=self.config.threads, task=task.to_row(), runtime_checks=False,
                      require_custom_kernel=False)
        t0 = time.perf_counter()
        self.trace(who, "reference warm-up start")
        session = None
        try:
            # The run's uid (engine/worker_uid.py): its device workers write the same shared caches, and a root
            # warm-up beside them took those folders from them.
            run_as = worker_limits(self.config, self.backend)
            limits = Limits(file_size_mb=self.config.output_limit_mb, run_as_uid=run_as.run_as_uid,
                            run_as_gid=run_as.run_as_gid, max_processes=run_as.max_processes)
            session = WorkerSession("compile", env, limits, setup,
                                    zygote=self.zygote, trace=None, who=who)
            session.call(CompileBaseline(shape=shape, weight_seed=self.seeds.next("warmup", task.id),
                                         seed=self.seeds.next("warmup", task.id)),
                         timeout=self.config.timing.compile_baseline_timeout_s,
                         what="compiling the reference ahead of timing", judge_evidence=False,
                         expect=BaselineCompiled)
            ok, why = True, ""
        except Verdict as v:
            ok, why = False, f"{v.status.value}: {v.message[:500]}"
        finally:
            if session is not None:
                session.close()
        seconds = time.perf_counter() - t0
        self.trace(who, f"reference warm-up end after {seconds:.1f} s: {'ok' if ok else why}")
        return ok, seconds, why
