"""``triton`` backend: Triton candidates on an NVIDIA GPU, or through Triton's interpreter on the CPU.

On a machine with a CUDA device, candidates run natively and are timed with
:class:`~multikernelbench.timing.cuda_events.CudaEventSampler`, exactly like ``cuda`` candidates.

Without one (CI), the same candidates run under ``TRITON_INTERPRET=1``: ``@triton.jit`` functions execute
in numpy on CPU tensors, which checks correctness at the test shapes. Interpreter speed says nothing about
GPU speed, so ``timing_available`` is False there and results carry no timing rather than a made-up one.

Options: ``interpret`` (default: True exactly when no CUDA device is visible); timer options as for cuda.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.backends.cuda import cuda_device_reason
from multikernelbench.backends.options import GraphTimerOptions


@dataclass(frozen=True)
class TritonOptions(GraphTimerOptions):
    #: Run in the interpreter on the CPU (correctness only); default: exactly when no CUDA device is visible.
    interpret: bool | None = None


class TritonBackend(Backend):
    name = "triton"
    Options = TritonOptions
    opts: TritonOptions
    worker_env_allow = Backend.worker_env_allow + ("TRITON_*",)
    language = "Triton (Python DSL, @triton.jit)"
    device_type = "cuda"
    times_on_cpu_shape = False
    overlap_compile_with_timing = False  # Triton compiles lazily, at the first launch inside the worker
    timing_available = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        interpret = self.opts.interpret
        if interpret is None:
            interpret = bool(cuda_device_reason())
        self.interpret = bool(interpret)
        if self.interpret:
            # Instance attributes shadow the class defaults the engine reads.
            self.device_type = "cpu"
            self.times_on_cpu_shape = True
            self.timing_available = False

    def availability(self) -> Availability:
        if importlib.util.find_spec("triton") is None:
            return Availability(False, "the triton package is not installed (pip install triton)")
        if not self.interpret:
            reason = cuda_device_reason()
            if reason:
                return Availability(False, reason + "; use interpret=True for CPU correctness only")
        return Availability(True)

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        env = super().worker_env(build_dir)
        env["TRITON_CACHE_DIR"] = str(Path(build_dir) / "triton_cache")
        if self.interpret:
            env["TRITON_INTERPRET"] = "1"
        return env

    def synchronize(self) -> None:
        if not self.interpret:
            torch.cuda.synchronize()

    def kernel_probe(self, build_dir: Path) -> Any:
        """On the GPU: own-kernel evidence from the profiler; the interpreter launches no device kernels."""
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
            return "triton-interpreter (cpu)"
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no-cuda-device"

    def versions(self) -> dict[str, str]:
        v = super().versions()
        try:
            import triton

            v["triton"] = triton.__version__
        except Exception:
            v["triton"] = "missing"
        v["mode"] = "interpret" if self.interpret else "gpu"
        return v
