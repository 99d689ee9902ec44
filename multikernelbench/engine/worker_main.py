"""Entry point of a worker process: the only place where candidate code executes.

The worker answers typed requests (:mod:`multikernelbench.engine.messages`) from the trusted parent,
dispatched from a table keyed by message type. It never sees expected outputs: it returns what the
candidate produced (and the inputs as the candidate left them) and the parent judges. The clock and the
serializer are bound at start-up, before any candidate code is loaded.
"""

from __future__ import annotations

import sys
import time
import traceback
import types
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from multikernelbench.engine import protocol, worker_baseline, worker_channel
from multikernelbench.engine.fresh import flatten
from multikernelbench.engine.messages import (
    Check,
    Checked,
    Compile,
    CompileBaseline,
    Compiled,
    Done,
    ErrorKind,
    Exit,
    Failed,
    Load,
    Message,
    Prepare,
    Setup,
    Time,
    Timed,
)
from multikernelbench.engine.worker_baseline import compile_baseline
from multikernelbench.engine.worker_channel import Channel, RequestFailed, classify
from multikernelbench.wire import CheckPayload, Evidence, Series, TimedPayload

if TYPE_CHECKING:  # the worker imports these lazily (its start-up cost is every candidate's)
    from multikernelbench.anticheat.native_hooks import NativeSnapshot
    from multikernelbench.anticheat.runtime import DispatcherSnapshot, PatchSnapshot
    from multikernelbench.anticheat.speed_state import SpeedState
    from multikernelbench.backends.base import Backend
    from multikernelbench.tasks.record import Task

_perf_counter_ns = time.perf_counter_ns  # bound before candidate code can patch the time module


