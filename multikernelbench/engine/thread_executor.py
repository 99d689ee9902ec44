"""The local executor: build steps in a thread pool, device steps in one thread per lane (engine/executor.py
says what an executor does; engine/scheduler.py drives it).

Why threads: a build is a compile worker to wait for, a device step a device worker to talk to; the parent's
work in both is waiting and the stages return outcomes (engine/outcomes.py) in typed completions on one queue,
which only the scheduler's thread reads and records. A lane takes the next built job from one shared queue
itself, when it can start that job's worker ahead of it (engine/prefetch.py), so the choice of lane is made
here, in the lane's thread, not by the scheduler.
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from multikernelbench.engine.build_stage import BuildStage
from multikernelbench.engine.device_stage import CandidateEvaluation
from multikernelbench.engine.executor import Built, Completion, Evaluated, NotStarted
from multikernelbench.engine.gpu_turns import GpuTurns
from multikernelbench.engine.job import Job, JobHost
from multikernelbench.engine.lane_gate import LaneGate
from multikernelbench.engine.messages import ErrorKind
from multikernelbench.engine.outcomes import BuildOutcome, DeviceOutcome, HarnessError, Outcome
from multikernelbench.engine.prefetch import Prefetch
from multikernelbench.engine.reference import ReferenceService
from multikernelbench.engine.schedule import Schedule
from multikernelbench.engine.trace import trace_label
from multikernelbench.engine.warmup import ReferenceWarmup, reference_cache_env
from multikernelbench.engine.worker_channel import classify
from multikernelbench.flags import Flag, FlagKind


class ThreadExecutor:
    """The local runner's executor (see the module docstring and :class:`~.executor.Executor`)."""

    def __init__(self, runner: JobHost, schedule: Schedule) -> None:
        self.runner, self.schedule = runner, schedule
        cfg = self.cfg = runner.config
        self.builder = BuildStage(runner.backend, cfg, runner.trace, runner.zygote)
        self.ready: queue.Queue[Job | None] = queue.Queue()
        self.posted: queue.Queue[Completion] = queue.Queue()
        self.lanes = runner.lanes()
        # Each GPU's turns (engine/gpu_turns.py): loads, checks and worker ends take them shared, every clock
        # (timing, the clean reference's, a torch.compile request's device steps: engine/device_turns.py)
        # exclusive, so lanes that share a GPU check side by side and never run a kernel inside another's
        # clock. CPU lanes are for correctness-only runs and take none, unless ``cpu_lanes_take_turns``.
        self.device_locks: dict[int | None, GpuTurns] = {g: GpuTurns() for g in set(self.lanes) if g is not None}
        if cfg.cpu_lanes_take_turns and None in self.lanes:
            self.device_locks[None] = GpuTurns()
        # Lanes sharing a device: a candidate out of device memory beside the others is evaluated again with the
        # device to itself (engine/lane_gate.py).
        self.gates = {g: LaneGate(self.lanes.count(g)) for g in self.device_locks if self.lanes.count(g) > 1}
        # A lane alone on its device starts the next candidate's worker ahead (engine/prefetch.py); lanes that
        # share one (a GPU's lanes_per_gpu, parallel CPU lanes) already start workers beside each other's clocks.
        self.prefetch_workers = cfg.prefetch_workers and len(set(self.lanes)) == len(self.lanes)
        self.warmup = ReferenceWarmup(runner.backend, cfg, runner.seeds, runner.trace, runner.zygote) \
            if cfg.reference_only and cfg.reference_warmup and cfg.timing.compile_baseline else None
        self.n_built = itertools.count()
        self.lane_threads = [threading.Thread(target=self.lane, args=(g,), name=f"lane-{g}", daemon=True)
                             for g in self.lanes]
        self.build_slots = max(1, cfg.compile_workers or runner.backend.default_compile_workers())
        self.pool = ThreadPoolExecutor(self.build_slots, thread_name_prefix="build")

    # ---- the executor's interface (the scheduler's thread) ----------------------------------------------
    def submit_build(self, job: Job) -> None:
        self.pool.submit(self.build_step, job)

    def open_lanes(self) -> None:
        for t in self.lane_threads:
            if t.ident is None:
                t.start()

    def submit_device(self, job: Job, first: bool = False) -> None:
        """``first`` needs no queue jump here: a local lane is never lost, so no job runs again."""
        self.ready.put(job)

    def release(self, task_id: str) -> None:
        """The clean timings now; each lane frees its references in its own thread, after its current job."""
        self.runner.clean_refs.release(task_id)

    def poll(self, timeout: float) -> list[Completion]:
        try:
            out = [self.posted.get(timeout=timeout)]
        except queue.Empty:
            return []
        while True:
            try:
                out.append(self.posted.get_nowait())
            except queue.Empty:
                return out

    def close(self, aborted: bool = False) -> None:
        """Running builds are waited for; on an abort the lanes are left to die with the process (daemons)."""
        self.pool.shutdown(wait=True, cancel_futures=aborted)
        if aborted:
            return
        for _ in self.lane_threads:
            self.ready.put(None)
        for t in self.lane_threads:
            if t.is_alive():
                t.join()

    # ---- steps, each in its own thread ------------------------------------------------------------------
    def build_step(self, job: Job) -> None:
        """Build one candidate (or, for the baseline, warm its reference's compile cache)."""
        if self.cfg.reference_only:
            self.posted.put(Built(job, self.warm_reference(job), goes_on=True))
            return
        try:
            outcome = self.builder.build(job.task, job.cand)
        except Exception as exc:  # a harness bug must not lose the run: record it on this candidate
            self.posted.put(Built(job, HarnessError(f"harness error while building: {exc!r}"), goes_on=False))
            return
        self.posted.put(Built(job, outcome, goes_on=outcome.ok))

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
                    self.posted.put(NotStarted(job, skipped))
                    continue
                ahead = self.prefetch(job, refs, gpu)
                outcome = self.gated_step(job, refs, gpu, current, ahead)
                self.release_finished(job, refs)
                self.posted.put(Evaluated(job, outcome))
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

    def gated_step(self, job: Job, refs: ReferenceService, gpu: int | None, current: Prefetch | None,
                   ahead: Prefetch | None) -> Outcome:
        """The job's device stage beside the other lanes' on its device; once more with the device to itself
        when it ran out of device memory there (engine/lane_gate.py)."""
        gate = self.gates.get(gpu)
        if gate is None:  # a lane alone on its device (prefetching, maybe): nothing to share
            return self.device_step(job, refs, gpu, current, ahead)
        with gate.stage():
            first = self.device_step(job, refs, gpu, current, ahead)
        if not (isinstance(first, (DeviceOutcome, HarnessError)) and first.out_of_memory()):
            return first
        label = trace_label(job.task.id, job.cand.code_hash)
        self.runner.trace(label, f"out of memory beside {gate.lanes - 1} other lane(s) on its device: "
                                 "evaluated again with the device to itself")
        with gate.alone():
            self.runner.trace(label, "alone on its device")
            outcome = self.device_step(job, refs, gpu)
            self.runner.trace(label, "alone on its device: done")
        note = Flag(FlagKind.REEVALUATED_ALONE,
                    f"ran out of device memory beside {gate.lanes - 1} other lane(s) ({first.message[:160]}); "
                    "this is its evaluation with the device to itself")
        if isinstance(outcome, DeviceOutcome):
            outcome.flags.append(note)
        elif isinstance(outcome, HarnessError) and outcome.partial is not None:
            outcome.partial.flags.append(note)
        return outcome

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
                                 evaluation.outcome if evaluation is not None else None,
                                 device_oom=classify(exc) is ErrorKind.OUT_OF_MEMORY)
            print(error.message, file=sys.stderr)
            return error

    def release_finished(self, job: Job, refs: ReferenceService) -> None:
        """After a job's device step: free this lane's references of tasks that are done, this job's own when it
        was its task's last (the scheduler counts it only after this lane has posted it)."""
        done = self.schedule.done_tasks()
        if self.schedule.last_of_task(job.task.id):
            done.add(job.task.id)
        for task_id in set(refs.held_tasks()) & done:
            refs.release(task_id)

