"""``cuda`` backend: CUDA C++ candidates built through torch's extension loader, timed with CUDA events.

Candidates are exactly what KernelBench / MultiKernelBench emit: a Python module that calls
``torch.utils.cpp_extension.load_inline(..., cuda_sources=...)`` at import time and defines ``ModelNew``.
The backend never rewrites that source. It builds for the device's real architecture (``TORCH_CUDA_ARCH_LIST``
= the device's compute capability, e.g. ``9.0`` on the H200: SASS, not PTX-only), and by default installs
:class:`~multikernelbench.backends.extbuild.cuda_build.FastExtensionBuilder` (content-keyed build cache, precompiled
header for the g++ half, no nvcc dependency pass). ``CudaBackend(fast_build=False)`` gives the stock loader,
which ``scripts/compile_time_bench.py`` uses as the comparison.

Options (``mkb eval --backend cuda`` passes none; tests and scripts may):
``fast_build`` (default True), ``split_nvcc`` (default True; see backends/extbuild/nvcc_split.py), ``light_headers``
(default True: the ``.cu`` with ``<torch/extension.h>`` read as ``<torch/types.h>`` where that keeps its meaning,
stock otherwise; see backends/extbuild/light_headers.py), ``light_ahead`` (default True: a ``.cu`` whose light-header
analysis is not made yet starts its light compile beside the wait; see backends/extbuild/nvcc_light.py), ``light_ops``
(default True: a light build reads only the per-operator headers its ``.cu`` names, from the warmer's analysis;
see backends/extbuild/ops_headers.py), ``light_main`` (default True: main.cpp with the light header where that keeps
its meaning; see backends/extbuild/light_main.py), ``cache_dir`` (default:
``ext`` in the candidate's build folder, which only that candidate's workers may write; the precompiled headers
stay shared, read-only, in ``<build_root>/cuda/_ext_cache/pch``), ``max_jobs`` (ninja jobs per build, default 4), plus ``short_ms``/``batch_target_ms``
for the timer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.backends.options import GraphTimerOptions
from multikernelbench.util.procs import usable_cores


@lru_cache(maxsize=1)
def nvcc_path() -> str | None:
    try:
        from torch.utils.cpp_extension import CUDA_HOME
    except Exception:
        CUDA_HOME = None
    if CUDA_HOME and Path(CUDA_HOME, "bin", "nvcc").exists():
        return str(Path(CUDA_HOME, "bin", "nvcc"))
    return shutil.which("nvcc")


@lru_cache(maxsize=1)
def nvcc_version() -> str:
    nvcc = nvcc_path()
    if not nvcc:
        return ""
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except Exception:
        return ""
    for line in out.splitlines():
        if "release" in line:
            return line.split("release", 1)[1].split(",")[0].strip()
    return out.strip().splitlines()[-1] if out.strip() else ""


@lru_cache(maxsize=1)
def device_arch() -> str:
    """Compute capability of device 0 as TORCH_CUDA_ARCH_LIST wants it ("9.0"); nvidia-smi avoids a CUDA
    context in the trusted parent, torch is the fallback."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.split()
        if out and out[0].replace(".", "").isdigit():
            return out[0]
    except Exception:
        pass
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability(0)
        return f"{major}.{minor}"
    return ""


def cuda_device_reason() -> str:
    """'' when torch sees a CUDA device, else why not."""
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is built without CUDA"
    if not torch.cuda.is_available():
        return "no CUDA device visible (torch.cuda.is_available() is False)"
    return ""


@dataclass(frozen=True)
class CudaOptions(GraphTimerOptions):
    """The module docstring says what each speed-up does; all on by default."""

    fast_build: bool = True
    pch: bool = True
    split_nvcc: bool = True
    light_headers: bool = True
    light_ahead: bool = True
    #: Light builds read only the per-operator headers their .cu names (backends/extbuild/ops_headers.py).
    light_ops: bool = True
    #: main.cpp against the light torch/extension.h where its meaning is the same (backends/extbuild/light_main.py).
    light_main: bool = True
    pch_root: str | None = None
    cache_dir: str | None = None
    #: TORCH_CUDA_ARCH_LIST for the builds (default: the device's compute capability).
    arch: str | None = None
    #: ninja jobs per build.
    max_jobs: int = 4


