"""What runs on the cluster's nodes: a build task per candidate, and one long-lived lane actor per device.

Both are plain Python here; :mod:`multikernelbench.cluster.ray_runner` wraps them with ``ray.remote`` and
the resources of the run (so this module imports without Ray, and its classes are testable as they are).

* :func:`build_candidate` is :class:`~multikernelbench.engine.build_stage.BuildStage` unchanged, on any node
  with a free CPU, its outcome sent back for the driver to record; a finished build comes back as tar bytes (a second return value, left in the object store
  and handed to the lane actor by reference, so it goes node to node without passing through the driver).
* :class:`Lane` is the trusted device stage of one accelerator (or one CPU lane): it holds the lane's
  :class:`~multikernelbench.engine.reference.ReferenceService` (expected outputs), its own
  :class:`~multikernelbench.engine.reference.SeedSource` (secret seed material drawn in this process) and a
  zygote, and runs :class:`~multikernelbench.engine.device_stage.CandidateEvaluation` unchanged, which starts
  the candidate's workers as its children; its outcome goes back to the driver, which records it. ``slots`` lanes share one GPU inside one actor through one lock,
  exactly as ``lanes_per_gpu`` lanes do in the local runner (a lock cannot span processes, so they are not
  separate actors).
"""

from __future__ import annotations

import dataclasses
import os
import queue
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from multikernelbench.backends import get_backend
from multikernelbench.cluster.shipping import BuildTooLarge, pack_build, unpack_build
from multikernelbench.engine.build_stage import BuildStage
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.device_stage import CandidateEvaluation
from multikernelbench.engine.outcomes import HarnessError, Outcome
from multikernelbench.engine.reference import ReferenceService, SeedSource
from multikernelbench.engine.trace import Trace
from multikernelbench.records import Status
from multikernelbench.tasks.record import Task


def _backend(config: EngineConfig):
    return get_backend(config.backend, threads=config.threads, **config.backend_options)


def start_zygote(config: EngineConfig, backend):
    """A zygote for ``backend``'s workers (started with its worker_env for the run's build root, as the local
    runner's), or None where the run or the backend wants fresh interpreters or it cannot start."""
    if not (config.zygote and backend.zygote_ok):
        return None
    from multikernelbench.engine.zygote import Zygote, ZygoteError
    from multikernelbench.util.worker_env import base_env

    env = base_env()  # the zygote's own environment is what its forked workers' /proc/self/environ shows
    env.update(backend.worker_env(Path(config.build_root)))
    try:
        return Zygote(env, tuple(backend.zygote_preload))
    except ZygoteError as exc:
        print(f"warning: {exc}; starting workers as fresh interpreters", file=sys.stderr)
        return None


class BuildZygote:
    """The build tasks' zygote in this Ray worker process, for one (backend, options, build root): Ray runs many
    build tasks in one long-lived worker, and each build's compile worker is forked from it instead of being a
    fresh interpreter that imports torch (~3-4 s of CPU per build). Started at the first build that needs a
    worker (a cached build or a static-check finding starts none); it dies with the Ray worker
    (die_with_parent), as the local runner's dies with the run. What a worker session calls: ``alive``,
    ``spawn``."""

    _all: dict[tuple, BuildZygote] = {}
    _lock = threading.Lock()

    def __init__(self, config: EngineConfig, backend) -> None:
        self.config, self.backend = config, backend
        self.zygote: Any = None  # False: could not start, fresh interpreters from then on
        self.lock = threading.Lock()

    @classmethod
    def get(cls, config: EngineConfig, backend) -> BuildZygote:
        key = (config.backend, repr(sorted(config.backend_options.items())), config.threads, str(config.build_root),
               config.zygote)
        with cls._lock:
            return cls._all.setdefault(key, cls(config, backend))

    def alive(self) -> bool:
        with self.lock:
            if self.zygote is False:
                return False
            if self.zygote is not None and not self.zygote.alive():
                self.zygote.close()  # died (killed from outside): a new one for this build
                self.zygote = None
            if self.zygote is None:
                self.zygote = start_zygote(self.config, self.backend) or False
            return bool(self.zygote)

    def spawn(self, *args, **kwargs):
        return self.zygote.spawn(*args, **kwargs)


