"""The ``cpu`` backend: C++ (OpenMP allowed) kernels built with torch's extension loader.

Runs everywhere torch and a C++ compiler exist, which is why CI uses it to exercise the whole engine with
real compiled kernels.

Builds are torch's own ``load_inline``, unchanged, except that ``main.cpp`` force-includes a precompiled
``torch/extension.h`` when one exists for exactly its compiler flags (see backends/extbuild/cuda_build.py: made by a
trusted background warmer, shared by every run under ``~/.cache/multikernelbench/pch``; a build never makes
or waits for it), the light one where it keeps main.cpp's meaning (backends/extbuild/light_main.py). Options:
``pch`` (default True), ``pch_root``, ``pch_cache_gb``, ``light_main`` (default True).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.backends.options import BackendOptions
from multikernelbench.backends.registry import register_backend
from multikernelbench.util.procs import usable_cores

#: How a worker learns the parent's precompiled-header folder (the CUDA backend's variable of the same role).
PCH_ROOT_ENV = "MKB_PCH_ROOT"


def cpu_model_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@dataclass(frozen=True)
class CpuOptions(BackendOptions):
    #: Force-include the warmer's precompiled torch/extension.h when one exists for the build's flags.
    pch: bool = True
    #: Where the precompiled headers live (default ~/.cache/multikernelbench/pch).
    pch_root: str | None = None
    #: The precompiled headers' cap (GB; 0: never prune): a run removes the least recently used flag sets beyond
    #: it, never its own (backends/extbuild/pch_cache.py; each new venv warms a ~0.75 GB set).
    pch_cache_gb: float = 4.0
    #: main.cpp against the light torch/extension.h (ATen and the bindings) where its meaning is the same:
    #: backends/extbuild/light_main.py.
    light_main: bool = True


@register_backend("cpu")
class CpuBackend(Backend):
    language = "C++ with OpenMP (torch.utils.cpp_extension.load_inline)"
    device_type = "cpu"
    times_on_cpu_shape = True
    overlap_compile_with_timing = False  # compiles would steal the cores being timed
    timing_available = True
    zygote_preload = ("multikernelbench.backends.cpu", "torch.utils.cpp_extension")
    Options = CpuOptions
    opts: CpuOptions

    def availability(self) -> Availability:
        cxx = os.environ.get("CXX", "c++")
        if shutil.which(cxx) is None and shutil.which("g++") is None:
            return Availability(False, "no C++ compiler on PATH (install g++)")
        if shutil.which("ninja") is None:
            try:
                import ninja  # noqa: F401  (the pip package puts a binary next to python)
            except ImportError:
                return Availability(False, "ninja is not on PATH (torch's extension loader needs it)")
        return Availability(True)

    #: extra_cflags variants whose PCH the warmer makes: none, and the flag set of the shipped solutions.
    WARM_VARIANTS = ((), ("-O3", "-march=native", "-fopenmp", "-fno-trapping-math"))

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        env = super().worker_env(build_dir)
        threads = str(self.opts.threads or usable_cores())
        env["OMP_NUM_THREADS"] = threads
        env.setdefault("MAX_JOBS", "1")
        env[PCH_ROOT_ENV] = str(self.pch_root())
        return env

    def pch_root(self) -> Path:
        """Resolved in the parent and handed to the workers in :meth:`worker_env`: a worker's ``HOME`` is its own
        folder (util/worker_env.py), so a worker that resolved ``~`` itself looked for the warmer's headers
        where none are and built every ``main.cpp`` from the text headers, twice the CPU (unnoticed from the
        scrubbed environment's landing until the suite's exemplar builds were timed)."""
        explicit = self.opts.pch_root or os.environ.get(PCH_ROOT_ENV)
        return Path(explicit or Path.home() / ".cache" / "multikernelbench" / "pch")

    def toolchain(self) -> dict[str, str]:
        """Also where the force-included precompiled headers are: their path is in every build's command line."""
        return {**super().toolchain(), "pch_root": str(self.pch_root())}

    def prepare_builds(self, build_root: Path, sources: list[str] | None = None) -> Any:
        """A background warmer for the flag sets whose PCH is missing; none when all are there (the usual
        case after a machine's first run: a warmer process would spend seconds of CPU importing torch only to
        find them, on every run). A probe that cannot tell starts the warmer, as before the probe."""
        if not self.opts.pch:
            return None
        from multikernelbench.backends.extbuild.cuda_warm import PchWarmer, missing_in, pch_dirs
        from multikernelbench.backends.extbuild.pch_cache import prune, touch

        missing: tuple[tuple[str, ...], ...]
        try:
            dirs = pch_dirs(self.pch_root(), self.WARM_VARIANTS)
        except Exception:  # noqa: BLE001
            missing = self.WARM_VARIANTS
        else:
            touch(d for d in dirs.values() if d.is_dir())
            if self.opts.pch_cache_gb > 0:
                prune(self.pch_root(), int(self.opts.pch_cache_gb * 1e9), keep=dirs.values())
            missing = tuple(missing_in(dirs))
        if not missing:
            return None
        return PchWarmer(self.pch_root(), {}, with_cuda=False, variants=missing)

    def load(self, source: str, build_dir: Path):
        if self.opts.pch and not getattr(self, "_builder", None):
            from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder

            # No relocation to a shared cache (cache=False): the own-extension probe recognises the
            # candidate's kernels by their path under its build folder.
            self._builder = FastExtensionBuilder(self.pch_root(), pch=True, cache=False, split_nvcc=False,
                                                 light_headers=False, pch_root=self.pch_root(),
                                                 light_main=self.opts.light_main)
            self._builder.install()
        return super().load(source, Path(build_dir))

    def sandbox_read_dirs(self, build_dir: Path) -> list[str]:
        return [str(self.pch_root())]  # the trusted warmer's precompiled headers: read, never written

    def kernel_probe(self, build_dir: Path):
        from multikernelbench.anticheat.runtime import ExtensionCallProbe

        return ExtensionCallProbe(build_dir)

    def make_timer(self, config):
        from multikernelbench.timing.host import host_timer

        return host_timer(config)

    def hardware(self) -> str:
        return f"{cpu_model_name()} x{usable_cores()}"

    def versions(self) -> dict[str, str]:
        v = super().versions()
        try:
            out = subprocess.run(["c++", "--version"], capture_output=True, text=True, timeout=10).stdout
            v["cxx"] = out.splitlines()[0] if out else ""
        except (OSError, subprocess.TimeoutExpired):
            v["cxx"] = "unknown"
        return v