class CudaBackend(Backend):
    name = "cuda"
    Options = CudaOptions
    opts: CudaOptions
    language = "CUDA C++"
    device_type = "cuda"
    times_on_cpu_shape = False
    overlap_compile_with_timing = (os.cpu_count() or 1) >= 8  # builds use CPU cores, timing the GPU
    # Automatic lanes: the shipped CUDA set with 4 lanes kept every status and its speedups within the spread of
    # two 1-lane runs (H100, benchmarks/throughput/README.md, 2026-12-06 sixth session).
    default_lanes_per_gpu = 0
    timing_available = True

    def availability(self) -> Availability:
        reason = cuda_device_reason()
        if reason:
            return Availability(False, reason)
        if not nvcc_path():
            return Availability(False, "nvcc not found (set CUDA_HOME or put nvcc on PATH)")
        if not shutil.which("ninja"):
            try:
                import ninja  # noqa: F401
            except ImportError:
                return Availability(False, "ninja not found (torch's extension loader needs it)")
        return Availability(True)

    #: Cores one build is taken to keep busy before any is measured; the engine's build gate
    #: (engine/build_gate.py) replaces it with measured CPU use, crowding taken out. A build alone keeps ~2 busy
    #: (nvcc's host and device halves side by side; 2.04 measured five at a time on the H200, 2026-12-02). 1.0
    #: (2026-12-03) made the first wave one build per core: 16 builds each at half speed, the first result at
    #: 51-77 s and the lane idle while the second wave built.
    build_cores_estimate = 2.0

    def default_compile_workers(self) -> int:
        """The build pool's size: one thread per core; how many of them build at once is the build gate's
        choice, from measured CPU use per build (engine/build_gate.py)."""
        return super().default_compile_workers()

    def prepare_builds(self, build_root: Path, sources: list[str] | None = None):
        """Start the trusted warmer of the shared extension cache (light-header analyses, then the PCH) in the
        background; builds that start while it is making what they need wait for it, bounded (backends/
        warm_wait.py). Not niced on a host of 8+ cores: one core for what every build reads."""
        if not (self.opts.fast_build and self.opts.pch):
            return None
        from multikernelbench.backends.extbuild.cuda_warm import PchWarmer

        some_build = Path(build_root) / self.name / "_"
        if self.opts.light_headers:
            from multikernelbench.backends.extbuild.cuda_warm import light_root_of
            from multikernelbench.backends.extbuild.nvcc_light import write_shim

            # Made now, before any worker starts: a sandbox rule needs the folder to exist, and the analyses
            # (and host prefixes) the warmer writes into it later must be readable by builds already running;
            # the shared shim header too, which builds only read (their flags name it: see host_pch).
            light = light_root_of(self._pch_root(some_build))
            for sub in ("analysis", "host"):
                (light / sub).mkdir(parents=True, exist_ok=True)
            write_shim(light / "include")
        env = {k: v for k, v in self.worker_env(some_build).items() if k != "TORCH_EXTENSIONS_DIR"}
        from multikernelbench.backends.extbuild.flag_variants import scan

        used = scan(sources or [])  # the flag sets this run's candidates build with, most used first
        kw: dict[str, Any] = {"variants": used.cflags, "cuda_variants": used.cuda_cflags} if used else {}
        return PchWarmer(self._pch_root(some_build), env, with_cuda=True,
                         light=self.opts.light_headers, niced=usable_cores() < 8, **kw)

    def _pch_root(self, build_dir: Path) -> Path:
        """Shared by every candidate of the build root; written only by the trusted warmer."""
        if self.opts.pch_root:
            return Path(self.opts.pch_root)
        return Path(build_dir).parent / "_ext_cache" / "pch"

    def _cache_dir(self, build_dir: Path) -> Path:
        """The content-keyed extension cache: the candidate's own (its compile and device workers share it).
        A ``cache_dir`` option shares one folder between candidates, and so lets each write into the others'."""
        if self.opts.cache_dir:
            return Path(self.opts.cache_dir)
        return Path(build_dir) / "ext"

    def sandbox_read_dirs(self, build_dir: Path) -> list[str]:
        from multikernelbench.backends.extbuild.cuda_warm import light_root_of

        return [str(self._pch_root(build_dir)), str(light_root_of(self._pch_root(build_dir)))]

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        env = super().worker_env(build_dir)
        arch = self.opts.arch or device_arch()
        if arch:
            env["TORCH_CUDA_ARCH_LIST"] = arch
        env["MAX_JOBS"] = str(self.opts.max_jobs)
        if self.opts.fast_build:
            env["TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES"] = "1"
            env["MKB_EXT_CACHE"] = str(self._cache_dir(build_dir))
            env["MKB_PCH_ROOT"] = str(self._pch_root(build_dir))
        return env

    def _install_builder(self, build_dir: Path) -> None:
        if not self.opts.fast_build:
            return
        from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder

        root = os.environ.get("MKB_EXT_CACHE") or str(self._cache_dir(build_dir))
        pch_root = os.environ.get("MKB_PCH_ROOT") or str(self._pch_root(build_dir))
        builder = getattr(self, "_builder", None)
        if builder is None:
            from multikernelbench.backends.extbuild.cuda_warm import light_root_of

            builder = FastExtensionBuilder(root, pch=self.opts.pch,
                                           split_nvcc=self.opts.split_nvcc,
                                           pch_root=pch_root, light_headers=self.opts.light_headers,
                                           light_shared=light_root_of(pch_root) / "analysis",
                                           light_ahead=self.opts.light_ahead, light_ops=self.opts.light_ops,
                                           light_main=self.opts.light_main)
            builder.install()
            self._builder = builder

    def load(self, source: str, build_dir: Path):
        self._install_builder(Path(build_dir))
        return super().load(source, Path(build_dir))

    def device(self) -> torch.device:
        return torch.device("cuda", torch.cuda.current_device())

    def synchronize(self) -> None:
        torch.cuda.synchronize()  # cudaDeviceSynchronize: every stream of the device

    def kernel_probe(self, build_dir: Path) -> Any:
        """Own-kernel evidence from the profiler (anti-cheat: vendor-library kernels must not do the work)."""
        from multikernelbench.anticheat.gpu_probe import ProfilerKernelProbe

        return ProfilerKernelProbe()

    def make_timer(self, config: Any):
        from multikernelbench.timing.cuda_events import cuda_event_timer

        return cuda_event_timer(config, **self.opts.timer_kwargs())

    def hardware(self) -> str:
        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
        return "no-cuda-device"

    def versions(self) -> dict[str, str]:
        v = super().versions()
        v.update(cuda=str(torch.version.cuda), nvcc=nvcc_version(), arch=device_arch())
        return v
