"""The service's engine side: one thread per device lane, each taking work from the fair queue as it frees.

Why lanes and not one batch at a time: the engine runs a batch to its end, so with one engine thread a job
that arrives while a batch runs waits for the whole batch, and a candidate that sleeps 20 s at import holds
every other client for 20 s. Here each lane (a GPU, or a CPU lane) has its own thread and its own Runner
pinned to that lane; a lane that frees takes the next job at once (serve/sched.py decides whose), so a slow
job holds one lane, not the service. ``batch_size`` > 1 lets a lane take several jobs at once (their builds
overlap; the batch then runs to its end on that lane).

A Runner starts its zygote (the pre-imported process workers fork from: seconds of CPU) per ``evaluate``;
a lane that takes one job at a time would pay that per job, so each lane keeps one zygote for all its runs
(started when the lane starts, again if it dies). The zygote is trusted and only forks workers; a run of many
clients' candidates shared one already.

A run can be stopped (preemption, serve/preempt.py): every worker of a lane's run is forked by the lane's
zygote, so :class:`RunStop` knows them all and kills their process sessions (compilers included); a worker
forked after the stop is killed as it starts. The engine then ends the run as it ends any crashed worker;
the lane discards what that run reports (no result, no results-store row) and hands its jobs back to the
service. A lane without a live zygote (fresh interpreters, Ray) cannot be stopped and is never chosen.

Lanes share the Runner's GPU lock only within one Runner, so lanes are never more than the GPUs (one per
GPU). Several CPU lanes share the cores: like the engine's ``device_workers``, they suit correctness-only
service (no timing), where a sleeping or failing candidate holds a lane but no core.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import Runner
from multikernelbench.records import EvalResult
from multikernelbench.serve.worker_nice import FULL
from multikernelbench.store import Label, ResultStore
from multikernelbench.util.procs import Limits, kill_session, name_thread, parent_and_session

if TYPE_CHECKING:
    from multikernelbench.serve.jobtypes import Job, LaneHost


class WriteOnlyStore(ResultStore):
    """The results store as the service's Runner sees it: results are written, never read back.

    The store's key leaves out per-request options (timing budget, fresh shapes count), so a row there may be
    weaker than the job asks for; the service decides what is cached (serve/cachekey.py) before queueing."""

    #: True for a result that is not the candidate's: the lane's run is being stopped, or a niced run timed
    #: out (serve/worker_nice.py).
    muted: Any = staticmethod(lambda result: False)

    def get(self, *args, **kwargs) -> EvalResult | None:
        return None

    def put(self, result: EvalResult, label: Label | None = None) -> None:
        if not self.muted(result):
            super().put(result, label)

    def put_label(self, result: EvalResult, label: Label) -> None:
        if not self.muted(result):
            super().put_label(result, label)


def lane_configs(engine: EngineConfig, backend: Any, requested: int) -> list[EngineConfig]:
    """One engine config per lane: ``requested`` lanes (0: one per GPU, else the engine's ``device_workers``),
    each pinned to its GPU on a CUDA backend (never more lanes than GPUs: two Runners on one GPU would not
    share its lock, and one's kernels would run inside the other's clock). On Ray a lane is a batch in flight
    on the cluster, which places it."""
    if engine.ray_address:
        return [engine] * max(1, requested or 1)
    gpus = list(engine.gpus) if engine.gpus is not None else \
        (backend.gpu_indices() if backend.device_type == "cuda" else [])
    if gpus:
        n = min(requested or len(gpus), len(gpus))
        if requested > n:
            print(f"mkb serve: {requested} lanes asked for, {n} GPUs: one lane per GPU", file=sys.stderr)
        return [dataclasses.replace(engine, gpus=(g,)) for g in gpus[:n]]
    n = max(1, requested or engine.device_workers)
    return [dataclasses.replace(engine, device_workers=1) for _ in range(n)]


def run_config(lane: EngineConfig, fresh: int, budget: float | None) -> EngineConfig:
    timing = dataclasses.replace(lane.timing, budget_s=budget) if budget else lane.timing
    return dataclasses.replace(lane, fresh_shapes=fresh, timing=timing)


def _parent(pid: int) -> int | None:
    found = parent_and_session(pid)
    return found[0] if found else None


def _kill_worker(pid: int, parent: int | None) -> None:
    """SIGKILL a worker of a lane's run and its session. The worker itself too, while it is still the child of
    the zygote that forked it (``parent``): just forked, it may not have made its own session yet (setsid comes
    first in the worker, but after the fork), and a session kill alone then found no member and the worker ran
    on (a sleeper's build went on for its whole minute beside a waiting client, when load made that window
    long; tests/test_serve_runstop.py). A pid that ended and was reused has another parent and is left alone."""
    if parent is not None and _parent(pid) == parent:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    kill_session(pid)


class RunStop:
    """The workers one lane run forked, and whether the run is being stopped: :meth:`kill` ends every one's
    session; one forked after the stop is killed as it is adopted (so a stage that starts a worker after the
    kill does not run on)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: list[tuple[int, int | None]] = []  # (worker, the zygote that forked it)
        self.stopped = False
        self.overran = False  # the run had lasted preempt_after_s when it was stopped (serve/preempt.py)

    def adopt(self, pid: int) -> None:
        parent = _parent(pid)
        with self._lock:
            self._pids.append((pid, parent))
            stopped = self.stopped
        if stopped:
            _kill_worker(pid, parent)

    def stop(self) -> None:
        with self._lock:
            self.stopped = True

    def kill(self) -> None:
        """SIGKILL the sessions of the run's workers (a worker leads its own session: its compilers and
        anything the candidate forked go too). A session id stays in use while any member lives, so a pid
        reused by an unrelated process is never a session named here."""
        with self._lock:
            pids = list(self._pids)
        for pid, parent in pids:
            _kill_worker(pid, parent)


class _KeptZygote:
    """The lane's zygote as a Runner sees it: the Runner closes its zygote at the end of every run; this one
    stays for the lane's next run. Workers it forks are adopted by the lane's current :class:`RunStop`."""

    def __init__(self, zygote: Any, lane: _Lane) -> None:
        self._zygote = zygote
        self._lane = lane

    def __getattr__(self, name: str) -> Any:
        return getattr(self._zygote, name)

    def spawn(self, role: str, env: dict[str, str], cwd: str, limits: Limits, *args: Any, **kwargs: Any) -> Any:
        limits = self._lane.priority.limits(role, limits)  # a run on sufferance: niced (serve/worker_nice.py)
        child = self._zygote.spawn(role, env, cwd, limits, *args, **kwargs)
        stop = self._lane.run_stop
        if stop is not None:
            stop.adopt(child.pid)
        return child

    def close(self) -> None:
        pass


class _LaneRunner(Runner):
    """The local Runner with its lane's zygote instead of one started (and imported, seconds of CPU) per run."""

    def __init__(self, config: EngineConfig, store: ResultStore, on_result: Any, lane: _Lane) -> None:
        super().__init__(config, store, on_result=on_result, progress=False)
        self._lane = lane
        prepare = self.backend.prepare_builds

        def one_lane_at_a_time(*args: Any, **kwargs: Any) -> Any:
            with lane.starting:
                return prepare(*args, **kwargs)

        # A run's first step probes which precompiled headers are missing by swapping torch's module-wide
        # ninja runner (backends/extbuild/cuda_warm.py) -- process-wide state, made for one run at a time. With two
        # lanes starting runs at the same instant, the soak caught one lane inside a real build of the probe's empty
        # extension in the service process (a minute under load, holding the lane); the probes take ~0.1 s.
        setattr(self.backend, "prepare_builds", one_lane_at_a_time)  # noqa: B010 - mypy refuses assigning a method

    def _start_zygote(self, wait: bool = True) -> Any:
        return self._lane.zygote(self, wait)


class _Lane:
    """One lane's thread: take, evaluate, report each result; the zygote lives as long as the lane."""

    def __init__(self, service: LaneHost, index: int, config: EngineConfig, starting: threading.Lock) -> None:
        self.service, self.index, self.config, self.starting = service, index, config, starting
        self.labels: dict[str, Job] = {}
        self._zygote: Any = None
        self.run_stop: RunStop | None = None  # the current run's (None between runs)
        self.priority = FULL  # the current run's workers' (serve/worker_nice.py)
        self.retry: list[Job] = []  # the current run's jobs whose niced run timed out: queued again
        self.stop_lock = threading.Lock()  # orders a stop against the run's results being reported
        self.thread = threading.Thread(target=self.loop, name=f"mkb-serve-lane-{index}", daemon=True)

    def zygote(self, runner: Runner, wait: bool = True) -> Any:
        """The lane's zygote, started (or started again, if it died) by ``runner``'s own method."""
        if self._zygote is None or not self._zygote.alive():
            if self._zygote is not None:
                self._zygote.close()
            self._zygote = Runner._start_zygote(runner, wait)
        if self._zygote is None:
            return None  # fresh interpreters (no zygote on this backend, or it could not start)
        if wait:
            self._zygote.wait_ready()
        return _KeptZygote(self._zygote, self)

    def can_stop(self) -> bool:
        """Whether a run here can be stopped: its workers come from a live zygote of this lane."""
        return not self.config.ray_address and self._zygote is not None and self._zygote.alive()

    def stopping(self) -> bool:
        stop = self.run_stop
        return stop is not None and stop.stopped

    def preempt(self) -> RunStop | None:
        """Mark the current run stopped if it still has unreported jobs (called under the service's lock);
        the caller kills with the returned :class:`RunStop` after releasing that lock. Its jobs go back to the
        service when the run returns (:meth:`run`)."""
        with self.stop_lock:
            stop = self.run_stop
            if stop is None or stop.stopped or not self.labels or not self.can_stop():
                return None
            stop.stop()
            return stop

    def loop(self) -> None:
        name_thread(f"mkb-lane-{self.index}")  # and the threads its runs start (scripts/serve_cpu.py)
        store = WriteOnlyStore(self.service.config.db)
        store.muted = self.mutes
        try:
            if not self.config.ray_address:  # its imports run while the lane waits for work
                try:
                    self.zygote(self.runner(store, 0, None), wait=False)
                except Exception as exc:  # only a head start is lost
                    print(f"mkb serve: lane {self.index}: zygote not started ahead: {exc!r}", file=sys.stderr)
            while True:
                batch = self.service.take(self.index)
                if batch is None:
                    return
                groups: dict[tuple, list[Job]] = {}
                for job in batch:
                    groups.setdefault((job.fresh_shapes, job.timing_budget_s), []).append(job)
                for (fresh, budget), jobs in groups.items():
                    self.run(store, fresh, budget, jobs)
        finally:
            if self._zygote is not None:
                self._zygote.close()
            store.close()

    def runner(self, store: ResultStore, fresh: int, budget: float | None) -> Runner:
        config = run_config(self.config, fresh, budget)
        if config.ray_address:
            from multikernelbench.cluster import make_runner

            return make_runner(config, store, on_result=self.on_result, progress=False)
        return _LaneRunner(config, store, self.on_result, self)

    def mutes(self, result: EvalResult) -> bool:
        """Whether ``result`` is not the candidate's answer: the run is being stopped, or it is a niced run's
        timeout (the job runs again at full priority: serve/worker_nice.py)."""
        return self.stopping() or self.priority.retries(result)

    def on_result(self, result: EvalResult, cand: Candidate) -> None:
        with self.stop_lock:
            if self.stopping():
                return  # a stopped run's report (its workers were killed): the job runs again
            job = self.labels.pop(cand.label, None)
            if job is not None and self.priority.retries(result):
                self.retry.append(job)
                return
        if job is not None:
            self.service.metrics.observe("build", result.compile_time_s)
            self.service.finish(self.index, job, result)

    def run(self, store: ResultStore, fresh: int, budget: float | None, jobs: list[Job]) -> None:
        self.labels = {secrets.token_hex(8): job for job in jobs}  # opaque labels: a result names no job
        cands = [Candidate(task_id=j.task.id, source=j.source or "", label=label, code_hash=j.code_hash,
                           meta=Label(model=f"serve:{j.client}", strategy="serve")) for label, j in self.labels.items()]
        tasks = {j.task.id: j.task for j in jobs}
        # niced only where this lane's zygote forks the workers (not Ray, not fresh interpreters): a timeout
        # is retried only for a run whose workers were niced
        self.priority = self.service.run_priority(self.index, jobs) if self.can_stop() else FULL
        self.run_stop = RunStop()
        error = ""
        try:
            self.runner(store, fresh, budget).evaluate(list(tasks.values()), cands)
        except Exception as exc:  # the service outlives a failed run; its jobs say why
            if not self.stopping():
                print(f"mkb serve: lane {self.index}: run failed: {exc!r}", file=sys.stderr)
            error = f"harness error: {type(exc).__name__}: {exc}"
        with self.stop_lock:
            stop, stopped, left, retry = self.run_stop, self.stopping(), list(self.labels.values()), self.retry
            self.run_stop, self.labels, self.retry, self.priority = None, {}, [], FULL
        if retry:  # a niced run's timeout is no verdict: again, at the lane's priority
            for job in retry:
                job.full_priority = True
            self.service.metrics.count("retries", 'kind="niced_timeout"', len(retry))
            self.service.preemptor.returned(self.index, retry)
        if stopped:
            self.service.preemptor.returned(self.index, left, overran=stop is not None and stop.overran)
            return
        for job in left:  # not emitted (a run's time limit): fail closed, never a hang
            self.service.finish(self.index, job, None, error or "harness: the engine returned no result for it")


class EngineLanes:
    """The lanes of one service; started at once, stopped by the service's ``close``."""

    def __init__(self, service: LaneHost, configs: list[EngineConfig]) -> None:
        starting = threading.Lock()  # the lanes' runs start their builds' preparation one at a time
        self.lanes = [_Lane(service, i, c, starting) for i, c in enumerate(configs)]
        for lane in self.lanes:
            lane.thread.start()

    def __len__(self) -> int:
        return len(self.lanes)

    def join(self, timeout: float) -> None:
        for lane in self.lanes:
            lane.thread.join(timeout=timeout)