class WorkerState:
    def __init__(self, role: str, channel: Channel) -> None:
        self.role = role
        self.channel = channel
        self.setup: Setup | None = None
        # Set by on_setup (the first request of every worker; task and task_mod only for device workers) and
        # by on_load; a request that needs one before then fails with the AttributeError.
        self.backend: Backend
        self.module: types.ModuleType
        self.task: Task
        self.task_mod: types.ModuleType
        self.models: dict[str, Any] = {}
        self.build_dir: Path | None = None
        self.snapshot: PatchSnapshot | None = None  # identity of patchable functions before candidate code ran
        self.threads_before: dict[int, str] = {}
        self.compiled: Any = None  # torch.compile of the reference, built by on_compile_baseline
        self.patched_before_compile: list[str] = []  # what the candidate had patched before that compile
        #: The settings that decide the reference's speed, as the harness set them.
        self.speed_state: SpeedState | None = None
        #: The dispatcher's kernels for the harness's own ops, before candidate code.
        self.dispatcher: DispatcherSnapshot | None = None
        #: RecordFunction callbacks and GOT slots of the timing/checking paths, before candidate code.
        self.native: NativeSnapshot | None = None
        #: The last Timed reply's CUDA outputs sent as IPC handles (engine/cuda_ipc.py): alive until the parent's
        #: next message, which it sends only after reading them.
        self.kept_for_parent: list[Any] = []

    @property
    def build_folder(self) -> Path:
        """``build_dir`` for the requests after on_setup (before it they fail, as for ``backend``)."""
        if self.build_dir is None:
            raise AttributeError("no build folder before Setup")
        return self.build_dir

    # -- set-up --------------------------------------------------------------------------------------
    def on_setup(self, msg: Setup, _payload: Any) -> tuple[Message, Any]:
        import torch

        from multikernelbench.backends import get_backend
        from multikernelbench.engine.precision import strict_fp32
        from multikernelbench.tasks.module import materialize
        from multikernelbench.tasks.record import Task

        self.setup = msg
        strict_fp32()
        self.backend = get_backend(msg.backend, **msg.backend_options)
        if msg.threads:
            torch.set_num_threads(int(msg.threads))
        if msg.task is not None:
            self.task = Task.from_row(msg.task)
            self.task_mod = materialize(self.task)
        self.build_dir = Path(msg.build_dir)
        self.build_dir.mkdir(parents=True, exist_ok=True)
        if msg.warm_device:  # trusted, before the audit hook is armed and before any candidate code
            self.backend.warm_device()
        return Done(), None

    @property
    def runtime_checks(self) -> bool:
        return self.setup is None or self.setup.runtime_checks

    def _arm(self) -> None:
        """Before any candidate code runs: install the audit hook, and snapshot every function a cheat would
        patch (see multikernelbench/anticheat/README.md)."""
        import os
        import tempfile

        from multikernelbench.anticheat import guard, runtime
        from multikernelbench.engine import checking, fresh

        if self.snapshot is not None:
            return
        from multikernelbench.anticheat.speed_state import SpeedState

        self.speed_state = SpeedState.capture()
        self.dispatcher = runtime.DispatcherSnapshot()
        from multikernelbench.anticheat.native_hooks import NativeSnapshot

        self.native = NativeSnapshot.capture()
        dirs = [os.getcwd(), str(self.build_dir or ""), tempfile.gettempdir()]
        extra = self.backend.sandbox_writable_dirs(self.build_dir) if self.build_dir else []
        guard.install(dirs + list(extra))
        harness = {"worker_main": sys.modules[__name__], "WorkerState": WorkerState, "backend": type(self.backend),
                   "multikernelbench.engine.checking": checking, "multikernelbench.engine.protocol": protocol,
                   "multikernelbench.engine.fresh": fresh, "fresh.FreshInputs": fresh.FreshInputs,
                   "Channel": Channel, "worker_channel": worker_channel, "worker_baseline": worker_baseline}
        self.snapshot = runtime.PatchSnapshot(runtime.default_patch_targets(harness))
        self.threads_before = runtime.python_threads()

    def evidence(self, busy: bool = False) -> Evidence:
        """Behaviour evidence so far (the parent judges it); empty when runtime checks are off."""
        from multikernelbench.anticheat import guard, runtime

        if not self.runtime_checks or self.snapshot is None:
            return {}
        g = guard.current()
        new = runtime.python_threads()
        patched = set(self.snapshot.changed()) | set(self.patched_before_compile)
        if self.dispatcher is not None:
            patched |= set(self.dispatcher.changed())
        if self.native is not None:
            patched |= set(self.native.changed())
        ev = Evidence(patched=sorted(patched),
                      violations=list(g.violations) if g else [],
                      new_threads=sorted(f"{name} (ident {i})" for i, name in new.items()
                                         if i not in self.threads_before),
                      children=runtime.child_processes())
        if busy:
            ev["busy_threads"] = runtime.busy_threads()
        return ev

    # -- helpers -------------------------------------------------------------------------------------
    def _observed_forward(self, model, inputs: list[Any]) -> tuple[Any, Evidence]:
        """One candidate forward under the dispatcher recorder and the backend's own-kernel probe."""
        import torch

        from multikernelbench.anticheat import runtime

        record = self.runtime_checks and (self.setup is None or self.setup.require_custom_kernel)
        probe = self.backend.kernel_probe(self.build_folder) if record else None
        with torch.no_grad(), _in_forward():
            return runtime.observe(lambda: model(*inputs), probe, record)

    def model_for(self, kind: str, shape: dict, weight_seed: int):
        """Candidate or reference model for a shape, built with the shared weight seed (cached); the candidate's
        parameters come from the kept reference, never a second build of it (CPU random numbers on any device)."""
        from multikernelbench.tasks.module import make_model

        key = f"{kind}:{sorted(shape.items())}:{weight_seed}"
        if key not in self.models:
            dev = self.backend.device()
            if kind == "reference":
                model = make_model(self.task_mod.Model, self.task_mod, shape, weight_seed, self.task.dtype, dev)
            else:
                ref = self.model_for("reference", shape, weight_seed)
                model = make_model(self.module.ModelNew, self.task_mod, shape, weight_seed, self.task.dtype, dev)
                _copy_matching_state(ref, model)
            self.models[key] = model
        return self.models[key]

    # -- requests ------------------------------------------------------------------------------------
    def on_compile(self, msg: Compile, _payload: Any) -> tuple[Message, Any]:
        self._arm()
        outcome = self.backend.compile(msg.source, self.build_folder)
        details = dict(outcome.details)
        if outcome.ok and msg.init_args is not None:  # a load_inline in __init__ builds now (engine/init_build.py)
            from multikernelbench.engine.init_build import construct_once

            module = sys.modules.get("candidate")  # the module compile just executed (Backend.load)
            if module is not None:
                details["init_construct"] = construct_once(module, tuple(msg.init_args)) or "ok"
        return Compiled(ok=outcome.ok, message=outcome.message, seconds=outcome.seconds, details=details,
                        evidence=self.evidence()), None

    def on_load(self, msg: Load, _payload: Any) -> tuple[Message, Any]:
        self._arm()
        self.module = self.backend.load(msg.source, self.build_folder)
        if not hasattr(self.module, "ModelNew"):
            raise RequestFailed(ErrorKind.MISSING_MODELNEW, "the candidate defines no class named ModelNew")
        return Done(evidence=self.evidence()), None

    def on_check(self, msg: Check, tensors: Any) -> tuple[Message, Any]:
        import torch

        from multikernelbench.anticheat.runtime import aliased_outputs
        from multikernelbench.engine.raw_outputs import OddOutput, read_all, read_raw

        dev = self.backend.device()
        inputs = [t.to(dev) if isinstance(t, torch.Tensor) else t for t in tensors]
        model = self.model_for("candidate", msg.shape, msg.weight_seed)
        out, observed = self._observed_forward(model, inputs)
        self.backend.synchronize()
        evidence: Evidence = {**observed, **self.evidence(busy=msg.report_busy)}
        flat = flatten(out)
        # Raw bytes, no tensor op: a candidate's RecordFunction callback sees nothing to answer (raw_outputs.py).
        try:
            outputs = read_all(flat)
        except OddOutput as exc:
            return Failed(ErrorKind.BAD_OUTPUT_TYPE, str(exc), evidence), None
        evidence["aliases"] = aliased_outputs(flat, inputs)
        after = [read_raw(t, i) if isinstance(t, torch.Tensor) else None for i, t in enumerate(inputs)]
        return Checked(evidence=evidence), CheckPayload(outputs=outputs, inputs_after=after)

    def on_time(self, msg: Time, _payload: Any) -> tuple[Message, Any]:
        import torch

        from multikernelbench.anticheat import runtime
        from multikernelbench.anticheat.speed_state import SpeedState
        from multikernelbench.engine import heap_warm
        from multikernelbench.engine.fresh import FreshInputs
        from multikernelbench.tasks.module import make_inputs
        from multikernelbench.timing.config import TimingConfig
        from multikernelbench.timing.loop import Phase

        cfg = TimingConfig(**msg.timing)
        dev = self.backend.device()
        # Captured before candidate code loaded (_arm); a reference-only worker loaded none: pinned as it is.
        pinned = self.speed_state if self.speed_state is not None else SpeedState.capture()
        fresh = FreshInputs(self.channel.ask,
                            lambda seed: make_inputs(self.task_mod, msg.shape, seed, self.task.dtype, dev),
                            msg.positions, msg.edge, pin=pinned.restore,
                            marks=self.backend.device_type == "cpu",  # the parent reads CPU time: call_marks.py
                            stage=self.backend.stages_outputs)  # engine/cuda_ipc.py: the same cost on every side
        ref = self.model_for("reference", msg.shape, msg.weight_seed)
        fns: dict[str, Callable[[int], Any]] = {}  # keyed by Series (a str on the wire)
        if not msg.reference_only:
            cand = self.model_for("candidate", msg.shape, msg.weight_seed)

            def run_candidate(j: int) -> Any:
                with _in_forward():
                    return cand(*fresh.inputs(Series.CANDIDATE, j))

            fns[Series.CANDIDATE] = run_candidate
        fns[Series.EAGER] = lambda j: ref(*fresh.inputs(Series.EAGER, j))
        if msg.compiled and self.compiled is not None:
            compiled = self.compiled
            fns[Series.COMPILED] = lambda j: compiled(*fresh.inputs(Series.COMPILED, j))
        if self.backend.device_type == "cpu":  # no renewal pays first-touch faults (engine/heap_warm.py)
            heap_warm.warm_for(make_inputs(self.task_mod, msg.shape, 0, self.task.dtype, dev))
        timer = self.backend.make_timer(cfg)
        # The harness objects a candidate could reach from its forward's caller frames, as they are now.
        instances = runtime.InstanceSnapshot({"FreshInputs": fresh, "Timer": timer, "Sampler": timer.sampler,
                                              "Channel": self.channel, "Connection": self.channel.conn,
                                              "WorkerState": self})
        t0 = _perf_counter_ns()
        with torch.no_grad():
            stats = timer.measure(fns, fresh, pair=(Series.CANDIDATE, Series.EAGER))  # cfg.adaptive: together
        wall_ms = (_perf_counter_ns() - t0) / 1e6
        self.backend.synchronize()
        evidence: Evidence = {}
        if not msg.reference_only:
            # One more call, observed (dispatcher ops, own-kernel probe) on fresh inputs: the kernel that was
            # timed must still be the candidate's own; its output is verifiable like every timed call's.
            fresh.renew(Series.CANDIDATE, 1, Phase.FINAL)
            out, observed = self._observed_forward(cand, fresh.inputs(Series.CANDIDATE, 0))
            self.backend.synchronize()
            fresh.observe(Series.CANDIDATE, [out])
            evidence = {**observed, **self.evidence(busy=True)}
        fresh.finish()
        self.kept_for_parent = fresh.sent
        moved = instances.changed()
        if moved:
            evidence["patched"] = sorted(set(evidence.get("patched", [])) | set(moved))
        if fresh.state_changes:
            evidence["speed_state"] = list(fresh.state_changes)
        reply = Timed(stats={name: vars(s) for name, s in stats.items()}, wall_ms=wall_ms,
                      verified_meta=fresh.meta, fresh_calls=fresh.calls, fresh_ms=fresh.seconds * 1e3,
                      evidence=evidence, series=timer.series, calls=timer.calls, phase_ms=timer.phase_ms)
        return reply, TimedPayload(verified=fresh.values)

    def on_prepare(self, msg: Prepare, _payload: Any) -> tuple[Message, Any]:
        """The models the Time request on ``msg.shape`` uses, made ahead of its clock turn (cached by model_for).
        The candidate's constructor runs here as it would there, and its evidence is judged with this reply."""
        self.model_for("reference", msg.shape, msg.weight_seed)
        if not msg.reference_only:
            self.model_for("candidate", msg.shape, msg.weight_seed)
        self.backend.synchronize()
        return Done(evidence=self.evidence()), None

    def on_compile_baseline(self, msg: CompileBaseline, _payload: Any) -> tuple[Message, Any]:
        return compile_baseline(self, msg), None