def build_candidate(config: EngineConfig, task: Task, cand: Candidate) -> tuple[Outcome, bytes]:
    """One candidate's build (static checks, then a compile worker forked from this process's build zygote),
    cached by code hash on this node. Returns (the build's outcome, tar bytes of the build folder or b""): the
    driver alone writes the outcome into the candidate's record (engine/scheduler.py)."""
    from multikernelbench.engine.runner import check_opt_in

    backend = _backend(config)
    stage = BuildStage(backend, config, Trace(config.trace_path))
    try:
        check_opt_in(config)  # this node's kernel sandbox, as the driver checked its own
        stage.zygote = BuildZygote.get(config, backend)
        outcome = stage.build(task, cand)
    except Exception as exc:  # a harness bug must not lose the run: record it on this candidate
        return HarnessError(f"harness error while building: {exc!r}"), b""
    if not outcome.ok:
        return outcome, b""
    try:
        return outcome, pack_build(stage.build_dir(cand))
    except BuildTooLarge as exc:
        return dataclasses.replace(outcome, ok=False, status=Status.RUNTIME_ERROR,
                                   message=f"harness: {exc}; cannot ship it to a device lane"), b""


class Lane:
    """The device stage of one accelerator on one node (see the module docstring)."""

    def __init__(self, config: EngineConfig, slots: int = 1, gpu_ids: list | None = None) -> None:
        from multikernelbench.engine.runner import check_opt_in

        check_opt_in(config)  # a node without the kernel sandbox the driver has refuses to be a lane
        self.config = config
        self.backend = _backend(config)
        self.toolchain = self.backend.toolchain()
        if gpu_ids is None and self.backend.device_type == "cuda":
            import ray  # only ever constructed as a Ray actor on a GPU node

            gpu_ids = ray.get_gpu_ids()
        #: The physical GPU Ray gave this actor (it sets CUDA_VISIBLE_DEVICES, so torch here sees it as 0);
        #: workers get the physical index through the backend's lane_env, as in the local runner.
        self.gpu = int(gpu_ids[0]) if gpu_ids else None
        self.seeds = SeedSource(config.seed)
        self.trace = Trace(config.trace_path)
        self.zygote = start_zygote(config, self.backend)
        device = self.backend.reference_device(0 if self.gpu is not None else None)
        self.refs: queue.Queue[ReferenceService] = queue.Queue()
        for _ in range(max(1, slots)):
            self.refs.put(ReferenceService(device))
        self.all_refs = list(self.refs.queue)
        self.device_lock = threading.Lock() if (slots > 1 and self.gpu is not None) else None
        self.evaluated = 0

    def describe(self) -> dict:
        """What the driver keys results by and reports: this node's hardware, availability and versions."""
        avail = self.backend.availability()
        return {"pid": os.getpid(), "node": socket.gethostname(), "gpu": self.gpu, "available": avail.ok,
                "reason": avail.reason, "hardware": self.backend.hardware() if avail.ok else "",
                "versions": self.backend.versions()}

    def evaluate(self, task: Task, cand: Candidate, build: bytes) -> Outcome:
        """The candidate's device stage; its outcome goes back to the driver, which records it."""
        build_dir = BuildStage(self.backend, self.config, self.trace).build_dir(cand)
        if build:
            unpack_build(build, build_dir, self.toolchain)
        refs = self.refs.get()
        try:
            return CandidateEvaluation(task, cand.source, build_dir, self.backend, self.config, self.seeds, refs,
                                       env_extra=self.backend.lane_env(self.gpu), zygote=self.zygote,
                                       trace=self.trace, device_lock=self.device_lock).evaluate()
        except Exception as exc:  # a harness bug must not lose the run: record it on this candidate
            return HarnessError(f"harness error while evaluating: {exc!r}")
        finally:
            self.refs.put(refs)
            self.evaluated += 1

    def release(self, task_ids: list[str]) -> None:
        """The driver saw the last candidate of these tasks finish: free their expected outputs."""
        for refs in self.all_refs:
            for task_id in set(refs.held_tasks()) & set(task_ids):
                refs.release(task_id)

    def references(self) -> tuple[int, list[str]]:
        """Reference forwards this lane computed, and the tasks whose references it still holds: what the local
        lanes report at a run's end, so reuse and release are checked alike on both executors."""
        return sum(refs.computed for refs in self.all_refs), sorted({t for refs in self.all_refs
                                                                    for t in refs.held_tasks()})

    def stop(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None
