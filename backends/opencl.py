"""``opencl`` backend: OpenCL C kernels built from source with pyopencl, run on torch tensors' memory.

**Candidates.** A Python file whose ``ModelNew`` builds an OpenCL program from an OpenCL C string at import time
(``cl.Program(ctx, SRC).build()``) and launches its kernels from ``forward``. Tensors arrive and leave as CPU
torch tensors; the candidate moves their memory across explicitly: ``cl.Buffer(ctx, READ_ONLY | COPY_HOST_PTR,
hostbuf=x.numpy())`` in, ``cl.enqueue_copy(queue, out.numpy(), out_buf)`` back (or zero-copy ``USE_HOST_PTR``
buffers on the CPU device). The copies are part of the candidate's measured time, as Pallas' host round trips
are. The harness chooses the device: the worker gets ``PYOPENCL_CTX`` so ``cl.create_some_context(
interactive=False)`` returns a context on it.

**Devices.** Whatever OpenCL platforms the machine has, found by a subprocess probe
(:mod:`multikernelbench.backends.opencl_devices`): on CPUs PoCL (Debian's ``pocl-opencl-icd``: each kernel
compiled by LLVM, run by PoCL's pthread device), on the H200 host NVIDIA's OpenCL driver where the image
installs its ICD. Option ``device``: ``"auto"`` (default: a GPU if one is listed, else the CPU device),
``"cpu"``, ``"gpu"`` or a substring of the platform/device name. No device of the asked kind means the backend
is unavailable, with the probe's findings as the reason. Inputs live on the host in both cases, so the reference
(PyTorch eager) runs on the CPU and timing uses the task's CPU shape; on a GPU device the candidate's time
includes the PCIe copies. The speedup is therefore "this OpenCL device, copies included, vs. eager torch on this
host's CPU", stated in the result's hardware string.

**Timing.** Host clock (``perf_counter_ns``) around one call plus ``clFinish`` on every queue the candidate
used (:class:`~multikernelbench.backends.opencl_runtime.QueueFinishingSampler`): real timings on PoCL in CI.

**What "the candidate's own kernel ran" means here.** The worker wraps pyopencl's kernel-enqueue entry points
before the candidate executes (:class:`~multikernelbench.backends.opencl_runtime.EnqueueRecorder`). During an
observed forward it records each enqueued kernel's name: the candidate's own kernels are those declared
(``__kernel void name``) in the OpenCL C of its own file; any other kernel (pyopencl.array, ElementwiseKernel,
ReductionKernel library kernels) is library work. No enqueue of an own kernel = flagged; torch compute on the
host is caught by the dispatcher recorder as for every backend; numpy compute on the host and pyopencl's
library modules are flagged by static rules (:mod:`multikernelbench.anticheat.static`, ``opencl_*`` rules).

**Caches.** PoCL's kernel cache (``POCL_CACHE_DIR``) and NVIDIA's JIT cache (``CUDA_CACHE_PATH``) go under the
worker's own build folder; pyopencl's binary cache is off (``PYOPENCL_NO_CACHE``: PoCL and the NVIDIA driver
cache compiled kernels themselves), so nothing is written under ``~/.cache``. Option ``threads``: PoCL's
worker threads (default: the usable cores).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.backends.opencl_devices import OpenCLDevice, probe
from multikernelbench.backends.options import BackendOptions
from multikernelbench.util.procs import usable_cores


@dataclass(frozen=True)
class OpenCLOptions(BackendOptions):
    #: Which OpenCL device: ``cpu``, ``gpu``, a name's part, or auto (the first usable one).
    device: str | None = None


class OpenCLBackend(Backend):
    name = "opencl"
    Options = OpenCLOptions
    opts: OpenCLOptions
    language = "OpenCL C (kernels built from source with pyopencl)"
    device_type = "cpu"  # where the candidate's torch tensors live; the OpenCL device is reached by copies
    times_on_cpu_shape = True
    overlap_compile_with_timing = False  # PoCL compiles with LLVM on the same cores it runs kernels on
    timing_available = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.selector = str(self.opts.device or "auto")
        self._recorder: Any = None
        self._own: set[str] = set()

    # ---- parent ------------------------------------------------------------------------------------------
    def chosen(self) -> OpenCLDevice | None:
        return probe().pick(self.selector)

    def limits_address_space(self) -> bool:
        # NVIDIA's OpenCL driver reserves GPU-sized address ranges: under RLIMIT_AS its context creation fails
        # with OUT_OF_HOST_MEMORY (seen on the H200); PoCL on the CPU is limited like any CPU worker.
        device = self.chosen()
        return device is None or device.kind == "cpu"

    def availability(self) -> Availability:
        if importlib.util.find_spec("pyopencl") is None:
            return Availability(False, "pyopencl is not installed (pip install pyopencl; on Debian CPUs also "
                                       "apt-get install pocl-opencl-icd)")
        found = probe()
        dev = found.pick(self.selector)
        if dev is None:
            return Availability(False, f"no OpenCL device matching {self.selector!r}: {found.summary()}")
        # ok with a note: what was found, shown by `mkb backends`
        return Availability(True, found.summary(dev))

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        env = super().worker_env(build_dir)
        dev = self.chosen()
        if dev is not None:
            env["PYOPENCL_CTX"] = dev.ctx_spec
        env["PYOPENCL_NO_CACHE"] = "1"
        env["POCL_CACHE_DIR"] = str(Path(build_dir) / "pocl_cache")
        env["CUDA_CACHE_PATH"] = str(Path(build_dir) / "nv_cache")
        # The kernel sandbox (engine/kernel_sandbox.py) lets a worker write only the folders named here: PoCL's
        # cache is the candidate's own (CUDA_CACHE_PATH is on the sandbox's list of cache variables already).
        from multikernelbench.util.sandbox_paths import WRITE_ENV

        env[WRITE_ENV] = os.pathsep.join(p for p in (env.get(WRITE_ENV, ""), env["POCL_CACHE_DIR"]) if p)
        if os.environ.get("OCL_ICD_VENDORS"):
            env["OCL_ICD_VENDORS"] = os.environ["OCL_ICD_VENDORS"]
        threads = str(self.opts.threads or usable_cores())
        env["POCL_MAX_PTHREAD_COUNT"] = threads  # PoCL 3.x
        env["POCL_CPU_MAX_CU_COUNT"] = threads  # PoCL >= 4 spells it this way
        return env

    def sandbox_read_dirs(self, build_dir: Path) -> list[str]:
        """A vendor-ICD folder named by the user (``OCL_ICD_VENDORS``; the device run registers NVIDIA's driver
        library that way when the image lacks its ICD file): the ICD loader in the worker must read it."""
        vendors = os.environ.get("OCL_ICD_VENDORS", "")
        return [vendors] if vendors else []

    # ---- device worker --------------------------------------------------------------------------------------
    def _ensure_recorder(self):
        if self._recorder is None:
            from multikernelbench.backends.opencl_runtime import EnqueueRecorder

            self._recorder = EnqueueRecorder()
            self._recorder.install()
        return self._recorder

    def load(self, source: str, build_dir: Path):
        from multikernelbench.backends.opencl_runtime import declared_kernels

        self._ensure_recorder()  # before the candidate executes: it may keep references to the enqueue functions
        self._own = declared_kernels(source)
        return super().load(source, Path(build_dir))

    def synchronize(self) -> None:
        if self._recorder is not None:
            self._recorder.finish_all()

    def kernel_probe(self, build_dir: Path) -> Any:
        from multikernelbench.backends.opencl_runtime import OpenCLKernelProbe

        # Lazily bound: the trusted parent also calls this (to learn that a probe exists) and must not load OpenCL.
        return OpenCLKernelProbe(self._ensure_recorder, self._own)

    def make_timer(self, config: Any):
        from multikernelbench.backends.opencl_runtime import QueueFinishingSampler
        from multikernelbench.timing.loop import Timer

        return Timer(config, QueueFinishingSampler(self._ensure_recorder()))

    def hardware(self) -> str:
        """The OpenCL device's own name: "NVIDIA H200" through NVIDIA's driver (so the committed H200 peak table
        gives roofline fractions), "pthread-<cpu>" on PoCL (no peak table: no fraction, as for ``cpu``)."""
        dev = self.chosen()
        return dev.name if dev else "no-opencl-device"

    def versions(self) -> dict[str, str]:
        v = super().versions()
        try:
            from importlib.metadata import version

            v["pyopencl"] = version("pyopencl")
        except Exception:  # noqa: BLE001
            v["pyopencl"] = "missing"
        dev = self.chosen()
        v["opencl_platform"] = dev.platform_version if dev else "none"
        return v
