"""``helion`` backend: Helion kernels (PyTorch's tile DSL, ``@helion.kernel``), lowered by Helion to Triton.

On a machine with a CUDA device, Helion generates a Triton kernel per ``@helion.kernel`` function (and shape,
Helion specialises on shapes by default), Triton compiles it at the first call, and candidates are timed with
:class:`~multikernelbench.timing.cuda_events.CudaEventSampler` exactly like ``triton`` candidates.

Versions: CI runs helion 1.5.1 (torch 2.13); the H200 image has torch 2.11, where 1.5.1 does not import (it needs
torch >= 2.12's ``IntelGPUError``), so the wheel carried there is helion 1.5.0 (see :func:`_version_hint`). This
module uses no Helion API itself (only ``import helion`` in a probe), so it works with both.

Without one (CI), measured on this CPU host (helion 1.5.1, triton 3.9, torch 2.13 CPU): Helion still generates
its Triton code, and ``TRITON_INTERPRET=1`` makes Triton's interpreter run that code on CPU tensors. That checks
the candidate's own lowered kernel for correctness at the test shapes; interpreter speed says nothing about a
GPU, so ``timing_available`` is False there. (Helion's other CPU path, ``HELION_INTERPRET=1``, runs the kernel
body as eager PyTorch and never touches the generated code, so it is not used: it would pass kernels whose
Triton lowering is broken.)

Worker settings (``worker_env``), each for a reason:

* ``HELION_AUTOTUNE_EFFORT=none``: a kernel without an explicit ``config=`` would otherwise autotune on its
  first call (minutes of compiling and benchmarking inside the timed worker); with ``none`` it runs Helion's
  default config. The prompt contract asks for an explicit ``helion.Config``.
* ``TRITON_F32_DEFAULT=ieee``: Helion's default float32 dot precision is TF32, outside the tolerance of a
  float32 task (the static rules flag a candidate that asks for TF32 itself).
* ``TRITON_CACHE_DIR`` in the candidate's build folder: the toolchain cache of the sandbox's per-candidate
  folders (Helion's generated code goes through Triton's cache).

Options: ``interpret`` (default: True exactly when no CUDA device is visible); timer options as for cuda.
"""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.backends.cuda import cuda_device_reason
from multikernelbench.backends.options import GraphTimerOptions


@dataclass(frozen=True)
class HelionOptions(GraphTimerOptions):
    #: Run in the interpreter on the CPU (correctness only); default: exactly when no CUDA device is visible.
    interpret: bool | None = None


