"""Check and time one compiled candidate in a fresh device worker.

The parent takes every trial's inputs and expected outputs from its :class:`ReferenceService` (computed on
its own device from secret seeds) and only ever sends inputs; the worker returns outputs. During timing
every call runs on fresh inputs granted one sample at a time, and sampled outputs of randomly chosen calls
are compared against the reference recomputed for the same seeds (engine/fresh.py).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from multikernelbench.anticheat.call_marks import process_cpu_ns
from multikernelbench.anticheat.clock_audit import AskLog
from multikernelbench.anticheat.sched_idle import read_snapshot
from multikernelbench.anticheat.timing_judge import judge, recalibrated
from multikernelbench.anticheat.timing_records import CleanTiming, TimingEvidence, TimingVerdict
from multikernelbench.backends.base import Backend
from multikernelbench.engine import host_load
from multikernelbench.engine.clean_reference import CleanReference
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.device_baseline import BaselineSteps
from multikernelbench.engine.device_clean import CleanSteps
from multikernelbench.engine.device_trials import TrialSteps
from multikernelbench.engine.fresh import FreshPlanner
from multikernelbench.engine.gpu_neighbours import blame_for_oom
from multikernelbench.engine.gpu_turns import GpuTurns, OneTurn, Turns, turns_for
from multikernelbench.engine.messages import Done, Load, Prepare, Setup, Time, Timed
from multikernelbench.engine.outcomes import DeviceOutcome, record
from multikernelbench.engine.reference import ReferenceService, SeedSource
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.engine.timed_outputs import ExpectedSample, expected_sample, logged, verify_timed
from multikernelbench.engine.timing_verdict import (
    ClockRetry,
    apply_speed,
    enforce_bounds,
    enforce_claim,
    enforce_clock,
)
from multikernelbench.engine.trace import Trace, trace_label
from multikernelbench.engine.verify_ahead import VerifyAhead
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import EvalResult, FailureKind, Status, TimingStats
from multikernelbench.tasks.record import Task
from multikernelbench.timing.loop import AUDIT_MIN_SAMPLES
from multikernelbench.util.procs import Limits, cpu_seconds, usable_cores
from multikernelbench.wire import Series


def worker_limits(config: EngineConfig, backend: Backend) -> Limits:
    from multikernelbench.engine.kernel_sandbox import device_write_files
    from multikernelbench.engine.worker_uid import device_nodes_open

    # Issue #41: candidate code never runs as root, where the GPU's nodes let another uid open them.
    drop = config.drop_root and os.geteuid() == 0 and device_nodes_open(device_write_files())
    return Limits(address_space_gb=config.memory_limit_gb if backend.limits_address_space() else 0.0,
                  file_size_mb=config.output_limit_mb, max_processes=config.worker_max_processes if drop else 0,
                  run_as_uid=config.worker_uid if drop else -1, run_as_gid=config.worker_gid if drop else -1)


class CandidateEvaluation(TrialSteps, BaselineSteps, CleanSteps):
    """The device stage of one candidate: load, correctness trials, timing, verification of timed calls."""

    def __init__(self, task: Task, source: str, build_dir: Path, backend: Backend, config: EngineConfig,
                 seeds: SeedSource, refs: ReferenceService, *, env_extra: dict[str, str] | None = None,
                 zygote=None, trace: Trace | None = None,
                 device_lock: GpuTurns | OneTurn | threading.Lock | None = None,
                 clean: CleanReference | None = None) -> None:
        self.task, self.source, self.build_dir = task, source, Path(build_dir)
        #: The GPU's turns when several lanes share it (engine/gpu_turns.py): checks, loads and ending workers
        #: take them shared, every clock (timing, the clean reference's timing, a compile request's device
        #: steps) exclusive; a worker's start and its torch.compile run outside them. A plain lock: every step
        #: under it, loads outside (:class:`OneTurn`).
        self.turns: Turns = turns_for(device_lock)
        self.shares_device = device_lock is not None
        self._turn_held = False
        self.backend, self.config, self.seeds, self.refs = backend, config, seeds, refs
        self.env = {**backend.worker_env(self.build_dir), **(env_extra or {})}
        self.zygote = zygote
        #: What this stage found so far; :meth:`evaluate` returns it (a harness error leaves it partial).
        self.outcome = DeviceOutcome()
        self.report = self.outcome.correctness
        self.expect_probe = backend.kernel_probe(self.build_dir) is not None
        self.trace = trace if trace is not None else Trace(config.trace_path)  # no-op without a path
        self.who = trace_label(task.id, self.build_dir.name)  # the build dir is named by the code hash
        self.deadline: float | None = None
        self.sessions: list[WorkerSession] = []
        self.fresh_overhead_ms: float | None = None  # wall time of fresh inputs per timed call (reported)
        #: The run's clean-reference timings, shared by the lanes (a private one when used alone).
        self.clean = clean if clean is not None else CleanReference()
        #: The first worker, started ahead by :meth:`prepare` (engine/prefetch.py); adopted by the first load.
        self._prepared: WorkerSession | None = None
        #: A clean worker started ahead too, when this task's clean reference timing is still to be made.
        self._prepared_clean: WorkerSession | None = None
        #: The thread starting that clean worker while this candidate is checked (CleanSteps._start_clean_ahead).
        self._clean_ahead: threading.Thread | None = None
        #: Called before this candidate's first clock starts: the lane waits there until the worker it is
        #: starting ahead for the next candidate has its device context (engine/prefetch.py).
        self.before_clock: Callable[[], None] | None = None

    def _start_worker(self, warm_device: bool = False) -> WorkerSession:
        ac = self.config.anticheat
        setup = Setup(backend=self.backend.name, backend_options=self.backend.options, build_dir=str(self.build_dir),
                      threads=self.config.threads, task=self.task.to_row(), runtime_checks=ac.runtime_checks,
                      require_custom_kernel=ac.require_custom_kernel, warm_device=warm_device)
        return WorkerSession("device", self.env, worker_limits(self.config, self.backend), setup, zygote=self.zygote,
                             anticheat=ac, trace=self.trace, who=self.who, deadline=self.deadline)

    def prepare(self, clean: bool = True) -> None:
        """Start the first worker now, device context included: trusted steps only (the fork, the harness's
        set-up), no candidate code; and the task's clean worker when ``clean`` and its timing is still to be
        made. A worker that fails to start is dropped here; :meth:`evaluate` then starts its own and meets the
        same failure as a verdict."""
        try:
            self._prepared = self._start_worker(warm_device=True)
        except Exception:  # noqa: BLE001 - judged when evaluate() starts a worker itself
            self._prepared = None
        if clean and self._clean_key_pending():
            try:
                self._prepared_clean = self._start_worker(warm_device=True)
            except Exception:  # noqa: BLE001 - the clean timing starts its own worker and reports its failure
                self._prepared_clean = None

    def _unused_prepared(self) -> list[WorkerSession]:
        self._join_clean_ahead()
        out = [s for s in (self._prepared, self._prepared_clean) if s is not None]
        self._prepared = self._prepared_clean = None
        return out

    def discard(self) -> None:
        """Prepared workers whose candidate is not evaluated (the run's time limit): ended in a shared turn,
        as every worker is (:meth:`_end`)."""
        unused = self._unused_prepared()
        if unused:
            with self.turns.shared():
                for s in unused:
                    s.close()

    def _session(self, load: bool = True) -> WorkerSession:
        """A worker for this candidate (``load``: with its code loaded) or a clean one (never loads it): the
        one :meth:`prepare` started ahead for that role, if any, else a new one."""
        if load:
            session, self._prepared = self._prepared, None
        else:
            session, self._prepared_clean = self._prepared_clean, None
        if session is not None:
            session.deadline = self.deadline
        else:
            session = self._start_worker()
        self.sessions.append(session)
        if load and not self.config.reference_only:
            # In a shared turn (engine/gpu_turns.py): an import may launch kernels and creates the worker's
            # device context, which must not land in another lane's clock; a slow import holds up no other
            # lane's checks, only a clock waiting for the GPU, as a slow check does. (OneTurn: outside it.)
            with self.turns.loading():
                self.turns.enlist(self, session.worker)  # stopped during other lanes' clocks from now on
                session.call(Load(self.source), timeout=self.config.run_timeout_s, what="loading", expect=Done)
        return session

    def run(self, result: EvalResult) -> EvalResult:
        """:meth:`evaluate`, its outcome written into ``result`` (one candidate evaluated alone, outside a run)."""
        return record(result, self.evaluate())

    def evaluate(self) -> DeviceOutcome:
        """Load, check and time the candidate; the verdict and measurements as an outcome (never a record)."""
        out = self.outcome
        if self.config.candidate_timeout_s > 0:
            self.deadline = time.monotonic() + self.config.candidate_timeout_s
        try:
            self._evaluate(out)
            out.status, out.message = Status.CORRECT, ""
        except Verdict as v:
            out.status, out.message, out.failure = v.status, v.message, v.failure
            self._blame_neighbours(out)
            if v.status == Status.TIMEOUT and self.sessions and self.sessions[-1].budget_cut \
                    and "budget" not in v.message:
                out.message = (f"{v.message} (the request's timeout was cut to what was left of the "
                               f"candidate's {self.config.candidate_timeout_s:.0f} s device-stage budget)")
        finally:
            if self.sessions:
                out.stdout = self.sessions[-1].stdout()
            from multikernelbench.engine import disk_quota  # issue #41: what the run left, before it goes

            over = disk_quota.over_quota([s.worker.workdir for s in self.sessions] + [self.build_dir],
                                         self.config.disk_quota_mb)
            self._end()
            if over:
                disk_quota.remove(self.build_dir)
                out.status, out.message, out.failure = Status.RUNTIME_ERROR, over, None
        return out

    def _blame_neighbours(self, out: DeviceOutcome) -> None:
        """A device out-of-memory met beside processes outside this run becomes a harness error
        (engine/gpu_neighbours.py: ``blame_for_oom``), counted right after the failure."""
        neighbours = self.refs.neighbours
        if neighbours is None or not out.out_of_memory():
            return
        blamed = blame_for_oom(out.message, neighbours.count())
        if blamed is not None:
            out.message, out.failure = blamed, FailureKind.HARNESS_ERROR
            self.trace(self.who, "out of memory beside other processes on the GPU: a harness error")

    def _end(self) -> None:
        """Ends the workers in a shared turn: a worker's exit tears down its CUDA context and frees its device
        memory, work the driver does on the GPU. Outside the turns it could land in another lane's clock (H200,
        2026-12-01: the first tasks of a baseline run with a warm compile cache, when six lanes started and
        ended workers every second, timed 4-9 % slower than in a quieter run). Shared, not exclusive: the
        shared side already excludes every clock, and an exit beside another lane's checks harms nothing
        (their outputs do not depend on it), so the ends need not queue behind the checks. ``close`` waits
        for the process to be reaped, so the teardown is over when the turn is given back."""
        self.sessions += self._unused_prepared()  # a clean worker that another lane's timing made needless
        if not self.sessions:
            return
        t0 = time.perf_counter()
        with self.turns.shared():
            for s in self.sessions:
                self.turns.dismiss(s.worker)
            self.trace(self.who, "end_workers start (ending the workers in a shared turn)")
            for s in self.sessions:
                s.close()
            self.trace(self.who, f"end_workers end after {time.perf_counter() - t0:.1f} s")

    def _evaluate(self, out: DeviceOutcome) -> None:
        self._start_clean_ahead()  # beside this candidate's load and checks, never beside a clock
        session = self._session()
        seeds = self.seeds.for_task(self.task)
        if not self.config.reference_only:
            with self.turns.shared():  # checks: beside other lanes' checks, never inside a clock
                self._trials(session, seeds)
                self._fresh_shapes(session, out, seeds.weight)
            if self.config.skip_timing or not self.backend.timing_available:
                if not self.backend.timing_available:
                    out.flags.append(Flag(FlagKind.TIMING_UNAVAILABLE,
                                          "timing unavailable on this backend/device (correctness only)"))
                return
        n_flags = len(out.flags)
        session, shape, compiled, planner = self._prepare_timing(session, out, seeds.weight)
        with self.turns.exclusive(self):  # the clocks (and the clean reference's, made inside): alone on the GPU
            if self.config.reference_only:
                self._time_reference(session, out, seeds.weight, shape, compiled, planner)
                return
            try:
                self._time(session, out, seeds.weight, shape, compiled, planner)
                return
            except ClockRetry as first:
                del out.flags[n_flags:]  # the first timing's notes: the second one's replace them
                out.flags.append(Flag(FlagKind.CLOCK_RETIMED,
                                      f"clock audit: the first timing showed {first}; timed again in a fresh worker"))
                self.trace(self.who, "clock audit finding: timing again in a fresh worker")
                self.sessions.remove(session)
                self.turns.dismiss(session.worker)
                session.close()  # in the turn: a worker's exit is work on the device
        # Re-timed at a quieter moment where the host gets quieter within the bound (engine/host_load.py).
        quiet = host_load.wait_quieter(self.config.anticheat.quiet_wait_s, read=self._load)
        self.trace(self.who, f"confirming timing with {quiet.label()}")
        with self.turns.exclusive(self):  # recalibrated beside it, while no process of this candidate runs
            before = self._time_clean(shape, seeds.weight) if self._clean_wanted() else None
        # The confirming timing (anticheat/clock_audit.py, "Confirmation"): the candidate loaded again in a fresh
        # worker, so whatever it did in the first one it must do again to be judged on it.
        session = self._session()
        with self.turns.shared():  # the same steps as in the first worker before its timing: the correctness trials
            counted = self.report.trials, self.report.passed
            self._trials(session, seeds)
            self.report.trials, self.report.passed = counted  # passed again: the report counts the task's trials
        session, shape, compiled, planner = self._prepare_timing(session, out, seeds.weight)
        with self.turns.exclusive(self):
            self._time(session, out, seeds.weight, shape, compiled, planner, confirming=True, before=before)

    def _prepare_timing(self, session: WorkerSession, out: DeviceOutcome,
                        weight_seed: int) -> tuple[WorkerSession, dict, bool, FreshPlanner]:
        """The timing shape, the torch.compile baseline when asked for (its session may be a fresh one),
        and the planner that grants this timing request's fresh seeds."""
        self._join_clean_ahead()  # its device context is made before this candidate's clocks, not in them
        if self.before_clock is not None:  # nothing starts beside a clock: see engine/prefetch.py
            self.before_clock()
        shape = self.task.shape_for_timing(self.backend.times_on_cpu_shape)
        compiled = False
        if self.config.timing.compile_baseline:
            session, compiled = self._compile_baseline(session, out, shape, weight_seed)
        if self.config.prefetch_workers:  # off (--no-worker-prefetch): made inside the Time request, in the turn
            with self.turns.shared():  # weights made on the device beside other lanes' checks, never a clock
                session.call(Prepare(shape=shape, weight_seed=weight_seed, reference_only=self.config.reference_only),
                             timeout=self.config.run_timeout_s, what=f"making the models for shape {shape}",
                             expect=Done)
        planner = FreshPlanner(self.config.timing, next_seed=lambda: self.seeds.next("fresh", self.task.id),
                               positions=self.config.timed_check_positions, edge=self.config.timed_check_edge,
                               send_positions=self.backend.device_type == "cpu")  # GPU: by IPC (cuda_ipc.py)
        return session, shape, compiled, planner

    def _time(self, session: WorkerSession, out: DeviceOutcome, weight_seed: int, shape: dict, compiled: bool,
              planner: FreshPlanner, confirming: bool = False, before: CleanTiming | None = None) -> None:
        """``confirming``: the audit is judged by the clean worker recalibrated ``before`` this timing and right
        after it, with the candidate's worker stopped (anticheat/timing_judge.py, ``recalibrated``)."""
        cfg = self.config
        on_cpu = self.backend.times_on_cpu_shape
        clean = self._clean_timing(shape, weight_seed)
        n_fns = 3 if compiled else 2
        timeout = cfg.run_timeout_s + n_fns * cfg.timing.budget_s * 2
        log = self._ask_log(session)
        ahead = self._verify_ahead(shape, weight_seed)
        on_fresh = logged(log, planner) if ahead is None else ahead.handler(logged(log, planner), planner.checks)
        load_before = self._load()
        t0 = time.perf_counter()
        try:
            reply, payload = session.call(
                Time(shape=shape, weight_seed=weight_seed, timing=asdict(cfg.timing), compiled=compiled,
                     positions=cfg.timed_check_positions, edge=cfg.timed_check_edge),
                timeout=timeout, what=f"timing on shape {shape}", expect=Timed, on_fresh=on_fresh)
        except BaseException:
            if ahead is not None:
                ahead.join(cancel=True)
            raise
        log.close()
        parent_wall_ms = (time.perf_counter() - t0) * 1e3
        known = ahead.join() if ahead is not None else None  # before the load reading: none of its work counted
        load = host_load.worst(load_before, self._load())
        out.host_load = {"timing": load.to_dict() if load else None,
                         "clean": clean.load.to_dict() if clean is not None and clean.load else None}
        out.timing_shape = dict(shape)
        stats = {name: TimingStats(**s) for name, s in reply.stats.items()}
        enforce_claim(stats, parent_wall_ms)
        if reply.fresh_calls:
            self.fresh_overhead_ms = reply.fresh_ms / reply.fresh_calls
            out.flags.append(Flag(FlagKind.FRESH_INPUTS,
                                  f"fresh inputs: {reply.fresh_calls} calls, {self.fresh_overhead_ms:.3f} ms "
                                  f"each outside the clock; {len(planner.checks)} timed calls verified"))
        judged = clean
        if confirming and clean is not None:
            with session.worker.paused():
                judged = recalibrated(clean, before, self._time_clean(shape, weight_seed))
            if judged is not clean and judged is not None and judged.baseline and clean.baseline:
                out.flags.append(Flag(FlagKind.CLOCK_RECALIBRATED,
                                      f"clock audit: renewal judged against the clean worker recalibrated beside "
                                      f"this timing ({judged.baseline.per_call_ms:.3f} ms per call there, "
                                      f"{clean.baseline.per_call_ms:.3f} ms at the run's first calibration)"))
        fns = [Series.CANDIDATE, Series.EAGER] + ([Series.COMPILED] if compiled else [])
        cand = stats.get(Series.CANDIDATE)
        evidence = TimingEvidence(
            log, stats, reply.series, reply.calls, fns, clean=clean, recalibrated=judged, cfg=cfg.anticheat,
            parent_wall_ms=parent_wall_ms, min_samples=min(cfg.timing.max_runs, AUDIT_MIN_SAMPLES),
            cores=usable_cores(), confirming=confirming, load=load, drift_bound=cfg.timing.drift_bound,
            roofline_fraction=self._roofline(on_cpu, cand.median_ms) if cand is not None else None)
        verdict = judge(evidence)  # every finding (anticheat/timing_judge.py); carried out in the order below
        enforce_clock(verdict, out)  # raises Verdict on work outside the clock, ClockRetry on load-sensitive ones
        self._judge_outputs(planner, reply, payload, shape, weight_seed, evidence, verdict, out, known)

    def _verify_ahead(self, shape: dict, weight_seed: int) -> VerifyAhead | None:
        """The verified calls' reference computed while the worker ends its Time request (engine/verify_ahead.py),
        where it runs off the host's cores; None elsewhere, when timed outputs are not checked, or with
        ``prefetch_workers`` off (``--no-worker-prefetch``: nothing of a device stage is done ahead, the A/B)."""
        cfg = self.config
        if not cfg.check_timed_outputs or not cfg.prefetch_workers or self.refs.device.type == "cpu":
            return None
        return VerifyAhead(lambda check: expected_sample(check, self.refs, self.task, shape, weight_seed, self.config))

    def _judge_outputs(self, planner: FreshPlanner, reply: Timed, payload: Any, shape: dict, weight_seed: int,
                       evidence: TimingEvidence, verdict: TimingVerdict, out: DeviceOutcome,
                       known: dict[int, ExpectedSample] | None = None) -> None:
        """After the clock: the timed calls' outputs checked against the reference the parent computes on the GPU,
        then the speed figures and their bounds. In the clock's exclusive turn although it starts no clock (7.4 s
        of a 63 s cached run's 43 s of turns): moved to a shared turn, beside other lanes' checks, the parent's and
        the workers' GPU memory overflowed with 4 lanes on an 80 GB H100 (7 of 36 honest candidates failed with
        CUDA out of memory; benchmarks/throughput/README.md, 2026-12-05 third session)."""
        cfg = self.config
        if cfg.check_timed_outputs:
            t0 = time.perf_counter()
            early = "" if known is None else f"; {len(known)} of {len(planner.checks)} computed ahead"
            self.trace(self.who, f"verify start (the timed calls' outputs against the reference{early})")
            verify_timed(planner, reply, payload, self.refs, self.task, shape, weight_seed, self.config, known)
            self.trace(self.who, f"verify end after {time.perf_counter() - t0:.1f} s")
        apply_speed(evidence, verdict, out)
        out.roofline_fraction = evidence.roofline_fraction
        if cfg.check_timed_outputs:
            self._judge_kernel(reply.evidence, "after timing, on fresh inputs")
        enforce_bounds(verdict)

    def _ask_log(self, session: WorkerSession) -> AskLog:
        """A Time request's log; on a backend whose kernels run on the CPU it also carries the worker's CPU time
        at each request (anticheat/clock_audit.py, "CPU time"). Not on GPU backends: a device sync's spin-wait
        burns CPU time for GPU work, and that side is not measured yet."""
        proc = session.worker.proc
        if self.backend.device_type != "cpu" or proc is None:
            return AskLog()
        pid = proc.pid
        own = os.getpid()  # every thread of the parent: the one answering this session's requests and a GIL holder
        return AskLog(cpu_clock=lambda: cpu_seconds(pid), sched_clock=lambda: read_snapshot(pid),
                      own_clock=lambda: read_snapshot(own), run_clock=lambda: process_cpu_ns(pid))

    def _roofline(self, on_cpu: bool, median_ms: float) -> float | None:
        from multikernelbench.roofline import roofline_fraction

        flops, nbytes = self.task.costs_for_timing(on_cpu)
        return roofline_fraction(self.backend.hardware(), self.task.dtype, flops, nbytes, median_ms)