class _in_forward:
    """Marks the audit guard as inside the candidate's forward (writes/process creation judged there)."""

    def __enter__(self) -> None:
        from multikernelbench.anticheat import guard

        self.g = guard.current()
        if self.g:
            self.g.in_forward = True

    def __exit__(self, *exc) -> None:
        if self.g:
            self.g.in_forward = False


def _copy_matching_state(ref, model) -> None:
    """Give the candidate the reference's parameters when both declare the same names and shapes."""
    import torch

    ref_sd, cand_sd = ref.state_dict(), model.state_dict()
    if cand_sd and set(cand_sd) == set(ref_sd) and all(cand_sd[k].shape == ref_sd[k].shape for k in cand_sd):
        with torch.no_grad():
            model.load_state_dict(ref_sd)


#: Message type -> handler name on WorkerState.
HANDLERS: dict[type[Message], str] = {
    Setup: "on_setup", Compile: "on_compile", Load: "on_load", Check: "on_check", Time: "on_time",
    CompileBaseline: "on_compile_baseline", Prepare: "on_prepare",
}


def main() -> None:
    serve(int(sys.argv[1]), sys.argv[2])


def serve(fd: int, role: str) -> None:
    """The request loop (entered from ``main`` in a fresh interpreter, or after a fork from the zygote)."""
    import faulthandler
    import signal

    # On a timeout the parent sends SIGUSR1 before the kill: the stack of every thread lands in this
    # worker's stderr, so a TIMEOUT result says where the worker was stuck, not only that it was.
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    channel = Channel(Connection(fd))
    state = WorkerState(role, channel)
    while True:
        try:
            header, payload = protocol.recv(channel.conn)
        except EOFError:
            return
        state.kept_for_parent = []  # the parent read them before sending this (see WorkerState)
        try:
            msg = Message.from_header(header)
        except Exception as exc:  # noqa: BLE001
            channel.send(Failed(ErrorKind.PROTOCOL, f"malformed message: {exc!r}"))
            continue
        if isinstance(msg, Exit):
            return
        handler = HANDLERS.get(type(msg))
        try:
            if handler is None:
                raise RequestFailed(ErrorKind.PROTOCOL, f"no handler for {type(msg).__name__}")
            reply, out = getattr(state, handler)(msg, payload)
        except BaseException as exc:  # noqa: BLE001 - everything the candidate raises is reported
            kind = classify(exc)
            if isinstance(exc, SystemExit):
                error = f"candidate called sys.exit({exc.code!r})"
            elif isinstance(exc, RequestFailed):
                error = str(exc)
            else:
                error = "".join(traceback.format_exception(exc))
            try:
                evidence = state.evidence()
            except Exception:  # noqa: BLE001 - evidence is best effort on the failure path
                evidence = {}
            reply, out = Failed(kind, error, evidence), None
        try:
            channel.send(reply, out)
        except Exception as exc:  # unserialisable payload
            channel.send(Failed(ErrorKind.PROTOCOL, f"cannot send reply: {exc!r}"))


if __name__ == "__main__":
    main()