class HelionBackend(Backend):
    name = "helion"
    Options = HelionOptions
    opts: HelionOptions
    worker_env_allow = Backend.worker_env_allow + ("TRITON_*", "HELION_*")
    language = "Helion (PyTorch tile DSL, @helion.kernel, lowered to Triton)"
    device_type = "cuda"
    times_on_cpu_shape = False
    overlap_compile_with_timing = False  # Helion and Triton compile at the first call, inside the worker
    timing_available = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        interpret = self.opts.interpret
        if interpret is None:
            interpret = bool(cuda_device_reason())
        self.interpret = bool(interpret)
        if self.interpret:
            self.device_type = "cpu"
            self.times_on_cpu_shape = True
            self.timing_available = False
            # Imported once in the zygote (started with this backend's worker_env, TRITON_INTERPRET=1 among it),
            # not in every worker: ~4.4 s of CPU each, two workers per candidate. Helion reads its settings and
            # Triton its interpreter switch when a kernel is made, after the fork, in the worker's environment.
            self.zygote_preload = ("helion", "helion.language")

    def availability(self) -> Availability:
        if importlib.util.find_spec("helion") is None:
            return Availability(False, "the helion package is not installed (pip install helion; it lowers to "
                                       "Triton, so triton is needed too)")
        if importlib.util.find_spec("triton") is None:
            return Availability(False, "helion lowers to Triton, and the triton package is not installed")
        broken = "" if self.interpret else _import_problem()  # on the CPU the test suite would show it
        if broken:
            hint = _version_hint(broken)
            return Availability(False, f"helion does not import with this torch/triton: {broken}{hint}")
        if not self.interpret:
            reason = cuda_device_reason()
            if reason:
                return Availability(False, reason + "; use interpret=True for CPU correctness only")
            return Availability(True)
        return Availability(True, "Triton's interpreter runs Helion's generated kernels on the CPU: checks "
                                  "correctness only, no timing (no usable GPU here)")

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        env = super().worker_env(build_dir)
        env["TRITON_CACHE_DIR"] = str(Path(build_dir) / "triton_cache")
        env["HELION_AUTOTUNE_EFFORT"] = "none"
        env["TRITON_F32_DEFAULT"] = "ieee"
        if self.interpret:
            env["TRITON_INTERPRET"] = "1"
        return env

    def prepare_worker(self) -> None:
        """In the worker, before the candidate loads (both harmless library settings, not the candidate's):

        * tqdm's monitor thread off: Helion compiles a kernel through ``torch.fx.Interpreter.run``, which makes a
          tqdm bar, and tqdm starts a ``tqdm_monitor`` thread for the first bar, even a disabled one. The
          anti-cheat thread check rightly flags a thread that outlives the forward (measured: every correct
          Helion candidate came back ``cheat_detected`` for it). ``monitor_interval = 0`` is tqdm's own switch.
        * CPU only: Helion's generated code calls math through ``libdevice`` (``torch.exp`` becomes
          ``libdevice.exp``), which Triton's interpreter does not emulate (its stubs return None: measured with
          triton 3.9). Those names are pointed at ``triton.language.math``'s functions of the same name, which
          the interpreter runs (in numpy, at full precision). Nothing changes on the GPU."""
        try:
            import tqdm
        except ImportError:  # no tqdm, no monitor thread
            pass
        else:
            tqdm.tqdm.monitor_interval = 0
        if not self.interpret:
            return
        import triton.language as tl
        from torch._inductor.runtime.triton_compat import libdevice

        if libdevice is tl.math:
            return

        def late(name: str):
            # Looked up at call time: the interpreter swaps tl.math's functions only while a kernel runs.
            return lambda *args, **kwargs: getattr(tl.math, name)(*args, **kwargs)

        for name in dir(tl.math):
            if not name.startswith("_") and callable(getattr(tl.math, name)) and hasattr(libdevice, name):
                setattr(libdevice, name, late(name))

    def load(self, source: str, build_dir: Path):
        self.prepare_worker()
        return super().load(source, Path(build_dir))

    def synchronize(self) -> None:
        if not self.interpret:
            torch.cuda.synchronize()

    def kernel_probe(self, build_dir: Path) -> Any:
        """On the GPU: the profiler sees the Triton kernels Helion generated (named ``_helion_<function>``);
        the interpreter launches no device kernels."""
        if self.interpret:
            return None
        from multikernelbench.anticheat.gpu_probe import ProfilerKernelProbe

        return ProfilerKernelProbe()

    def make_timer(self, config: Any):
        if self.interpret:
            # Never used for reported numbers (timing_available is False); kept so the interface holds.
            from multikernelbench.timing.host import host_timer

            return host_timer(config)
        from multikernelbench.timing.cuda_events import cuda_event_timer

        return cuda_event_timer(config, **self.opts.timer_kwargs())

    def hardware(self) -> str:
        if self.interpret:
            return "helion-triton-interpreter (cpu)"
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no-cuda-device"

    def versions(self) -> dict[str, str]:
        v = super().versions()
        from importlib.metadata import PackageNotFoundError, version

        for dist in ("helion", "triton"):
            try:
                v[dist] = version(dist)
            except PackageNotFoundError:
                v[dist] = "missing"
        v["mode"] = "interpret" if self.interpret else "gpu"
        return v


@functools.lru_cache(maxsize=1)
def _import_problem() -> str:
    """Why ``import helion`` fails here, or "" (in a subprocess: the trusted parent never imports the DSL).
    Measured on the H200 image: helion 1.5.1 needs ``IntelGPUError`` from torch 2.12's inductor, which torch
    2.11 lacks, so every candidate failed to compile there; the backend now says so instead."""
    try:
        out = subprocess.run([sys.executable, "-c", "import helion"], capture_output=True, text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"probe failed: {exc!r}"
    if out.returncode == 0:
        return ""
    lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else f"exit status {out.returncode}"


def _version_hint(broken: str) -> str:
    """What to install instead, for the one mismatch measured: ``import helion`` of 1.5.1 on torch 2.11 (the H200
    image's). helion 1.5.0 has no ``IntelGPUError`` import and is the newest release that imports with torch
    2.11.0+cu130 and triton 3.6.0; checked on the CPU with those builds, where every shipped helion solution and
    exemplar passes through Triton's interpreter (1.4.0 imports too). Its one other torch>=2.12 import
    (``FinalizeCodegenResult``) is only reached by ``torch.compile`` of a Helion kernel, which the static rules
    reject in a candidate (``static_rules.COMPILERS``)."""
    if "IntelGPUError" not in broken:
        return ""
    return (f" (torch {torch.__version__} is older than 2.12, which helion 1.5.1 needs; helion 1.5.0 is the newest "
            "release that imports with torch 2.11)")
