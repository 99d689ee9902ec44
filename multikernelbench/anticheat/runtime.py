"""Worker-side evidence: what the candidate actually did during load and during its forward calls.

Everything here runs inside the untrusted worker and only *collects* facts (patched functions, aten ops
seen by the dispatcher, which extension functions were called, threads and child processes left behind,
output/input aliasing). The trusted parent judges them (:mod:`multikernelbench.anticheat.judge`). Because
the collecting process runs candidate code, a determined candidate can tamper with the collection itself;
the patch snapshot covers this module too, and the README lists what that leaves open.
"""

from __future__ import annotations

import builtins
import os
import sys
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from multikernelbench.wire import Evidence

_SHARED_LIB_SUFFIXES = (".so", ".pyd", ".dylib")


def op_short_name(func: Any) -> str:
    """``aten.relu.default`` -> ``relu``; ``aten::add_.Tensor`` -> ``add_``."""
    name = getattr(func, "__name__", str(func))
    return name.split(".")[0].split("::")[-1]


class OpRecorder(TorchDispatchMode):
    """Records every aten op that reaches the dispatcher, from Python or from C++ (``at::`` calls)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: dict[str, int] = {}

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if _computes_on_data(args, kwargs, out):
            name = f"{func.namespace}::{op_short_name(func)}" if hasattr(func, "namespace") else str(func)
            self.ops[name] = self.ops.get(name, 0) + 1
        return out


def _computes_on_data(args: Any, kwargs: Any, out: Any) -> bool:
    """False for ops that cannot touch real data: every tensor involved is a FakeTensor or on the meta device
    (shape propagation by a tracing compiler: Helion traces a kernel's body with fake tensors at its first call,
    inside the candidate's forward), or no tensor goes in or comes out (``aten::promote_types``). Ops on any
    real tensor are recorded, so compute done under a fake mode cannot smuggle results: fake tensors hold none."""
    from torch.utils import _pytree as pytree

    tensors = [t for t in pytree.tree_leaves((args, kwargs or {}, out)) if isinstance(t, torch.Tensor)]
    if not tensors:
        return False
    from torch._subclasses.fake_tensor import FakeTensor

    return not all(isinstance(t, FakeTensor) or t.device.type == "meta" for t in tensors)


class ExtensionCallProbe:
    """Own-kernel evidence for compiled-extension backends: which functions of the candidate's built
    extension modules (shared libraries under its build dir) were called during the forward.

    Uses ``sys.setprofile``'s ``c_call`` events, which fire for every call of a builtin function, including
    pybind11 functions of a ``load_inline`` module.
    """

    def __init__(self, build_dir: Path | str) -> None:
        self.root = os.path.realpath(str(build_dir))
        self.names = {p.name.split(".")[0] for p in Path(self.root).rglob("*")
                      if p.name.endswith(_SHARED_LIB_SUFFIXES)} if os.path.isdir(self.root) else set()
        self.called: dict[str, int] = {}
        self._old: Any = None

    def _is_own(self, fn: Any) -> str | None:
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, types.ModuleType):
            mod_file = getattr(owner, "__file__", None)
            if mod_file and os.path.realpath(mod_file).startswith(self.root + os.sep):
                return f"{owner.__name__}.{getattr(fn, '__name__', '?')}"
        module = getattr(fn, "__module__", None) or getattr(type(owner), "__module__", None)
        if module and module.split(".")[0] in self.names:
            return f"{module}.{getattr(fn, '__name__', '?')}"
        return None

    def _profile(self, frame, event, arg) -> None:
        if event == "c_call":
            name = self._is_own(arg)
            if name:
                self.called[name] = self.called.get(name, 0) + 1

    def __enter__(self) -> ExtensionCallProbe:
        self._old = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(self._old)

    def evidence(self) -> dict[str, Any]:
        return {"own_kernels": sorted(self.called), "library_kernels": [], "method": "extension c_call"}


# ---- patching -------------------------------------------------------------------------------------------

#: torch module-level functions a cheat would patch. The whole torch namespace is not snapshotted because
#: torch itself rebinds some of its functions lazily (e.g. ``torch.manual_seed`` once CUDA initialises).
TORCH_FUNCTIONS = ("allclose", "equal", "isclose", "eq", "ne", "abs", "save", "load", "randn", "rand", "randint",
                   "Generator", "empty", "empty_like", "zeros", "from_numpy", "as_tensor", "tensor", "clone",
                   "set_num_threads", "get_num_threads", "is_tensor", "no_grad", "inference_mode")


def _callables(obj: Any) -> dict[str, tuple[int, int]]:
    names = None
    if isinstance(obj, tuple):  # (object, names): only these attributes
        obj, names = obj
    try:
        items = list(vars(obj).items())
    except TypeError:
        return {}
    if names is not None:
        items = [(k, v) for k, v in items if k in names]
    # A function's code object too: swapping ``fn.__code__`` keeps the function's identity.
    return {k: (id(v), id(getattr(v, "__code__", None))) for k, v in items
            if callable(v) or isinstance(v, (staticmethod, classmethod, property))}


class PatchSnapshot:
    """Identity of the functions a cheat would patch (timer, checker, serializer, torch, builtins), taken
    before candidate code loads; :meth:`changed` names every one replaced or deleted since."""

    def __init__(self, targets: dict[str, Any]) -> None:
        self.targets = targets
        self.before = {name: _callables(obj) for name, obj in targets.items()}

    def changed(self) -> list[str]:
        out = []
        for name, obj in self.targets.items():
            now = _callables(obj)
            for attr, ident in self.before[name].items():
                if now.get(attr) != ident:
                    out.append(f"{name}.{attr}")
        return sorted(out)


class InstanceSnapshot:
    """The state of the harness objects alive during timing (the fresh-input hook, the timer, its sampler,
    the channel), taken before they are used: a candidate that walks the caller frames from its ``forward``
    can reach them and set an attribute that shadows a method (``fresh.renew = hook``), replace a callable
    they hold, or swap their class. :meth:`changed` names each such change."""

    def __init__(self, objects: dict[str, Any]) -> None:
        self.objects = objects
        self.before = {name: self._state(obj) for name, obj in objects.items()}

    @staticmethod
    def _state(obj: Any) -> tuple[type, dict[str, int]]:
        try:
            items = dict(vars(obj))
        except TypeError:
            items = {}
        return type(obj), {k: id(v) for k, v in items.items() if callable(v)}

    def changed(self) -> list[str]:
        out = []
        for name, obj in self.objects.items():
            cls_before, calls_before = self.before[name]
            cls_now, calls_now = self._state(obj)
            if cls_now is not cls_before:
                out.append(f"{name} instance: class swapped to {cls_now.__qualname__}")
            for attr, ident in calls_now.items():
                if calls_before.get(attr) != ident:
                    shadow = " (shadows a method)" if hasattr(cls_before, attr) else ""
                    out.append(f"{name} instance attribute {attr}{shadow}")
            out.extend(f"{name} instance attribute {attr} (deleted)" for attr in calls_before if attr not in calls_now)
        return sorted(out)


#: aten ops the harness itself runs on the timing path (making, copying and sampling inputs and outputs).
#: A kernel a candidate registers for one of them through the dispatcher runs inside the harness's renewal,
#: outside the clock (issue #25: an extension's own ``aten::copy_`` ran its honest kernel there).
HARNESS_OPS = ("aten::copy_", "aten::_copy_from", "aten::_copy_from_and_resize", "aten::_to_copy", "aten::clone",
               "aten::contiguous", "aten::empty.memory_format", "aten::empty_strided", "aten::normal_",
               "aten::uniform_", "aten::random_", "aten::random_.from", "aten::random_.to", "aten::randn",
               "aten::rand", "aten::randint", "aten::randperm", "aten::bernoulli_.float", "aten::fill_.Scalar",
               "aten::zero_", "aten::index_select", "aten::take", "aten::index.Tensor", "aten::set_.source_Storage",
               "aten::resize_", "aten::as_strided")
#: Dispatch keys whose kernels do the work on a device (other keys: autograd, tracing, functionalization,
#: and the Python/Meta registrations torch.compile adds legitimately).
_KERNEL_KEYS = ("CPU:", "CUDA:", "CompositeExplicitAutograd:", "CompositeImplicitAutograd:", "BackendSelect:",
                "PrivateUse1:")
_dispatch_dump = getattr(torch._C, "_dispatch_dump", None)


class DispatcherSnapshot:
    """Which kernels the dispatcher holds for :data:`HARNESS_OPS` on the device keys, taken before candidate
    code loads; :meth:`changed` names the ops whose kernels were replaced since (~1 ms per call)."""

    def __init__(self, ops: tuple[str, ...] = HARNESS_OPS) -> None:
        self.ops = ops
        self.before = self._table()

    def _table(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        if _dispatch_dump is None:
            return out
        for op in self.ops:
            try:
                text = _dispatch_dump(op)
            except RuntimeError:
                continue  # not an op in this torch
            out[op] = tuple(line for line in text.splitlines() if line.startswith(_KERNEL_KEYS))
        return out

    def changed(self) -> list[str]:
        now = self._table()
        return sorted(f"dispatcher kernel of {op} (registered by the candidate)" for op, lines in now.items()
                      if lines != self.before.get(op))


#: What torch.compile itself rebinds (measured with torch 2.13 on CPU): not reported.
COMPILE_REBINDS = frozenset({"torch.nn.Module.__init__", "torch.nn.Module.__setstate__"})
#: Patch targets that are torch's own API rather than the harness's clock, checker or process tools.
_TORCH_API_TARGETS = ("torch.", "torch.Tensor.", "torch._C._TensorBase.", "torch.nn.functional.", "torch.nn.Module.",
                      "torch.autograd.grad_mode.no_grad.", "torch.serialization.")


def harness_critical(name: str) -> bool:
    """Whether a changed patch target (``"time.perf_counter"``) is one the harness relies on: builtins, time,
    os, threading, torch.cuda (synchronisation, events) and the harness's own modules. torch.compile may
    legitimately rebind torch API functions, never these."""
    if name.startswith("torch.cuda."):  # torch.cuda.synchronize, torch.cuda.Event.*
        return True
    return not name.startswith(_TORCH_API_TARGETS)


def default_patch_targets(harness: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything a cheat would patch: the stdlib pieces the harness relies on, torch's API, this module and
    the guard, plus ``harness`` (name -> module or class): the caller's own clock, checker and protocol
    modules. The worker passes those in, so this module needs no import of the layers above it."""
    import torch._dynamo  # noqa: F401 - its import rebinds torch.manual_seed; OpRecorder (TorchDispatchMode)

    # imports it lazily, which would otherwise flag every honest candidate as having patched torch.
    import torch.nn.functional as F

    from multikernelbench.anticheat import guard, judge  # noqa: F401 - imported so they are covered
    from multikernelbench.timing import loop, stats, stopping

    targets: dict[str, Any] = {
        "builtins": builtins, "time": time, "os": os, "threading": threading, "torch": (torch, TORCH_FUNCTIONS),
        "torch.Tensor": torch.Tensor, "torch._C._TensorBase": torch._C.TensorBase, "torch.nn.functional": F,
        "torch.nn.Module": torch.nn.Module, "torch.cuda": torch.cuda, "torch.cuda.Event": torch.cuda.Event,
        "torch.autograd.grad_mode.no_grad": torch.autograd.grad_mode.no_grad,
        "torch.serialization": torch.serialization,
        "multikernelbench.timing.loop": loop, "multikernelbench.timing.stats": stats,
        "timing.Timer": loop.Timer, "multikernelbench.anticheat.runtime": sys.modules[__name__],
        "multikernelbench.timing.stopping": stopping, "stopping.PairRule": stopping.PairRule,
        "multikernelbench.anticheat.guard": guard,
    }
    for name in ("ExtensionCallProbe", "PatchSnapshot", "OpRecorder"):
        targets[f"runtime.{name}"] = globals()[name]
    targets.update(harness or {})
    return targets


# ---- threads, processes, aliasing ------------------------------------------------------------------------

def python_threads() -> dict[int, str]:
    return {t.ident: t.name for t in threading.enumerate() if t.is_alive() and t.ident is not None}


def _task_cpu_ns() -> tuple[dict[str, int], int]:
    """CPU time of every thread of this process in ns, and its resolution in ns: 1 where the kernel keeps the
    scheduler's own sum (``schedstat``), else a clock tick (``stat``'s utime + stime count whole ticks)."""
    out: dict[str, int] = {}
    tick_ns = 10**9 // (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
    resolution = 1
    for tid in os.listdir("/proc/self/task"):
        try:
            out[tid] = int(Path(f"/proc/self/task/{tid}/schedstat").read_text().split()[0])
            continue
        except (OSError, IndexError, ValueError):
            resolution = tick_ns
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            out[tid] = (int(fields[11]) + int(fields[12])) * tick_ns  # utime + stime
        except (OSError, IndexError, ValueError):
            pass
    return out, resolution


#: The watch window after the forward. Where each thread's CPU time is exact (schedstat, ns), 60 ms shows a
#: thread kept busy as surely as 200 ms of whole 10 ms ticks did (the same 10 % share), at a third of the wait,
#: which a GPU lane spends inside its exclusive clock turn on every timing (issue #44).
EXACT_WINDOW_S = 0.06
TICK_WINDOW_S = 0.2


def _busy_in_window(window_s: float | None, min_share: float) -> set[str]:
    me = str(threading.get_native_id())
    before, resolution = _task_cpu_ns()
    if window_s is None:
        window_s = EXACT_WINDOW_S if resolution == 1 else TICK_WINDOW_S
    t0 = time.monotonic_ns()
    time.sleep(window_s)
    after, resolution_after = _task_cpu_ns()
    # At least two units of the coarser reading: two whole ticks where a thread's time counts ticks, as before.
    limit = max(min_share * (time.monotonic_ns() - t0), 2 * max(resolution, resolution_after))
    return {t for t in after if t != me and after[t] - before.get(t, after[t]) >= limit}


def busy_threads(window_s: float | None = None, settle_s: float = 0.03, min_share: float = 0.1) -> list[str]:
    """OS threads (other than this one) that keep burning CPU after the forward returned: work running in
    the background, outside the timed call. OpenMP pools spin briefly after a region, hence ``settle_s``;
    ``min_share`` is low because on a loaded machine a background thread gets only part of a core. A thread
    must be busy in two windows in a row: on a loaded machine an OpenMP thread descheduled in the middle of
    its spin finishes spinning inside the first window (seen as false alarms on honest candidates while
    compilers ran beside the worker), while background work that outlives the call keeps going.
    ``window_s`` None: :data:`EXACT_WINDOW_S` where the threads' CPU time is exact, else :data:`TICK_WINDOW_S`."""
    if not os.path.isdir("/proc/self/task"):
        return []
    time.sleep(settle_s)
    first = _busy_in_window(window_s, min_share)
    if not first:
        return []
    return sorted(first & _busy_in_window(window_s, min_share))


def child_processes() -> list[int]:
    """Live child processes of this worker (forked by candidate code: Python or C)."""
    me, kids = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for e in entries:
        if e.isdigit():
            try:
                stat = Path(f"/proc/{e}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == me and stat[0] != "Z":
                kids.append(int(e))
    return kids


def _storage_span(t: torch.Tensor) -> tuple[int, int] | None:
    try:
        s = t.untyped_storage()
        return (s.data_ptr(), s.data_ptr() + s.nbytes()) if s.nbytes() else None
    except Exception:
        return None


def aliased_outputs(outputs: list[Any], inputs: list[Any]) -> list[int]:
    """Indices of outputs whose memory overlaps an input's (a view of the input returned as the result)."""
    spans = [_storage_span(t) for t in inputs if isinstance(t, torch.Tensor)]
    out = []
    for i, o in enumerate(outputs):
        so = _storage_span(o) if isinstance(o, torch.Tensor) else None
        if so and any(s and s[0] < so[1] and so[0] < s[1] for s in spans):
            out.append(i)
    return out


def observe(call: Callable[[], Any], probe: Any, record_ops: bool) -> tuple[Any, Evidence]:
    """Run one forward under the dispatcher recorder and the backend's own-kernel probe."""
    evidence: Evidence = {}
    recorder = OpRecorder() if record_ops else None
    if recorder is not None:
        with recorder:
            out = _with_probe(call, probe)
        evidence["ops"] = recorder.ops
    else:
        out = _with_probe(call, probe)
    if probe is not None:
        evidence["kernels"] = probe.evidence()
    return out, evidence


def _with_probe(call: Callable[[], Any], probe: Any) -> Any:
    if probe is None:
        return call()
    with probe:
        return call()
