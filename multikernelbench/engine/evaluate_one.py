"""Check and time one compiled candidate in a fresh device worker.

The parent generates every input from a secret seed, computes the expected outputs itself, and only ever
sends inputs to the worker; the worker returns outputs. Timed outputs, and the output on inputs refreshed
in place after timing, are checked as strictly as the correctness trials.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from multikernelbench.anticheat import judge
from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.backends.base import Backend
from multikernelbench.engine.checking import (compare_outputs, inputs_unchanged, meta_mismatch, sample_flat,
                                              sample_positions)
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.reference import Reference, SeedSource
from multikernelbench.engine.sandbox import Limits, Worker, WorkerDied, WorkerTimeout
from multikernelbench.engine.trace import Trace, trace_label
from multikernelbench.records import CorrectnessReport, EvalResult, FailureKind, Status, TimingStats
from multikernelbench.tasks.record import Task

_KIND_TO_FAILURE = {
    "bad_output_type": FailureKind.BAD_OUTPUT_TYPE,
    "missing_modelnew": FailureKind.MISSING_MODELNEW,
    "exit": FailureKind.EXCEPTION,
    "exception": FailureKind.EXCEPTION,
}


class Verdict(Exception):
    """Ends an evaluation early with a final status."""

    def __init__(self, status: Status, message: str, failure: FailureKind | None = None):
        super().__init__(message)
        self.status, self.message, self.failure = status, message, failure


def worker_limits(config: EngineConfig, backend: Backend) -> Limits:
    return Limits(address_space_gb=config.memory_limit_gb if backend.device_type == "cpu" else 0.0,
                  file_size_mb=config.output_limit_mb)


def _reply_error(reply: dict[str, Any], what: str) -> Verdict:
    kind = reply.get("kind", "exception")
    failure = _KIND_TO_FAILURE.get(kind, FailureKind.EXCEPTION)
    error = reply.get("error", "")
    resource_markers = ("MemoryError", "bad_alloc", "out of memory", "File too large", "[Errno 27]",
                        "can't allocate memory")
    if any(m in error for m in resource_markers) or "out of memory" in error.lower():
        failure = FailureKind.RESOURCE_LIMIT
    status = Status.INCORRECT if kind == "bad_output_type" else Status.RUNTIME_ERROR
    return Verdict(status, f"{what}: {error}", failure)


def _request(worker: Worker, header: dict, tensors: Any, timeout: float, what: str,
             anticheat: AntiCheatConfig | None = None, trace: Trace | None = None,
             who: str = "") -> tuple[dict, Any]:
    """One request; with ``anticheat``, behaviour evidence in the reply (even a failed one) is judged first."""
    t0 = time.perf_counter()
    if trace is not None:
        trace(who, f"{header.get('op')} start ({what})")
    try:
        reply, payload = worker.request(header, tensors, timeout=timeout)
    except WorkerTimeout as exc:
        raise Verdict(Status.TIMEOUT, f"{what}: {exc}") from None
    except WorkerDied as exc:
        failure = FailureKind.RESOURCE_LIMIT if exc.signal_name in ("SIGXFSZ", "SIGXCPU") else FailureKind.SIGNAL
        raise Verdict(Status.CRASH, f"{what}: {exc}", failure) from None
    finally:
        if trace is not None:
            trace(who, f"{header.get('op')} end after {time.perf_counter() - t0:.1f} s")
    if anticheat is not None:
        findings = judge.behaviour_findings(reply.get("evidence"), anticheat)
        if findings:
            raise Verdict(Status.CHEAT_DETECTED, f"{what}: " + "; ".join(findings))
    if not reply.get("ok"):
        raise _reply_error(reply, what)
    return reply, payload


class CandidateEvaluation:
    def __init__(self, task: Task, source: str, build_dir: Path, backend: Backend, config: EngineConfig,
                 seeds: SeedSource, zygote=None, trace: Trace | None = None) -> None:
        self.zygote = zygote
        self.task, self.source, self.build_dir = task, source, build_dir
        self.backend, self.config, self.seeds = backend, config, seeds
        self.report = CorrectnessReport()
        self.ref = Reference(task, backend.device())
        self.base = {"backend": backend.name, "backend_options": backend.options, "task": task.to_row(),
                     "build_dir": str(build_dir), "threads": config.threads,
                     "anticheat": {"runtime_checks": config.anticheat.runtime_checks,
                                   "require_custom_kernel": config.anticheat.require_custom_kernel}}
        self.expect_probe = backend.kernel_probe(build_dir) is not None
        self.trace = trace if trace is not None else Trace(config.trace_path)  # no-op without a path
        self.who = trace_label(task.id, Path(build_dir).name)  # the build dir is named by the code hash
        self.ref_aliases: list[int] | None = None
        self.deadline: float | None = None
        self.budget_cut = False
        self.workers: list[Worker] = []  # every device worker of this candidate (a killed baseline compile adds one)

    def _budget(self, timeout: float) -> float:
        """A request's timeout, cut to what is left of the candidate's device-stage budget."""
        if self.deadline is None:
            return timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Verdict(Status.TIMEOUT, f"the candidate's device-stage budget of "
                          f"{self.config.candidate_timeout_s:.0f} s ran out")
        if left < timeout:
            self.budget_cut = True
            return left
        return timeout

    def _start_worker(self) -> Worker:
        worker = Worker("device", self.backend.worker_env(self.build_dir), worker_limits(self.config, self.backend),
                        zygote=self.zygote)
        self.workers.append(worker)
        return worker.start()

    def _load(self, worker: Worker) -> None:
        _request(worker, {**self.base, "op": "load", "source": self.source}, None,
                 self._budget(self.config.run_timeout_s), "loading", self.config.anticheat, self.trace, self.who)

    def run(self, result: EvalResult) -> EvalResult:
        if self.config.candidate_timeout_s > 0:
            self.deadline = time.monotonic() + self.config.candidate_timeout_s
        worker = self._start_worker()
        try:
            self._evaluate(worker, result)
            result.status = Status.CORRECT
        except Verdict as v:
            result.status, result.message, result.failure = v.status, v.message, v.failure
            if v.status == Status.TIMEOUT and self.budget_cut and "budget" not in v.message:
                result.message = (f"{v.message} (the request's timeout was cut to what was left of the "
                                  f"candidate's {self.config.candidate_timeout_s:.0f} s device-stage budget)")
        finally:
            result.stdout = self.workers[-1].captured_stdout()
            for w in self.workers:
                w.close()
        result.correctness = self.report
        return result

    def _evaluate(self, worker: Worker, result: EvalResult) -> None:
        cfg = self.config
        self._load(worker)
        weight_seed = self.seeds.next("weights", self.task.id)
        for shape in self.task.test_shapes:
            for _ in range(self.task.seeds_per_shape):
                self._trial(worker, shape, weight_seed)
        if cfg.skip_timing or not self.backend.timing_available:
            if not self.backend.timing_available:
                result.flags.append("timing unavailable on this backend/device (correctness only)")
            return
        self._time(worker, result, weight_seed)

    def _fail(self, failure: FailureKind | None, message: str, shape: dict) -> Verdict:
        """An INCORRECT verdict on a correctness trial, recorded in the correctness report."""
        self.report.failure = failure
        self.report.failed_shape = dict(shape)
        return Verdict(Status.INCORRECT, message, failure)

    def _trial(self, worker: Worker, shape: dict, weight_seed: int) -> None:
        seed = self.seeds.next("trial", self.task.id)
        inputs = self.ref.inputs(shape, seed)
        expected = self.ref.outputs(shape, weight_seed, inputs)
        cpu_inputs = [t.to("cpu") if isinstance(t, torch.Tensor) else t for t in inputs]
        self.report.trials += 1
        reply, payload = _request(worker, {"op": "check", "shape": shape, "weight_seed": weight_seed},
                                  cpu_inputs, self._budget(self.config.run_timeout_s), f"running on shape {shape}",
                                  self.config.anticheat, self.trace, self.who)
        outcome = compare_outputs(payload["outputs"], expected, self.task.atol, self.task.rtol, shape)
        self._track(outcome)
        if not outcome.ok:
            raise self._fail(outcome.failure, outcome.message, shape)
        ok, why = inputs_unchanged(cpu_inputs, payload["inputs_after"])
        if not ok:
            raise self._fail(FailureKind.INPUT_MODIFIED, f"{why} (shape {shape})", shape)
        self._judge_kernel(reply.get("evidence"), f"on shape {shape}")
        if self.config.anticheat.runtime_checks:
            if self.ref_aliases is None:
                self.ref_aliases = self.ref.aliases(shape, weight_seed, inputs)
            found = judge.alias_findings((reply.get("evidence") or {}).get("aliases", []), self.ref_aliases)
            if found:
                raise Verdict(Status.CHEAT_DETECTED, f"on shape {shape}: " + "; ".join(found))
        self.report.passed += 1

    def _judge_kernel(self, evidence: dict | None, where: str) -> None:
        found = judge.kernel_findings(evidence, self.config.anticheat, self.expect_probe)
        if found:
            raise Verdict(Status.CHEAT_DETECTED, f"{where}: " + "; ".join(found))

    def _track(self, outcome) -> None:
        self.report.max_abs_err = max(self.report.max_abs_err or 0.0, outcome.max_abs_err)
        self.report.max_rel_err = max(self.report.max_rel_err or 0.0, outcome.max_rel_err)

    def _time(self, worker: Worker, result: EvalResult, weight_seed: int) -> None:
        cfg = self.config
        on_cpu = self.backend.times_on_cpu_shape
        shape = self.task.shape_for_timing(on_cpu)
        seeds = [self.seeds.next("timing", self.task.id, k) for k in range(cfg.timing.input_sets)]
        fresh_seed = self.seeds.next("fresh", self.task.id)
        compiled = False
        if cfg.timing.compile_baseline:
            worker, compiled = self._compile_baseline(worker, result, shape, weight_seed)
        n_fns = 3 if compiled else 2
        timeout = cfg.run_timeout_s + n_fns * cfg.timing.budget_s * 2
        t0 = time.perf_counter()
        reply, payload = _request(
            worker, {"op": "time", "shape": shape, "weight_seed": weight_seed, "seeds": seeds,
                     "fresh_seed": fresh_seed, "timing": asdict(cfg.timing), "compiled": compiled},
            None, self._budget(timeout), f"timing on shape {shape}", cfg.anticheat, self.trace, self.who)
        parent_wall_ms = (time.perf_counter() - t0) * 1e3
        result.timing_shape = dict(shape)
        if reply.get("inputs_modified"):
            raise Verdict(Status.INCORRECT, f"timed input set(s) {reply['inputs_modified']} were modified in place "
                          "by the candidate during timing", FailureKind.INPUT_MODIFIED)
        stats = {name: TimingStats(**s) for name, s in reply["stats"].items()}
        claimed = sum(s.mean_ms * s.runs for s in stats.values())
        if claimed > parent_wall_ms * 1.05 + 50:
            raise Verdict(Status.CHEAT_DETECTED,
                          f"timings claim {claimed:.0f} ms of work inside a {parent_wall_ms:.0f} ms request")
        if cfg.check_timed_outputs:
            self._check_timed(worker, reply.get("output_meta") or [], shape, weight_seed, seeds, fresh_seed)
        result.candidate_timing = stats["candidate"]
        result.eager_timing = stats["eager"]
        result.compile_timing = stats.get("compiled")
        result.speedup = stats["eager"].median_ms / stats["candidate"].median_ms
        if "compiled" in stats:
            result.speedup_compile = stats["compiled"].median_ms / stats["candidate"].median_ms
        result.roofline_fraction = self._roofline(on_cpu, stats["candidate"].median_ms)
        if cfg.check_timed_outputs:
            self._judge_kernel(reply.get("evidence"), "after timing, on refreshed inputs")
        found = judge.timing_findings(result.speedup, result.roofline_fraction, cfg.anticheat)
        if found:
            raise Verdict(Status.CHEAT_DETECTED, "; ".join(found))

    def _compile_baseline(self, worker: Worker, result: EvalResult, shape: dict,
                          weight_seed: int) -> tuple[Worker, bool]:
        """torch.compile of the reference, as its own request. The harness's baseline failing is not the
        candidate's failure: the result is flagged and timed against eager alone (in a fresh worker, with the
        candidate loaded again, when the compile had to be killed). Evidence of the candidate's own doing in
        the reply is still judged."""
        cfg = self.config
        what = "compiling the torch.compile baseline"
        try:
            reply, _ = _request(worker, {"op": "compile_baseline", "shape": shape, "weight_seed": weight_seed,
                                         "seed": self.seeds.next("compile", self.task.id)},
                                None, self._budget(cfg.timing.compile_baseline_timeout_s), what, cfg.anticheat,
                                self.trace, self.who)
            if reply.get("torch_rebinds"):
                result.flags.append("torch API rebound while the baseline compiled (not judged): "
                                    + ", ".join(reply["torch_rebinds"][:20]))
            return worker, True
        except Verdict as v:
            if v.status == Status.CHEAT_DETECTED:
                raise
            result.flags.append(f"no torch.compile baseline: {v.status.value}: {v.message[:2000]}")
            if v.status in (Status.TIMEOUT, Status.CRASH):  # the worker is gone: a fresh one for timing
                worker = self._start_worker()
                self._load(worker)
            return worker, False

    def _check_timed(self, worker: Worker, meta: list, shape: dict, weight_seed: int, seeds: list[int],
                     fresh_seed: int) -> None:
        """Compare the outputs the worker kept from timing (large ones at positions drawn only now)."""
        cfg = self.config
        positions = sample_positions(self.seeds.next("positions", self.task.id), cfg.timed_check_samples, 4096)
        _, payload = _request(worker, {"op": "timed_values", "full_limit": cfg.timed_check_full_limit},
                              positions, self._budget(cfg.run_timeout_s), "reading timed outputs", cfg.anticheat,
                              self.trace, self.who)
        got = payload["timed_outputs"] + [payload["fresh_outputs"]]
        for k, seed in enumerate(list(seeds) + [fresh_seed]):
            expected = self.ref.outputs(shape, weight_seed, self.ref.inputs(shape, seed))
            message = meta_mismatch(meta[k] if k < len(meta) else [], expected)
            if message is None:
                sampled = [sample_flat(e, positions, cfg.timed_check_full_limit) for e in expected]
                outcome = compare_outputs(got[k], sampled, self.task.atol, self.task.rtol, shape)
                if outcome.ok:
                    continue
                message = outcome.message
            if any(e.numel() > cfg.timed_check_full_limit for e in expected):
                message += " (flat positions of a sample of the output)"
            if k < len(seeds):
                raise Verdict(Status.INCORRECT, f"output of a timed run is wrong: {message}",
                              FailureKind.TIMED_OUTPUT_MISMATCH)
            raise Verdict(Status.INCORRECT, "output is stale after the inputs were refreshed in place "
                          f"(cached across calls?): {message}", FailureKind.TIMED_OUTPUT_MISMATCH)

    def _roofline(self, on_cpu: bool, median_ms: float) -> float | None:
        try:
            from multikernelbench.roofline import roofline_fraction
        except ImportError:
            return None
        flops, nbytes = self.task.costs_for_timing(on_cpu)
        return roofline_fraction(self.backend.hardware(), self.task.dtype, flops, nbytes, median_ms)
