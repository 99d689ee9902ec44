"""What the ``opencl`` backend watches inside the device worker: every kernel enqueue, and every queue used.

pyopencl launches a kernel (``kernel(queue, gsize, lsize, *args)``, or ``cl.enqueue_nd_range_kernel``) through
one C entry point, ``pyopencl._cl.enqueue_nd_range_kernel``; ``enqueue_task`` is the other. The worker wraps
both before the candidate's module executes (so a reference the candidate keeps at import time is the wrapper
too). The wrapper

* remembers the command queue (so :meth:`EnqueueRecorder.finish_all` can wait for everything the candidate
  queued: the backend's ``synchronize`` and the timer's sampler call it, so a kernel left running when
  ``forward`` returns is inside the clock and finished before outputs are read);
* while a :class:`OpenCLKernelProbe` is active, records each enqueued kernel's function name. A kernel is the
  candidate's *own* when its name is declared (``__kernel void NAME``) in an OpenCL C string of the
  candidate's file; any other kernel (pyopencl.array / elementwise / reduction library kernels) is library
  work, except pyopencl's fill/copy helpers.

Everything here runs in a process that also runs candidate code, so it can only convict (see
multikernelbench/anticheat/README.md for what an in-process candidate could still tamper with).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from multikernelbench.timing.host import HostClockSampler

#: ``__kernel void name(`` / ``kernel void name(``, with an optional ``__attribute__((...))`` between.
KERNEL_DECL = re.compile(r"\b(?:__)?kernel\s+(?:__attribute__\s*\(\(.*?\)\)\s*)?void\s+([A-Za-z_]\w*)\s*\(", re.S)
#: pyopencl's own helper kernels that only fill or copy memory (pyopencl.array's zeros/fill, copies).
HELPER_KERNEL = re.compile(r"fill|copy|memset", re.I)


def declared_kernels(source: str) -> set[str]:
    """Kernel names declared anywhere in ``source`` (the candidate file: its OpenCL C strings included)."""
    return set(KERNEL_DECL.findall(source))


class EnqueueRecorder:
    """Wraps pyopencl's enqueue entry points once per worker; see the module docstring."""

    MAX_QUEUES = 64  # a candidate making a queue per call must not grow the set forever

    def __init__(self) -> None:
        self.queues: dict[int, Any] = {}
        self.recording: list[str] | None = None
        self.enqueues = 0

    def install(self) -> None:
        import pyopencl
        import pyopencl._cl as _cl

        for name in ("enqueue_nd_range_kernel", "enqueue_task"):
            orig = getattr(_cl, name, None)
            if orig is None:
                continue
            cell = getattr(orig, "__mkb_recorder__", None)
            if cell is not None:  # wrapped by an earlier backend instance in this process: this one takes over
                cell[0] = self
                continue
            wrapper = self._wrap(orig)
            setattr(_cl, name, wrapper)
            if getattr(pyopencl, name, None) is not None:
                setattr(pyopencl, name, wrapper)

    def _wrap(self, orig):
        cell = [self]

        def enqueue(queue, kernel, *args, **kwargs):
            cell[0].seen(queue, kernel)
            return orig(queue, kernel, *args, **kwargs)

        # The original stays in the closure only (no attribute a candidate could call to skip the recorder).
        enqueue.__mkb_recorder__ = cell  # type: ignore[attr-defined]  # mypy gives functions no attributes
        enqueue.__doc__ = orig.__doc__
        return enqueue

    def seen(self, queue: Any, kernel: Any) -> None:
        self.enqueues += 1
        key = getattr(queue, "int_ptr", id(queue))
        if key not in self.queues:
            if len(self.queues) >= self.MAX_QUEUES:
                self.queues.pop(next(iter(self.queues)))
            self.queues[key] = queue
        if self.recording is not None:
            try:
                name = kernel.function_name
            except Exception:  # noqa: BLE001 - a released or foreign kernel object
                name = "<unknown kernel>"
            self.recording.append(str(name))

    def finish_all(self) -> None:
        """Wait until every queue the candidate enqueued on is idle (``clFinish``)."""
        for q in list(self.queues.values()):
            q.finish()


class OpenCLKernelProbe:
    """Own-kernel evidence for one forward: the kernels enqueued while it ran, split by where they come from."""

    def __init__(self, recorder: Callable[[], EnqueueRecorder], own_names: set[str]) -> None:
        self._get_recorder, self.own_names = recorder, own_names
        self.recorder: EnqueueRecorder | None = None
        self.names: list[str] = []

    def __enter__(self) -> OpenCLKernelProbe:
        self.recorder = self._get_recorder()
        self.recorder.finish_all()
        self.recorder.recording = self.names
        return self

    def __exit__(self, *exc) -> None:
        assert self.recorder is not None
        self.recorder.recording = None
        self.recorder.finish_all()

    def evidence(self) -> dict[str, Any]:
        seen = set(self.names)
        own = sorted(seen & self.own_names)
        library = sorted(n for n in seen - self.own_names if not HELPER_KERNEL.search(n))
        return {"own_kernels": own, "library_kernels": library, "method": "pyopencl enqueue"}


class QueueFinishingSampler(HostClockSampler):
    """Host clock around one call *and* the wait for every queue the candidate used: a kernel enqueued without
    waiting (non-blocking copies, zero-copy ``USE_HOST_PTR`` outputs) still runs inside the measured time."""

    method = "host_perf_counter+clFinish"

    def __init__(self, recorder: EnqueueRecorder) -> None:
        super().__init__(time.perf_counter_ns)
        self._finish = recorder.finish_all

    def sample(self, plan) -> tuple[float, bool, list[Any]]:
        t0 = self._clock()
        outs = plan.body()
        self._finish()
        return (self._clock() - t0) / 1e6, False, outs
