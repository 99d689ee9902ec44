"""Entry point of a worker process: the only place where candidate code executes.

The worker answers requests from the trusted parent. It never sees expected outputs: it returns what the
candidate produced (and the inputs as the candidate left them) and the parent judges. References to the
clock and the serializer are bound at start-up, before any candidate code is loaded.
"""

from __future__ import annotations

import sys
import time
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

_perf_counter_ns = time.perf_counter_ns  # bound before candidate code can patch the time module


def _flatten(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        flat: list[Any] = []
        for o in out:
            flat.extend(_flatten(o))
        return flat
    return [out]


class WorkerState:
    def __init__(self, role: str) -> None:
        self.role = role
        self.backend = None
        self.module = None
        self.task = None
        self.task_mod = None
        self.models: dict[str, Any] = {}
        self.build_dir: Path | None = None

    # -- helpers -------------------------------------------------------------------------------------
    def _setup(self, header: dict[str, Any]) -> None:
        import torch

        from multikernelbench.backends import get_backend
        from multikernelbench.engine.precision import strict_fp32
        from multikernelbench.tasks.module import materialize
        from multikernelbench.tasks.record import Task

        if self.backend is None:
            strict_fp32()
            self.backend = get_backend(header["backend"], **header.get("backend_options", {}))
        if header.get("threads"):
            torch.set_num_threads(int(header["threads"]))
        if header.get("task") and self.task is None:
            self.task = Task.from_row(header["task"])
            self.task_mod = materialize(self.task)
        if header.get("build_dir"):
            self.build_dir = Path(header["build_dir"])
            self.build_dir.mkdir(parents=True, exist_ok=True)

    def _model(self, kind: str, shape: dict, weight_seed: int):
        """Candidate or reference model for a shape, built with the shared weight seed (cached)."""
        from multikernelbench.tasks.module import make_model

        key = f"{kind}:{sorted(shape.items())}:{weight_seed}"
        if key not in self.models:
            dev = self.backend.device()
            ref = make_model(self.task_mod.Model, self.task_mod, shape, weight_seed, self.task.dtype, dev)
            if kind == "reference":
                model = ref
            else:
                model = make_model(self.module.ModelNew, self.task_mod, shape, weight_seed, self.task.dtype, dev)
                _copy_matching_state(ref, model)
            self.models[key] = model
        return self.models[key]

    def _plain_outputs(self, out: Any) -> tuple[list[Any] | None, str | None]:
        """Outputs as plain CPU tensors, or a reason why they are not acceptable."""
        import torch

        flat = _flatten(out)
        result = []
        for i, t in enumerate(flat):
            if type(t) is not torch.Tensor:  # noqa: E721 - subclasses (lazy/fake tensors) are rejected
                return None, f"output {i} is a {type(t).__module__}.{type(t).__qualname__}, not a plain torch.Tensor"
            if t.layout != torch.strided:
                return None, f"output {i} has layout {t.layout}, not a dense tensor"
            result.append(t.detach().to("cpu").contiguous().clone())
        return result, None

    # -- operations ----------------------------------------------------------------------------------
    def op_compile(self, header: dict[str, Any], _tensors: Any) -> tuple[dict, Any]:
        self._setup(header)
        outcome = self.backend.compile(header["source"], self.build_dir)
        return {"ok": outcome.ok, "message": outcome.message, "seconds": outcome.seconds,
                "details": outcome.details}, None

    def op_load(self, header: dict[str, Any], _tensors: Any) -> tuple[dict, Any]:
        self._setup(header)
        self.module = self.backend.load(header["source"], self.build_dir)
        if not hasattr(self.module, "ModelNew"):
            return {"ok": False, "kind": "missing_modelnew",
                    "error": "the candidate defines no class named ModelNew"}, None
        return {"ok": True}, None

    def op_check(self, header: dict[str, Any], tensors: Any) -> tuple[dict, Any]:
        import torch

        dev = self.backend.device()
        inputs = [t.to(dev) if isinstance(t, torch.Tensor) else t for t in tensors]
        model = self._model("candidate", header["shape"], header["weight_seed"])
        with torch.no_grad():
            out = model(*inputs)
        self.backend.synchronize()
        outputs, problem = self._plain_outputs(out)
        if problem:
            return {"ok": False, "kind": "bad_output_type", "error": problem}, None
        after = [t.detach().to("cpu").clone() if isinstance(t, torch.Tensor) else None for t in inputs]
        return {"ok": True}, {"outputs": outputs, "inputs_after": after}

    def op_time(self, header: dict[str, Any], _tensors: Any) -> tuple[dict, Any]:
        import torch

        from multikernelbench.engine.config import TimingConfig
        from multikernelbench.tasks.module import make_inputs

        cfg = TimingConfig(**header["timing"])
        shape, wseed = header["shape"], header["weight_seed"]
        dev = self.backend.device()
        sets = [make_inputs(self.task_mod, shape, s, self.task.dtype, dev) for s in header["seeds"]]
        cand = self._model("candidate", shape, wseed)
        last: dict[int, Any] = {}

        def run_candidate(i: int) -> Any:
            k = i % len(sets)
            out = cand(*sets[k])
            last[k] = out
            return out

        fns = {"candidate": run_candidate}
        ref = self._model("reference", shape, wseed)
        fns["eager"] = lambda i: ref(*sets[i % len(sets)])
        if cfg.compile_baseline:
            compiled = torch.compile(ref)
            fns["compiled"] = lambda i: compiled(*sets[i % len(sets)])
        timer = self.backend.make_timer(cfg)
        t0 = _perf_counter_ns()
        with torch.no_grad():
            stats = timer.measure(fns)
        wall_ms = (_perf_counter_ns() - t0) / 1e6
        self.backend.synchronize()
        timed_outputs = []
        for k in range(len(sets)):
            outs, problem = self._plain_outputs(last[k])
            if problem:
                return {"ok": False, "kind": "bad_output_type", "error": problem}, None
            timed_outputs.append(outs)
        # Fresh values written into the same tensors: a cache keyed by pointer or shape now returns stale data.
        fresh = make_inputs(self.task_mod, shape, header["fresh_seed"], self.task.dtype, dev)
        for dst, src in zip(sets[0], fresh):
            if isinstance(dst, torch.Tensor):
                dst.copy_(src)
        with torch.no_grad():
            fresh_out = cand(*sets[0])
        self.backend.synchronize()
        fresh_outputs, problem = self._plain_outputs(fresh_out)
        if problem:
            return {"ok": False, "kind": "bad_output_type", "error": problem}, None
        reply = {"ok": True, "wall_ms": wall_ms,
                 "stats": {name: vars(s) for name, s in stats.items()}}
        return reply, {"timed_outputs": timed_outputs, "fresh_outputs": fresh_outputs}


def _copy_matching_state(ref, model) -> None:
    """Give the candidate the reference's parameters when both declare the same names and shapes."""
    import torch

    ref_sd, cand_sd = ref.state_dict(), model.state_dict()
    if cand_sd and set(cand_sd) == set(ref_sd) and all(cand_sd[k].shape == ref_sd[k].shape for k in cand_sd):
        with torch.no_grad():
            model.load_state_dict(ref_sd)


def main() -> None:
    from multikernelbench.engine import protocol

    fd, role = int(sys.argv[1]), sys.argv[2]
    conn = Connection(fd)
    state = WorkerState(role)
    send = protocol.send
    while True:
        try:
            header, tensors = protocol.recv(conn)
        except EOFError:
            return
        op = header.get("op")
        if op == "exit":
            return
        handler = getattr(state, f"op_{op}", None)
        try:
            if handler is None:
                raise ValueError(f"unknown op {op!r}")
            reply, payload = handler(header, tensors)
        except BaseException as exc:  # noqa: BLE001 - everything the candidate raises is reported
            if isinstance(exc, SystemExit):
                reply, payload = {"ok": False, "kind": "exit",
                                  "error": f"candidate called sys.exit({exc.code!r})"}, None
            else:
                reply, payload = {"ok": False, "kind": "exception",
                                  "error": "".join(traceback.format_exception(exc))}, None
        try:
            send(conn, reply, payload)
        except Exception as exc:  # unserialisable payload
            send(conn, {"ok": False, "kind": "exception", "error": f"cannot send reply: {exc!r}"})


if __name__ == "__main__":
    main()
