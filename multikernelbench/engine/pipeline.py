"""The local runner's pipeline over one run's jobs: build steps in a thread pool, device steps in one thread per
lane, and one collecting loop (the calling thread) that turns every stage's outcome into the job's record.

Why the shape: the stages run in many threads but never touch a record; each returns its outcome
(engine/outcomes.py) in an :class:`Event` on one queue, and only :meth:`Pipeline.collect` (the runner's thread)
records it, stores it and reports progress. Which step a job is in is the event kind, an enum, not a string.
"""

from __future__ import annotations

import enum
import itertools
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from multikernelbench.engine.build_stage import BuildStage
from multikernelbench.engine.device_stage import CandidateEvaluation
from multikernelbench.engine.gpu_turns import GpuTurns
from multikernelbench.engine.job import Job, JobHost
from multikernelbench.engine.outcomes import BuildOutcome, HarnessError, Outcome, record
from multikernelbench.engine.prefetch import Prefetch
from multikernelbench.engine.reference import ReferenceService
from multikernelbench.engine.schedule import Schedule
from multikernelbench.engine.trace import trace_label
from multikernelbench.engine.warmup import ReferenceWarmup, reference_cache_env
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import EvalResult


class Event(enum.Enum):
    """What happened to a job, posted by a stage's thread to the collecting loop."""

    BUILT = "built"  # its build step ended (the outcome says whether it goes on to a lane)
    DONE = "done"  # its evaluation ended (a failed build, or its device step): record, store, emit
    SKIPPED = "skipped"  # not started before the run's time limit: returned, neither stored nor emitted


@dataclass
class Posted:
    event: Event
    job: Job
    outcome: Outcome | None = None  # None: nothing new to record (a build step that had nothing to do)


