"""``pallas`` backend: JAX Pallas candidates, in two dialects.

* ``dialect="tpu"`` — kernels written for TPUs, as on MultiKernelBench's Pallas platform. Where no TPU is
  present (CI, the H200 host) they run in Pallas' interpret mode on the CPU: correctness only, and
  ``timing_available`` is False (interpreter speed says nothing about a TPU).
* ``dialect="gpu"`` — kernels for Pallas' GPU lowering (Triton), run natively on an NVIDIA device and timed
  with :class:`~multikernelbench.timing.cuda_events.CudaEventSampler` (no CUDA graphs: XLA's launches are
  not captured by torch's graph, so short kernels are timed as K back-to-back calls per event pair). Without
  a GPU they, too, fall back to interpret mode on the CPU for correctness.

Interpret mode is applied without touching the candidate: before its module executes, the worker wraps
``jax.experimental.pallas.pallas_call`` so every call gets ``interpret=True`` (the candidate's own value is
overridden; a candidate cannot opt out of it on a machine without the target hardware).

Candidates receive and return torch tensors; ``multikernelbench.interop.pallas`` (``to_jax``/``to_torch``)
is the documented bridge: DLPack zero-copy on the GPU, numpy on the CPU.

Options: ``dialect`` ("gpu" when a CUDA device is visible, else "tpu"); ``interpret`` (default: True unless
the dialect's hardware is present).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.backends.cuda import cuda_device_reason
from multikernelbench.backends.options import GpuTimerOptions


def _jax_cuda_plugin() -> bool:
    return any(importlib.util.find_spec(m) is not None
               for m in ("jax_cuda13_plugin", "jax_cuda12_plugin", "jax_plugins.xla_cuda13",
                         "jax_plugins.xla_cuda12"))


@dataclass(frozen=True)
class PallasOptions(GpuTimerOptions):
    #: ``gpu`` or ``tpu`` (default: gpu where a CUDA device is visible).
    dialect: str | None = None
    #: Run with ``interpret=True`` on the CPU (correctness only); default: when the dialect cannot run here.
    interpret: bool | None = None


class PallasBackend(Backend):
    name = "pallas"
    Options = PallasOptions
    opts: PallasOptions
    worker_env_allow = Backend.worker_env_allow + ("JAX_*", "XLA_*", "TPU_*", "LIBTPU_*")
    language = "JAX Pallas (pallas_call)"
    device_type = "cuda"
    times_on_cpu_shape = False
    overlap_compile_with_timing = False
    timing_available = True
    #: JAX's device memory cannot be exported by IPC handle (seen on an H100): an honest Pallas upsample (4 GiB
    #: output) was convicted when only its outputs paid the staging copy (2026-12-05, ~3.6 ms per call over the
    #: clean worker's renewal).
    stages_outputs = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        gpu_reason = cuda_device_reason()
        self.dialect = self.opts.dialect or ("gpu" if not gpu_reason else "tpu")
        if self.dialect not in ("gpu", "tpu"):
            raise ValueError(f"pallas dialect must be 'gpu' or 'tpu', not {self.dialect!r}")
        interpret = self.opts.interpret
        if interpret is None:
            # No TPU is ever attached to this harness' hosts; a GPU runs the gpu dialect natively.
            interpret = self.dialect == "tpu" or bool(gpu_reason) or not _jax_cuda_plugin()
        self.interpret = bool(interpret)
        if self.interpret:
            self.device_type = "cpu"
            self.stages_outputs = False
            self.times_on_cpu_shape = True
            self.timing_available = False

    def availability(self) -> Availability:
        if importlib.util.find_spec("jax") is None:
            return Availability(False, "jax is not installed (pip install jax)")
        if not self.interpret:
            reason = cuda_device_reason()
            if reason:
                return Availability(False, f"pallas gpu dialect: {reason}")
            if not _jax_cuda_plugin():
                return Availability(False, "pallas gpu dialect: jax has no CUDA plugin (pip install jax[cuda13])")
        return Availability(True)

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        env = super().worker_env(build_dir)
        # torch and XLA share the device: XLA must not grab 75 % of its memory at start.
        env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
        env["JAX_PLATFORMS"] = "cpu" if self.interpret else "cuda,cpu"
        env["MKB_PALLAS_DIALECT"] = self.dialect
        if self.interpret:
            env["MKB_PALLAS_INTERPRET"] = "1"
        else:
            # The gpu dialect is Pallas' Triton lowering (what the exemplars teach). JAX >= 0.10 defaults
            # pallas_call to Mosaic GPU; a candidate can still ask for it with Mosaic compiler_params.
            env["JAX_PALLAS_USE_MOSAIC_GPU"] = "0"
        return env

    def _patch_interpret(self) -> None:
        import jax.experimental.pallas as pl

        orig = getattr(pl.pallas_call, "__mkb_original__", pl.pallas_call)

        def pallas_call(*args, **kwargs):
            kwargs["interpret"] = True
            return orig(*args, **kwargs)

        pallas_call.__mkb_original__ = orig  # type: ignore[attr-defined]
        pallas_call.__doc__ = orig.__doc__
        pl.pallas_call = pallas_call

    def load(self, source: str, build_dir: Path):
        if self.interpret:
            self._patch_interpret()
        return super().load(source, Path(build_dir))

    def synchronize(self) -> None:
        if not self.interpret:
            torch.cuda.synchronize()  # device-wide: includes XLA's streams (same primary context)

    def make_timer(self, config: Any):
        if self.interpret:
            from multikernelbench.timing.host import host_timer

            return host_timer(config)
        from multikernelbench.timing.cuda_events import cuda_event_timer

        return cuda_event_timer(config, allow_graphs=False, **self.opts.timer_kwargs())

    def hardware(self) -> str:
        if self.interpret:
            return f"pallas-interpret-{self.dialect} (cpu)"
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no-cuda-device"

    def versions(self) -> dict[str, str]:
        v = super().versions()
        try:
            import jax

            v["jax"] = jax.__version__
        except Exception:
            v["jax"] = "missing"
        v["dialect"] = self.dialect
        v["mode"] = "interpret" if self.interpret else "native"
        return v
