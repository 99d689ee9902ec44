"""``numba_cuda`` backend: CUDA kernels in Python syntax (``numba.cuda.jit``) on an NVIDIA GPU, or in
Numba's CUDA simulator on the CPU.

On a machine with a CUDA device, candidates launch their kernels on torch tensors through
``__cuda_array_interface__`` on torch's current stream (``multikernelbench.interop.numba_cuda``) and are
timed with :class:`~multikernelbench.timing.cuda_events.CudaEventSampler` like ``cuda`` and ``triton``
candidates -- without CUDA graphs: Numba's launch path (argument marshalling, lazy module loading on a
kernel's first call per signature) is not something torch's graph capture is known to accept, so short
kernels are timed as back-to-back calls per event pair, as Pallas' are.

Without one (CI), the same candidates run under ``NUMBA_ENABLE_CUDASIM=1``: every simulated GPU thread is a
Python thread working on the CPU tensors' numpy views. That checks correctness (indexing, bounds, shared
memory and ``syncthreads`` semantics) at the test shapes; its speed says nothing about a GPU, so
``timing_available`` is False and results carry no timing.

Options: ``simulate`` (default: True exactly when no CUDA device is visible); timer options as for cuda.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.backends.cuda import cuda_device_reason
from multikernelbench.backends.options import GpuTimerOptions

#: The simulator's thread switch interval (see :meth:`NumbaCudaBackend.prepare_worker`); CPython's default is 5 ms.
SIMULATOR_SWITCH_INTERVAL_S = 0.0005


@dataclass(frozen=True)
class NumbaCudaOptions(GpuTimerOptions):
    #: Run in Numba's CUDA simulator on the CPU (correctness only); default: exactly when no CUDA device is
    #: visible. ``interpret`` is the other backends' name for it.
    simulate: bool | None = None
    interpret: bool | None = None


class NumbaCudaBackend(Backend):
    name = "numba_cuda"
    Options = NumbaCudaOptions
    opts: NumbaCudaOptions
    worker_env_allow = Backend.worker_env_allow + ("NUMBA_*",)
    language = "Numba CUDA (Python syntax, @cuda.jit)"
    device_type = "cuda"
    times_on_cpu_shape = False
    overlap_compile_with_timing = False  # Numba compiles at a kernel's first launch, inside the device worker
    timing_available = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        simulate = self.opts.simulate if self.opts.simulate is not None else self.opts.interpret
        if simulate is None:
            simulate = bool(cuda_device_reason())
        self.simulate = bool(simulate)
        #: Read by ``mkb backends`` and the reports: the simulator is an interpreter (correctness only).
        self.interpret = self.simulate
        if self.simulate:
            self.device_type = "cpu"
            self.times_on_cpu_shape = True
            self.timing_available = False
            # The zygote (started with this backend's worker_env, so NUMBA_ENABLE_CUDASIM=1) imports Numba and
            # its simulator once, not every worker (~1.3 s of CPU each; a candidate has two workers). Numba
            # re-reads its environment (the candidate's NUMBA_CACHE_DIR) at each compile (config.reload_config).
            self.zygote_preload = ("numba", "numba.cuda")

    def availability(self) -> Availability:
        if importlib.util.find_spec("numba") is None or importlib.util.find_spec("numba_cuda") is None:
            return Availability(False, "numba-cuda is not installed (pip install numba-cuda)")
        if not self.simulate:
            reason = cuda_device_reason()
            if reason:
                return Availability(False, reason + "; use simulate=True for CPU correctness only")
            return Availability(True)
        return Availability(True, "Numba's CUDA simulator on the CPU: checks correctness only, no timing "
                                  "(no usable GPU here)")

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        env = super().worker_env(build_dir)
        # Per-candidate toolchain cache (cache=True kernels write their PTX/cubin here, never into ~/.cache).
        env["NUMBA_CACHE_DIR"] = str(Path(build_dir) / "numba_cache")
        if self.simulate:
            env["NUMBA_ENABLE_CUDASIM"] = "1"
        return env

    def prepare_worker(self) -> None:
        """In the worker (and ``exemplar_check``), before the candidate loads; simulator only: CPython's thread
        switch interval down from 5 ms to 0.5 ms. The simulator's block manager polls its threads in a loop that
        never blocks (``numba.cuda.simulator.kernel.BlockManager.run``), so at every ``syncthreads`` the
        simulated threads wait for the manager's forced GIL release: up to a whole interval per hand-off. The math
        exemplar (a scan: ~1,200 barriers of 128 threads per seed) took 75 s of CPU at 5 ms, 11 s at 0.5 ms,
        with the same results (benchmarks/test_suite_2core/README.md). Nothing is timed in the simulator.

        And the simulator's shared arrays are made atomic to allocate (``backends/numba_simulator.py``): its own
        lookup races between simulated threads and convicted an honest scan in CI."""
        if self.simulate:
            sys.setswitchinterval(SIMULATOR_SWITCH_INTERVAL_S)
            from multikernelbench.backends.numba_simulator import make_shared_arrays_atomic

            make_shared_arrays_atomic()

    def load(self, source: str, build_dir: Path):
        _numpy_aliases_numba_needs()
        self.prepare_worker()
        return super().load(source, Path(build_dir))

    def synchronize(self) -> None:
        if not self.simulate:
            torch.cuda.synchronize()  # device-wide: every stream, Numba's included (same primary context)

    def kernel_probe(self, build_dir: Path) -> Any:
        """On the GPU: the profiler sees Numba's kernels (CUPTI records every launch in the context, whatever
        API made it); the simulator launches no device kernels."""
        if self.simulate:
            return None
        from multikernelbench.anticheat.gpu_probe import ProfilerKernelProbe

        return ProfilerKernelProbe()

    def make_timer(self, config: Any):
        if self.simulate:
            # Never used for reported numbers (timing_available is False); kept so the interface holds.
            from multikernelbench.timing.host import host_timer

            return host_timer(config)
        from multikernelbench.timing.cuda_events import cuda_event_timer

        return cuda_event_timer(config, allow_graphs=False, **self.opts.timer_kwargs())

    def hardware(self) -> str:
        if self.simulate:
            return "numba-cuda-simulator (cpu)"
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no-cuda-device"

    def versions(self) -> dict[str, str]:
        v = super().versions()
        from importlib.metadata import PackageNotFoundError, version

        for dist in ("numba", "numba-cuda"):
            try:
                v[dist] = version(dist)
            except PackageNotFoundError:
                v[dist] = "missing"
        v["mode"] = "simulator" if self.simulate else "gpu"
        return v


def _numpy_aliases_numba_needs() -> None:
    """In the worker, before the candidate's first kernel compiles: numba-cuda 0.30's typing registry registers
    an overload for ``np.row_stack``, which numpy 2.4 removed (an alias of ``np.vstack``); on the H200 image
    (numba-cuda 0.30.4, a newer numpy) every first compile failed with AttributeError. The alias is put back,
    only where missing: the harness's doing, the same function under its old name, not the candidate's."""
    import numpy as np

    if not hasattr(np, "row_stack"):
        # unused-ignore: numpy releases whose stubs still declare row_stack accept the assignment
        np.row_stack = np.vstack  # type: ignore[attr-defined, unused-ignore]