class Pipeline:
    """One run of the local pipeline (see :class:`multikernelbench.engine.runner.Runner`)."""

    def __init__(self, runner: JobHost, todo: list[Job], results: dict[int, EvalResult], bar: Any,
                 warmer: Any = None) -> None:
        self.runner, self.todo, self.results, self.bar, self.warmer = runner, todo, results, bar, warmer
        cfg = self.cfg = runner.config
        self.builder = BuildStage(runner.backend, cfg, runner.trace, runner.zygote)
        self.ready: queue.Queue[Job | None] = queue.Queue()
        self.posted: queue.Queue[Posted] = queue.Queue()
        self.lanes = runner.lanes()
        # Each GPU's turns (engine/gpu_turns.py): loads, checks and worker ends take them shared, every clock
        # (timing, the clean reference's, a torch.compile request's device steps: engine/device_turns.py)
        # exclusive, so lanes that share a GPU check side by side and never run a kernel inside another's
        # clock. CPU lanes are for correctness-only runs and take none, unless ``cpu_lanes_take_turns``.
        self.device_locks: dict[int | None, GpuTurns] = {g: GpuTurns() for g in set(self.lanes) if g is not None}
        if cfg.cpu_lanes_take_turns and None in self.lanes:
            self.device_locks[None] = GpuTurns()
        self.overlap = runner.backend.overlap_compile_with_timing
        self.schedule = Schedule(cfg, [job.task.id for job in todo], self.overlap, warmer)
        # A lane alone on its device starts the next candidate's worker ahead (engine/prefetch.py); lanes that
        # share one (a GPU's lanes_per_gpu, parallel CPU lanes) already start workers beside each other's clocks.
        self.prefetch_workers = cfg.prefetch_workers and len(set(self.lanes)) == len(self.lanes)
        self.warmup = ReferenceWarmup(runner.backend, cfg, runner.seeds, runner.trace, runner.zygote) \
            if cfg.reference_only and cfg.reference_warmup and cfg.timing.compile_baseline else None
        self.n_built = itertools.count()
        self.lane_threads = [threading.Thread(target=self.lane, args=(g,), name=f"lane-{g}", daemon=True)
                             for g in self.lanes]

    def run(self) -> None:
        if self.schedule.open_at_start():
            self.start_lanes()
        workers = self.cfg.compile_workers or self.runner.backend.default_compile_workers()
        with ThreadPoolExecutor(max(1, workers), thread_name_prefix="build") as pool:
            for job in self.todo:
                pool.submit(self.build_step, job)
            try:
                self.collect()
            except BaseException:  # Ctrl-C (util/interrupt.py): start no build that is still queued
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        for _ in self.lane_threads:
            self.ready.put(None)
        for t in self.lane_threads:
            if t.is_alive():
                t.join()

    # ---- steps, each in its own thread ------------------------------------------------------------------
    def build_step(self, job: Job) -> None:
        """Build one candidate (or, for the baseline, warm its reference's compile cache); a job that built
        goes to the lanes, one that did not is done."""
        skipped = self.schedule.too_late()
        if skipped is not None:
            self.posted.put(Posted(Event.BUILT, job))
            self.posted.put(Posted(Event.SKIPPED, job, skipped))
            return
        if self.cfg.reference_only:
            self.posted.put(Posted(Event.BUILT, job, self.warm_reference(job)))
            self.ready.put(job)
            return
        try:
            outcome = self.builder.build(job.task, job.cand)
        except Exception as exc:  # a harness bug must not lose the run: record it on this candidate
            self.posted.put(Posted(Event.BUILT, job, HarnessError(f"harness error while building: {exc!r}")))
            self.posted.put(Posted(Event.DONE, job))
            return
        self.posted.put(Posted(Event.BUILT, job, outcome))
        if outcome.ok:
            self.ready.put(job)
        else:
            self.posted.put(Posted(Event.DONE, job))

    def warm_reference(self, job: Job) -> BuildOutcome | None:
        """The baseline has nothing to build: warm the reference's compile cache instead (when asked)."""
        if self.warmup is None:
            return None
        ok, seconds, why = self.warmup.run(job.task, self.lanes[next(self.n_built) % len(self.lanes)])
        flags = [] if ok else [Flag(FlagKind.REFERENCE_WARMUP_FAILED,
                                    f"reference warm-up compile failed ({why}); compiled in the device stage instead")]
        return BuildOutcome(True, compile_time_s=seconds, flags=flags)

    def lane(self, gpu: int | None) -> None:
        """One device lane: evaluates ready jobs one at a time until told to stop (None), starting the next
        one's worker while the current one loads and is checked (engine/prefetch.py)."""
        refs = ReferenceService(self.runner.backend.reference_device(gpu))
        name = "cpu" if gpu is None else f"gpu{gpu}"
        ahead: Prefetch | None = None
        try:
            while True:
                current, ahead = ahead, None
                job = current.job if current is not None else self.ready.get()
                if job is None:
                    return
                skipped = self.schedule.too_late()
                if skipped is not None:
                    if current is not None:
                        current.discard()
                    self.posted.put(Posted(Event.SKIPPED, job, skipped))
                    continue
                ahead = self.prefetch(job, refs, gpu)
                outcome = self.device_step(job, refs, gpu, current, ahead)
                self.release_finished(job, refs)
                self.posted.put(Posted(Event.DONE, job, outcome))
        finally:
            if ahead is not None:
                ahead.discard()
            self.runner.reference_counts[name] = refs.computed
            self.runner.reference_held[name] = refs.held_tasks()

    def prefetch(self, current: Job, refs: ReferenceService, gpu: int | None) -> Prefetch | None:
        """The next ready job with its worker starting, or None (prefetching off, nothing queued yet, or the
        stop signal, which goes back on the queue for the lane's next turn)."""
        if not self.prefetch_workers or self.schedule.too_late() is not None:
            return None
        try:
            job = self.ready.get_nowait()
        except queue.Empty:
            return None
        if job is None:
            self.ready.put(None)
            return None
        try:
            return Prefetch(job, self.evaluation(job, refs, gpu), clean=job.task.id != current.task.id)
        except Exception:  # a harness bug here must not lose the job: it is evaluated without a head start
            self.ready.put(job)
            return None

    def evaluation(self, job: Job, refs: ReferenceService, gpu: int | None) -> CandidateEvaluation:
        runner = self.runner
        env = runner.backend.lane_env(gpu)
        if self.cfg.reference_only:  # references' shared compile cache (warm-up stage, earlier runs)
            env = {**env, **reference_cache_env(self.cfg, runner.backend)}
        return CandidateEvaluation(job.task, job.cand.source, runner.build_dir(job.cand), runner.backend,
                                   self.cfg, runner.seeds, refs, env_extra=env, zygote=runner.zygote,
                                   trace=runner.trace, device_lock=self.device_locks.get(gpu),
                                   clean=runner.clean_refs)

    def device_step(self, job: Job, refs: ReferenceService, gpu: int | None, current: Prefetch | None = None,
                    ahead: Prefetch | None = None) -> Outcome:
        """``current``: this job's worker, started ahead; ``ahead``: the next job's, starting now (this job's
        clocks wait for it)."""
        runner = self.runner
        runner.trace(trace_label(job.task.id, job.cand.code_hash), f"device stage start (lane {gpu})")
        evaluation = None
        try:
            if current is not None:
                current.wait()  # the job before may have ended before its clock, where the lane waits for it
                evaluation = current.evaluation
            else:
                evaluation = self.evaluation(job, refs, gpu)
            evaluation.before_clock = ahead.wait if ahead is not None else None
            return evaluation.evaluate()
        except Exception as exc:  # a harness bug must not lose the run: record it on this candidate
            error = HarnessError(f"harness error while evaluating: {exc!r}",
                                 evaluation.outcome if evaluation is not None else None)
            print(error.message, file=sys.stderr)
            return error

    def release_finished(self, job: Job, refs: ReferenceService) -> None:
        """After a job's device step: free the references of tasks whose last candidate it was."""
        self.schedule.job_done(job.task.id)
        done_tasks = self.schedule.done_tasks()
        for task_id in set(refs.held_tasks()) & done_tasks:
            refs.release(task_id)
        for task_id in done_tasks:
            self.runner.clean_refs.release(task_id)

    def start_lanes(self) -> None:
        for t in self.lane_threads:
            t.start()

    # ---- the collecting loop (the runner's thread) -------------------------------------------------------
    def collect(self) -> None:
        """Records every outcome as it arrives; the only place a job's record changes during the run."""
        done = 0
        while done < len(self.todo):
            posted = self.posted.get()
            job = posted.job
            if posted.outcome is not None:
                record(job.result, posted.outcome)
            if posted.event is Event.BUILT:
                self.bar.advance("compile")
                if self.schedule.build_ended():
                    self.start_lanes()  # CPU: the device stage starts after the last build
                continue
            done += 1
            if posted.event is Event.SKIPPED:
                self.results[job.index] = job.result
                self.bar.advance("evaluate")
                continue
            self.runner.finish(job, self.results, self.bar)
