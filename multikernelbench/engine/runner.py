"""Evaluate many candidates: compile in a pool of CPU workers, check and time in device workers.

Each compile and each evaluation happens in a fresh worker process, so one candidate cannot leave state
(patched modules, leaked threads, a corrupted device context) behind for the next. Results are written to
the store as each finishes, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Iterable

from multikernelbench.anticheat.static import check_task_candidate
from multikernelbench.backends import Backend, get_backend
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.evaluate_one import CandidateEvaluation, Verdict, _request, worker_limits
from multikernelbench.engine.filelock import file_lock
from multikernelbench.engine.progress import Progress
from multikernelbench.engine.reference import SeedSource
from multikernelbench.engine.sandbox import Worker
from multikernelbench.engine.trace import Trace, trace_label
from multikernelbench.records import EvalResult, Status
from multikernelbench.store import Label, ResultStore
from multikernelbench.tasks.record import Task

ALLOW_ENV = "MKB_ALLOW_CODE_EXECUTION"


class CodeExecutionNotAllowed(RuntimeError):
    pass


def check_opt_in(config: EngineConfig) -> None:
    if config.allow_code_execution or os.environ.get(ALLOW_ENV) == "1":
        return
    raise CodeExecutionNotAllowed(
        "Evaluating candidates runs untrusted, model-generated code on this machine. The harness isolates it in "
        "worker processes with resource limits, but that is not a security boundary. To proceed, pass "
        f"--allow-code-execution or set {ALLOW_ENV}=1.")


MARKER = "mkb_compiled.json"


def _read_marker(build_dir: Path) -> float | None:
    """Seconds the cached build took, or None when there is no complete build (an unreadable marker is
    a miss, not an error: the build simply runs again)."""
    try:
        seconds = json.loads((build_dir / MARKER).read_text()).get("seconds")
    except (OSError, ValueError, AttributeError):
        return None
    return float(seconds) if isinstance(seconds, (int, float)) else None


def _write_marker(build_dir: Path, seconds: float) -> None:
    tmp = build_dir / f".{MARKER}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"seconds": seconds}))
    os.replace(tmp, build_dir / MARKER)  # readers never see a half-written marker


class Runner:
    def __init__(self, config: EngineConfig, store: ResultStore | None = None,
                 on_result: Callable[[EvalResult, Candidate], None] | None = None, progress: bool = True) -> None:
        check_opt_in(config)
        self.config = config
        self.store = store
        self.on_result = on_result
        self.show_progress = progress
        self.backend: Backend = get_backend(config.backend, threads=config.threads)
        self.seeds = SeedSource(config.seed)
        self.trace = Trace(config.trace_path)

    # ------------------------------------------------------------------------------------------------
    def evaluate(self, tasks: Iterable[Task], candidates: list[Candidate]) -> list[EvalResult]:
        by_id = {t.id: t for t in tasks}
        unknown = sorted({c.task_id for c in candidates} - set(by_id))
        if unknown:
            raise KeyError(f"candidates name unknown task ids: {unknown}")
        avail = self.backend.availability()
        self.hardware = self.backend.hardware()
        self.versions = self.backend.versions()
        results: dict[int, EvalResult] = {}
        todo: list[int] = []
        for i, cand in enumerate(candidates):
            task = by_id[cand.task_id]
            if not avail.ok:
                results[i] = self._blank(task, cand, Status.UNAVAILABLE, f"backend {self.backend.name}: {avail.reason}")
                continue
            if not cand.source.strip():
                results[i] = self._blank(task, cand, Status.COMPILE_ERROR, "no code could be extracted from the response")
                results[i].finished_at = time.time()
                if self.store is not None:
                    self.store.put(results[i], self._label(cand, task))
                continue
            stored = self.store.get(task.id, task.content_hash, self.backend.name, self.hardware,
                                    cand.code_hash) if self.store else None
            if stored is not None:
                self.store.put_label(stored, self._label(cand, task))
                results[i] = stored
            else:
                todo.append(i)
        for i in sorted(results):
            self._emit(results[i], candidates[i])
        self.zygote = self._start_zygote() if todo else None
        try:
            with Progress(enabled=self.show_progress) as bar:
                bar.add("compile", len(todo))
                bar.add("evaluate", len(todo))
                self._run(by_id, candidates, todo, results, bar)
        finally:
            if self.zygote is not None:
                self.zygote.close()
        return [results[i] for i in range(len(candidates))]

    def _start_zygote(self):
        """A pre-imported process to fork workers from (saves ~4 s of CPU per worker); None to use fresh
        interpreters, which is also the fallback when the zygote cannot start."""
        if not (self.config.zygote and self.backend.zygote_ok):
            return None
        from multikernelbench.engine.zygote import Zygote, ZygoteError

        env = dict(os.environ)
        env.update(self.backend.worker_env(Path(self.config.build_root)))
        try:
            return Zygote(env, tuple(self.backend.zygote_preload))
        except ZygoteError as exc:
            print(f"warning: {exc}; starting workers as fresh interpreters", file=sys.stderr)
            return None

    def _run(self, by_id, candidates, todo, results, bar) -> None:
        cfg = self.config
        with ThreadPoolExecutor(max(1, cfg.compile_workers), thread_name_prefix="compile") as cpool, \
                ThreadPoolExecutor(max(1, cfg.device_workers), thread_name_prefix="device") as dpool:
            compiles: dict[Future, int] = {
                cpool.submit(self._compile, by_id[candidates[i].task_id], candidates[i]): i for i in todo}
            pending_device: list[tuple[int, EvalResult]] = []
            device_futures: dict[Future, int] = {}
            for fut in as_completed(compiles):
                i = compiles[fut]
                result = fut.result()
                bar.advance("compile")
                if result.status is not None and result.status != Status.CORRECT:
                    self._finish(i, result, candidates[i], results, bar)
                    continue
                if self.backend.overlap_compile_with_timing:
                    device_futures[dpool.submit(self._device, by_id[candidates[i].task_id], candidates[i], result)] = i
                else:
                    pending_device.append((i, result))
            for i, result in pending_device:
                device_futures[dpool.submit(self._device, by_id[candidates[i].task_id], candidates[i], result)] = i
            for fut in as_completed(device_futures):
                i = device_futures[fut]
                self._finish(i, fut.result(), candidates[i], results, bar)

    def _finish(self, i: int, result: EvalResult, cand: Candidate, results: dict, bar) -> None:
        result.finished_at = time.time()
        results[i] = result
        if self.store is not None:
            self.store.put(result, self._label(cand, None))
        bar.advance("evaluate")
        self._emit(result, cand)

    def _emit(self, result: EvalResult, cand: Candidate) -> None:
        if self.on_result:
            self.on_result(result, cand)

    # ------------------------------------------------------------------------------------------------
    def _blank(self, task: Task, cand: Candidate, status, message: str = "") -> EvalResult:
        return EvalResult(task_id=task.id, task_hash=task.content_hash, backend=self.backend.name,
                          candidate=cand.label, code_hash=cand.code_hash, status=status, message=message,
                          hardware=self.hardware, versions=self.versions, started_at=time.time())

    def _label(self, cand: Candidate, task: Task | None) -> Label:
        category = task.category if task else cand.task_id.split(".")[0]
        return Label(cand.meta.model, cand.meta.strategy, cand.meta.sample_index, category)

    def build_dir(self, cand: Candidate) -> Path:
        return Path(self.config.build_root) / self.backend.name / cand.code_hash

    def _compile(self, task: Task, cand: Candidate) -> EvalResult:
        """Returns a result whose status is None when the build succeeded (evaluation continues)."""
        result = self._blank(task, cand, None)
        ac = self.config.anticheat
        if ac.static_checks:
            findings = check_task_candidate(cand.source, task, self.backend.name, ac.require_custom_kernel)
            if findings:
                result.status = Status.CHEAT_DETECTED
                result.message = "static check: " + "; ".join(str(f) for f in findings[:10])
                return result
        build_dir = self.build_dir(cand)
        build_dir.mkdir(parents=True, exist_ok=True)
        # Two tasks may share one source (a dtype variant of the same operator), hence one build folder;
        # the lock makes the second wait and reuse the first build instead of racing it.
        with file_lock(build_dir / ".mkb_build.lock"):
            seconds = _read_marker(build_dir)
            if seconds is not None:  # build cache keyed by code hash
                result.compile_time_s = seconds
                return result
            return self._build(task, cand, build_dir, result)

    def _build(self, task: Task, cand: Candidate, build_dir: Path, result: EvalResult) -> EvalResult:
        ac = self.config.anticheat
        t0 = time.perf_counter()
        self.trace(trace_label(task.id, cand.code_hash), "build start")
        worker = Worker("compile", self.backend.worker_env(build_dir), worker_limits(self.config, self.backend),
                        zygote=self.zygote)
        worker.start()
        try:
            header = {"op": "compile", "backend": self.backend.name, "backend_options": self.backend.options,
                      "source": cand.source, "build_dir": str(build_dir), "threads": 1,
                      "anticheat": {"runtime_checks": ac.runtime_checks}}
            reply, _ = _request(worker, header, None, self.config.compile_timeout_s, "compiling", ac)
            if not reply.get("ok"):
                result.status, result.message = Status.COMPILE_ERROR, reply.get("message", "")
        except Verdict as v:
            result.status, result.failure = v.status, v.failure
            result.message = v.message
            if v.status == Status.RUNTIME_ERROR:  # an exception while building/importing is a compile error
                result.status = Status.COMPILE_ERROR
        finally:
            result.stdout = worker.captured_stdout()
            worker.close()
        result.compile_time_s = time.perf_counter() - t0
        self.trace(trace_label(task.id, cand.code_hash),
                   f"build end after {result.compile_time_s:.1f} s: {result.status.value if result.status else 'ok'}")
        if result.status is None:
            _write_marker(build_dir, result.compile_time_s)
        return result

    def _device(self, task: Task, cand: Candidate, result: EvalResult) -> EvalResult:
        self.trace(trace_label(task.id, cand.code_hash), "device worker start")
        try:
            return CandidateEvaluation(task, cand.source, self.build_dir(cand), self.backend, self.config,
                                       self.seeds, zygote=self.zygote, trace=self.trace).run(result)
        except Exception as exc:  # a harness bug must not lose the run: record it on this candidate
            result.status = Status.RUNTIME_ERROR
            result.message = f"harness error while evaluating: {exc!r}"
            print(result.message, file=sys.stderr)
            return result


def evaluate_candidates(tasks: Iterable[Task], candidates: list[Candidate], config: EngineConfig,
                        store: ResultStore | None = None, progress: bool = False,
                        on_result: Callable[[EvalResult, Candidate], None] | None = None) -> list[EvalResult]:
    """Evaluate candidates against their tasks; the library entry point behind ``mkb eval``."""
    return Runner(config, store, on_result=on_result, progress=progress).evaluate(tasks, candidates)
