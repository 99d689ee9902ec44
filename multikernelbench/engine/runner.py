"""Evaluate many candidates as a pipeline: builds in a pool of CPU workers, device stages in one lane per GPU.

* **Builds overlap for real.** ``compile_workers`` builds run at once (default: the backend's choice for
  this machine). Shared build caches (the CUDA precompiled header) are warmed by a trusted background
  process before the pool starts; no build waits for them.
* **A pipeline.** On backends whose builds and timing use different resources (CUDA: builds on CPU cores,
  timing on the GPU) a built candidate goes straight to a free device lane while later ones still build;
  where both share the cores (the CPU backend) the device stage starts after the last build, so builds
  never run inside a CPU candidate's clock.
* **Lanes per GPU.** A lane is a thread with its own :class:`ReferenceService` on its GPU and device
  workers that see only that GPU (``CUDA_VISIBLE_DEVICES``); the parent's reference work and the lane's
  worker never use the GPU at the same time. ``lanes_per_gpu`` > 1 lanes share a GPU through its turns
  (engine/gpu_turns.py): loads, checks and worker ends side by side, every clock alone on the GPU; by default
  their number comes from the GPUs' free memory and the cores (engine/lane_count.py).
* **One writer.** The stages return outcomes (engine/outcomes.py); the calling thread alone turns them into
  records (engine/scheduler.py) and writes each as its candidate finishes (the store is only touched from
  that thread), so an interrupted run resumes where it stopped.

Each build and each device stage happens in a fresh worker process, so one candidate cannot leave state
(patched modules, leaked threads, a corrupted device context) behind for the next.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from multikernelbench.backends import Backend, get_backend
from multikernelbench.engine import build_cache
from multikernelbench.engine.build_stage import BuildStage
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.clean_reference import CleanReference
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.executor import Executor
from multikernelbench.engine.job import Job
from multikernelbench.engine.kernel_sandbox import support as sandbox_support
from multikernelbench.engine.lane_count import LaneChoice
from multikernelbench.engine.progress import Progress
from multikernelbench.engine.reference import SeedSource
from multikernelbench.engine.schedule import Schedule
from multikernelbench.engine.scheduler import Scheduler
from multikernelbench.engine.thread_executor import ThreadExecutor
from multikernelbench.engine.trace import HelperLog, Trace
from multikernelbench.records import EvalResult, FailureKind, Status
from multikernelbench.store import Label, ResultStore
from multikernelbench.tasks.record import Task
from multikernelbench.util.procs import process_age_s

ALLOW_ENV = "MKB_ALLOW_CODE_EXECUTION"


def _since_start() -> str:
    """The "(N s after the process started)" suffix of a trace line; empty where the age cannot be read."""
    age = process_age_s()
    return f" ({age:.1f} s after the process started)" if age is not None else ""


class CodeExecutionNotAllowed(RuntimeError):
    pass


def check_opt_in(config: EngineConfig) -> None:
    if config.allow_code_execution or os.environ.get(ALLOW_ENV) == "1":
        from multikernelbench.engine.kernel_sandbox import WeakSandbox, require

        try:
            require(config.allow_weak_sandbox)  # never silently weaker
        except WeakSandbox as exc:
            raise CodeExecutionNotAllowed(str(exc)) from None
        return
    raise CodeExecutionNotAllowed(
        "Evaluating candidates runs untrusted, model-generated code on this machine. The harness isolates it in "
        "worker processes that the kernel sandboxes (Landlock, seccomp; see multikernelbench/anticheat/README.md "
        "for what that does not stop). To proceed, pass "
        f"--allow-code-execution or set {ALLOW_ENV}=1.")


class Runner:
    def __init__(self, config: EngineConfig, store: ResultStore | None = None,
                 on_result: Callable[[EvalResult, Candidate], None] | None = None, progress: bool = True) -> None:
        check_opt_in(config)
        from multikernelbench.anticheat.policy import apply as apply_policy

        apply_policy(config.policy, config.anticheat)
        self.config = config
        self.store = store
        self.on_result = on_result
        self.show_progress = progress
        self.backend: Backend = get_backend(config.backend, threads=config.threads, **config.backend_options)
        self.seeds = SeedSource(config.seed)
        self.trace = Trace(config.trace_path)
        self.zygote = None
        self._early_zygote = None  # started by prestart(), adopted by the run (or closed by discard_prestart)
        #: Per lane: reference forwards computed by its ReferenceService, and tasks whose references it still
        #: held at the end (tests check reuse and release with them).
        self.reference_counts: dict[str, int] = {}
        self.reference_held: dict[str, list[str]] = {}
        #: The reference timed once per task by a clean worker (anticheat/clock_audit.py), shared by the lanes.
        self.clean_refs = CleanReference()
        #: What the run's end removed from the build cache (engine/build_cache.py), when it capped it.
        self.pruned: build_cache.PruneReport | None = None
        #: Lanes per GPU as measured when ``lanes_per_gpu`` is 0 (engine/lane_count.py), at the first run.
        self.lane_choice: LaneChoice | None = None
        #: Candidates run again after their lane (or shipped build) was lost (engine/scheduler.py; Ray lanes).
        self.rescheduled: list[str] = []

    # ------------------------------------------------------------------------------------------------
    def prestart(self) -> None:
        """Start the zygote's imports now, beside the caller's own slow steps (``mkb eval`` loads the suite and
        reads the candidates: ~5 s on the H200, as long as the zygote's imports, which every build waited for).
        :meth:`evaluate` adopts it; a caller that ends without evaluating calls :meth:`discard_prestart`."""
        if self._early_zygote is None:
            self._early_zygote = self._start_zygote(wait=False)
            if self._early_zygote is not None:
                self.trace("runner", "zygote started early" + _since_start())

    def discard_prestart(self) -> None:
        if self._early_zygote is not None:
            self._early_zygote.close()
            self._early_zygote = None

    def evaluate(self, tasks: Iterable[Task], candidates: list[Candidate]) -> list[EvalResult]:
        by_id = {t.id: t for t in tasks}
        unknown = sorted({c.task_id for c in candidates} - set(by_id))
        if unknown:
            raise KeyError(f"candidates name unknown task ids: {unknown}")
        avail = self.backend.availability()
        # The warmer before anything slow (the device's name starts CUDA here, nvcc is asked its version, the
        # store is read): what it makes (light-header analyses, host prefixes, PCH) is what the first builds
        # wait for. It warms for every candidate's flags; one the store answers only costs the warmer a scan,
        # and a run with nothing left to evaluate stops it at once.
        sources = [c.source for c in candidates if c.source.strip()]
        warmer = self.backend.prepare_builds(Path(self.config.build_root), sources) \
            if avail.ok and sources and not self.config.reference_only else None
        if warmer is not None:
            self.trace("runner", "warmer started" + _since_start())
        warmer_log = HelperLog(warmer, self.trace, "warmer")
        try:
            results = self._evaluate_all(by_id, candidates, avail, warmer)
        finally:
            self.discard_prestart()  # not adopted: the backend is unavailable or every result was stored
            if warmer is not None:
                warmer.stop()  # before the log is closed: its last lines are read as it stops
            warmer_log.close()
        self._cap_build_cache()
        return results

    def _cap_build_cache(self) -> None:
        """The build cache back under ``build_cache_gb`` (least recently used candidates' folders first)."""
        if self.config.build_cache_gb <= 0:
            return
        report = build_cache.prune(Path(self.config.build_root), max_bytes=int(self.config.build_cache_gb * 1e9))
        self.pruned = report
        if report.removed:
            self.trace("runner", f"build cache: removed {len(report.removed)} folders "
                                 f"({report.freed_bytes / 1e6:.1f} MB), {report.kept_bytes / 1e6:.1f} MB kept")

    def _evaluate_all(self, by_id: dict[str, Task], candidates: list[Candidate], avail, warmer) -> list[EvalResult]:
        self.hardware = self.backend.hardware() if avail.ok else f"unavailable {self.backend.name}"
        self.versions = self.backend.versions()
        results: dict[int, EvalResult] = {}
        todo: list[Job] = []
        for i, cand in enumerate(candidates):
            task = by_id[cand.task_id]
            if not avail.ok:
                results[i] = self._blank(task, cand, Status.UNAVAILABLE, f"backend {self.backend.name}: {avail.reason}")
                continue
            if not cand.source.strip() and not self.config.reference_only:
                results[i] = self._blank(task, cand, Status.COMPILE_ERROR,
                                         "no code could be extracted from the response")
                results[i].finished_at = time.time()
                if self.store is not None:
                    self.store.put(results[i], self._label(cand, task))
                continue
            stored = self.store.get(task.id, task.content_hash, self.backend.name, self.hardware,
                                    cand.code_hash, self.config.policy) if self.store else None
            if stored is not None and not self._reusable(stored):
                stored = None  # judged without a check this run asks for: evaluated again, then replaced
            if stored is not None and self.store is not None:
                self.store.put_label(stored, self._label(cand, task))
                results[i] = stored
            else:
                # Fail closed: a record that escapes without a verdict says the harness did not finish it.
                todo.append(Job(i, task, cand, self._blank(task, cand, Status.RUNTIME_ERROR,
                                                            "harness: evaluation did not finish")))
        for i in sorted(results):
            self._emit(results[i], candidates[i])
        if todo:
            start = "waiting for the zygote started early" if self._early_zygote is not None else "starting the zygote"
            self.trace("runner", f"{len(todo)} to evaluate: {start}" + _since_start())
            try:
                self.zygote = self._start_zygote()
                self.trace("runner", "zygote ready" if self.zygote is not None else "no zygote")
                with Progress(enabled=self.show_progress) as bar:
                    bar.add("compile", len(todo))
                    bar.add("evaluate", len(todo))
                    self._pipeline(todo, results, bar, warmer)
            finally:
                if self.zygote is not None:
                    self.zygote.close()
        return [results[i] for i in range(len(candidates))]

    def _reusable(self, stored: EvalResult) -> bool:
        """Results are keyed by code, not by the checks they had: a correct result stored without the fresh
        shapes this run asks for (``--fresh-shapes``) does not answer it. A harness error answers nothing about
        the candidate: it is evaluated again."""
        if stored.failure is FailureKind.HARNESS_ERROR:
            return False
        if self.config.fresh_shapes and stored.status == Status.CORRECT:
            return stored.fresh_shapes_checked is not None
        return True

    def _start_zygote(self, wait: bool = True):
        """A pre-imported process to fork workers from (saves ~4 s of CPU per worker); None to use fresh
        interpreters, which is also the fallback when the zygote cannot start. ``wait=False``: started, not yet
        ready (see :meth:`prestart`); with ``wait``, the one :meth:`prestart` started if there is one. Where the
        process installed a pool (engine/zygote_pool.py), a lease on its kept zygote: the run's ``close`` ends
        the lease, not the zygote."""
        if not (self.config.zygote and self.backend.zygote_ok):
            return None
        from multikernelbench.engine.zygote import Zygote, ZygoteError
        from multikernelbench.engine.zygote_pool import ZygotePool

        early, self._early_zygote = self._early_zygote, None
        try:
            if early is not None:
                early.wait_ready()
                return early
            from multikernelbench.util.worker_env import base_env

            env = base_env()  # the zygote's own environment is what its forked workers' /proc/self/environ shows
            env.update(self.backend.worker_env(Path(self.config.build_root)))
            preload = tuple(self.backend.zygote_preload)
            pool = ZygotePool.current  # None unless the process installed one (the test suite does)
            kept = pool.lease(env, preload, wait) if pool is not None else None
            return kept if kept is not None else Zygote(env, preload, wait=wait)
        except ZygoteError as exc:
            print(f"warning: {exc}; starting workers as fresh interpreters", file=sys.stderr)
            return None

    # ------------------------------------------------------------------------------------------------
    def gpus(self) -> list[int]:
        gpus = list(self.config.gpus) if self.config.gpus is not None else self.backend.gpu_indices()
        return gpus if self.backend.device_type == "cuda" else []

    def lanes(self) -> list[int | None]:
        """GPU index per device lane (None for a CPU lane); ``lanes_per_gpu`` lanes share each GPU (None: the
        backend's default; 0: as many as :func:`~.lane_count.measure` finds room for, measured once per runner
        and written to the trace)."""
        gpus = self.gpus()
        if not gpus:
            return [None] * max(1, self.config.device_workers)
        per_gpu = self.config.lanes_per_gpu
        if per_gpu is None:
            per_gpu = self.backend.default_lanes_per_gpu
        if per_gpu <= 0:
            if self.lane_choice is None:
                from multikernelbench.engine import lane_count

                self.lane_choice = lane_count.measure(gpus)
                self.trace("runner", self.lane_choice.label())
            per_gpu = self.lane_choice.per_gpu
        return [g for _ in range(per_gpu) for g in gpus]

    def _pipeline(self, todo: list[Job], results: dict[int, EvalResult], bar, warmer=None) -> None:
        """Builds, device lanes and the one scheduling loop over ``todo`` (engine/scheduler.py)."""
        schedule = Schedule(self.config, [job.task.id for job in todo], self.backend.overlap_compile_with_timing,
                            warmer)
        Scheduler(self, todo, results, bar, schedule, self._executor(schedule)).run()

    def _executor(self, schedule: Schedule) -> Executor:
        """What moves the jobs: threads on this machine (the Ray runner's moves them on its cluster)."""
        return ThreadExecutor(self, schedule)

    def finish(self, job: Job, results: dict[int, EvalResult], bar) -> None:
        """A job's record is final: into the results, the store and the ``on_result`` callback (the scheduler calls
        this once per job, from its thread)."""
        job.result.finished_at = time.time()
        results[job.index] = job.result
        if self.store is not None:
            self.store.put(job.result, self._label(job.cand, job.task))
        bar.advance("evaluate")
        self._emit(job.result, job.cand)

    def _emit(self, result: EvalResult, cand: Candidate) -> None:
        if self.on_result:
            self.on_result(result, cand)

    # ------------------------------------------------------------------------------------------------
    def _blank(self, task: Task, cand: Candidate, status: Status, message: str = "") -> EvalResult:
        return EvalResult(task_id=task.id, task_hash=task.content_hash, backend=self.backend.name,
                          candidate=cand.label, code_hash=cand.code_hash, status=status, message=message,
                          hardware=self.hardware, versions=self.versions, started_at=time.time(),
                          sandbox=sandbox_support().label(), policy=self.config.policy)

    def _label(self, cand: Candidate, task: Task | None) -> Label:
        category = task.category if task else cand.task_id.split(".")[0]
        return Label(cand.meta.model, cand.meta.strategy, cand.meta.sample_index, category)

    def build_dir(self, cand: Candidate) -> Path:
        return BuildStage(self.backend, self.config, self.trace).build_dir(cand)


def reference_candidates(tasks: Iterable[Task]) -> list[Candidate]:
    """One stand-in per task for ``EngineConfig(reference_only=True)`` runs (the suite baseline); stored
    under the code hash ``reference``, so a baseline resumes like any evaluation."""
    from multikernelbench.store import Label

    return [Candidate(task_id=t.id, source="", label="reference", code_hash="reference",
                      meta=Label(model="reference", strategy="baseline")) for t in tasks]


def evaluate_candidates(tasks: Iterable[Task], candidates: list[Candidate], config: EngineConfig,
                        store: ResultStore | None = None, progress: bool = False,
                        on_result: Callable[[EvalResult, Candidate], None] | None = None) -> list[EvalResult]:
    """Evaluate candidates against their tasks on this machine (``multikernelbench.cluster.evaluate_candidates``
    also runs them on Ray when ``config.ray_address`` is set)."""
    if config.ray_address:
        raise ValueError("config.ray_address is set: use multikernelbench.cluster.evaluate_candidates (the engine "
                         "does not import the cluster layer above it)")
    return Runner(config, store, on_result=on_result, progress=progress).evaluate(tasks, candidates)
