"""The backend interface: how a candidate's source becomes something callable on a device, and timed.

The split matters for throughput and safety: ``compile`` runs in a CPU-only subprocess (many at once, away
from the device), ``load``/``time`` run in a fresh device worker spawned for each candidate, which holds the
accelerator only during its device turn. Every method that touches candidate code is called only inside a
spawned worker, never in the trusted parent.
"""

from __future__ import annotations

import abc
import platform
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch

from multikernelbench.backends.options import BackendOptions, parse_options
from multikernelbench.timing.loop import Timer


@dataclass
class Availability:
    ok: bool
    reason: str = ""


@dataclass
class CompileOutcome:
    ok: bool
    message: str = ""
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


class Backend(abc.ABC):
    """One platform. Subclasses set the class attributes and implement the abstract methods."""

    name: str = ""
    #: Human name of the kernel language, used in prompts and reports.
    language: str = ""
    #: torch device type the candidate's tensors live on.
    device_type: str = "cpu"

    def limits_address_space(self) -> bool:
        """Whether workers get RLIMIT_AS (``EngineConfig.memory_limit_gb``). Not where a GPU driver runs in the
        worker: CUDA and NVIDIA's OpenCL reserve far more virtual address space than they use."""
        return self.device_type == "cpu"
    #: Time on the task's small cpu_bench_shape instead of its GPU-sized bench_shape.
    times_on_cpu_shape: bool = True
    #: Whether compiling other candidates may overlap timing (False where both share the CPU cores).
    overlap_compile_with_timing: bool = False
    #: Device lanes per GPU when the run does not say (``EngineConfig.lanes_per_gpu`` None): 0 = as many as the
    #: GPU's free memory and the cores allow (engine/lane_count.py). 1 (one candidate per GPU at a time) until
    #: the backend's shipped set has been timed with several lanes against one on a GPU (docs/lanes.md).
    default_lanes_per_gpu: int = 1
    #: Whether the timer gives trustworthy numbers here (False e.g. for an interpreter mode).
    timing_available: bool = True
    #: Large GPU outputs reach the parent by CUDA IPC handle (engine/cuda_ipc.py); memory the driver cannot
    #: export (JAX's allocator) is first copied into an exportable buffer, ~2.5 ms for a 4 GiB output on an H100.
    #: A backend whose candidates' outputs may live there copies *every* large output, the reference's and the
    #: clean worker's too, so no renewal pays a copy the other side of a comparison does not.
    stages_outputs: bool = False
    #: Workers may be forked from a zygote that imported torch (see engine/zygote_main.py); a backend whose
    #: toolchain must be imported fresh in each worker sets this False.
    zygote_ok: bool = True
    #: Extra modules the zygote imports before forking (slow, safe to share: no device initialisation).
    zygote_preload: tuple[str, ...] = ()
    #: The harness's environment variables a worker inherits besides PATH and the locale (names or fnmatch
    #: patterns; multikernelbench/util/worker_env.py): only what the toolchain and device need. A name that
    #: looks like a secret (``*TOKEN*``, ``*_KEY``, ...) is never passed, whatever a pattern says.
    worker_env_allow: tuple[str, ...] = ("CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "NVIDIA_*",
                                         "TORCH_CUDA_ARCH_LIST", "CC", "CXX", "MAX_JOBS", "OMP_NUM_THREADS",
                                         "MKL_NUM_THREADS", "MKB_NVCC_SPLIT", "MKB_PCH_ROOT")

    #: The options this backend reads (backends/options.py); an unknown key or a wrong type is an error.
    Options: ClassVar[type[BackendOptions]] = BackendOptions

    def __init__(self, **options: Any) -> None:
        #: What was given, as given: sent on to the workers, which parse it again.
        self.options = options
        self.opts = parse_options(self.Options, options, self.name or type(self).__name__)

    # ---- in the parent (trusted): cheap checks, no candidate code -------------------------------------
    @abc.abstractmethod
    def availability(self) -> Availability:
        """Whether this machine has the toolchain and device; the reason when not."""

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        """Environment variables for compile and device workers (set before the child starts). The worker's
        kernel sandbox lets it write every cache folder named here (engine/kernel_sandbox.py, ``CACHE_ENV``),
        so each must be the candidate's own (under ``build_dir``); shared folders it needs to read go in
        :meth:`sandbox_read_dirs`."""
        from multikernelbench.util.sandbox_paths import CACHE_ENV, READ_ENV, WRITE_ENV, paths_env
        from multikernelbench.util.worker_env import inherited, runtime_env

        passed = {k: v for k, v in inherited(self.worker_env_allow).items()
                  if k not in CACHE_ENV + (READ_ENV, WRITE_ENV)}  # writable folders come from the backend only
        return {**runtime_env(), **passed, "TORCH_EXTENSIONS_DIR": str(build_dir),
                **paths_env(read=self.sandbox_read_dirs(build_dir))}

    def sandbox_read_dirs(self, build_dir: Path) -> list[str]:
        """Shared folders a worker reads but never writes (e.g. precompiled headers), besides the system's,
        Python's and the package's own, which every worker may read."""
        return []

    def gpu_indices(self) -> list[int]:
        """The GPUs a run may spread its device stage over (one lane each); [] when this backend runs on the
        CPU (then the engine uses ``device_workers`` CPU lanes)."""
        if self.device_type != "cuda" or not torch.cuda.is_available():
            return []
        return list(range(torch.cuda.device_count()))

    def lane_env(self, gpu: int | None) -> dict[str, str]:
        """Extra environment of a device worker on lane ``gpu``: it sees that GPU alone, as device 0."""
        return {} if gpu is None else {"CUDA_VISIBLE_DEVICES": str(gpu)}

    def reference_device(self, gpu: int | None) -> torch.device:
        """Where the trusted parent computes and compares expected outputs for lane ``gpu``: on that GPU for
        GPU tasks (the parent's own CUDA context), else on the CPU."""
        if gpu is None or self.device_type != "cuda":
            return torch.device("cpu")
        return torch.device("cuda", gpu)

    def ray_resources(self) -> dict[str, float]:
        """Ray resources one device lane of this backend needs on a cluster (``mkb eval --ray``) besides a GPU
        (which ``device_type == "cuda"`` asks for), e.g. ``{"npu": 1}`` for an accelerator Ray does not know:
        lanes then go only to nodes started with that resource (``ray start --resources '{"npu": 8}'``)."""
        return {}

    def default_compile_workers(self) -> int:
        """Concurrent builds when the user does not say: one per usable core (a C++ build is one compiler)."""
        from multikernelbench.util.procs import usable_cores

        return max(1, usable_cores())

    def prepare_builds(self, build_root: Path, sources: list[str] | None = None) -> Any:
        """Trusted, once per run, before the compile pool starts: warm shared build caches (e.g. precompiled
        headers) in the background. Returns a handle with ``wait(timeout)`` and ``stop()``, or None. Builds never
        make what it makes; they may wait for it, bounded, while it marks it as in progress (warm_wait.py).
        ``sources``: the run's candidate sources, to be *read* only (e.g. which flag sets they build with)."""
        return None

    # ---- in a compile worker (untrusted code runs) ----------------------------------------------------
    def compile(self, source: str, build_dir: Path) -> CompileOutcome:
        """Default: executing the candidate module builds its extensions (load_inline at import time)."""
        import time

        t0 = time.perf_counter()
        self.load(source, build_dir)
        return CompileOutcome(ok=True, seconds=time.perf_counter() - t0)

    # ---- in the device worker (untrusted code runs) ---------------------------------------------------
    def load(self, source: str, build_dir: Path) -> types.ModuleType:
        """Execute the candidate source as a fresh module named ``candidate``."""
        mod = types.ModuleType("candidate")
        mod.__file__ = str(build_dir / "candidate.py")
        (build_dir / "candidate.py").write_text(source)
        sys.modules["candidate"] = mod
        exec(compile(source, mod.__file__, "exec"), mod.__dict__)  # noqa: S102 - inside the sandboxed worker
        return mod

    def device(self) -> torch.device:
        return torch.device(self.device_type)

    def synchronize(self) -> None:  # noqa: B027 - a hook: nothing to do unless a subclass has
        """Wait for all queued device work (all streams) to finish."""

    def warm_device(self) -> None:
        """(In a device worker, trusted, before candidate code) Create the device context now rather than in
        the first correctness check: ~0.3 s on an H200 (context and first allocation, 2026-12-03 probe), paid
        while the worker waits for its turn when it is started ahead (engine/prefetch.py). No-op off a GPU."""
        dev = self.device()
        if dev.type == "cuda":
            torch.empty(1, device=dev)
            self.synchronize()

    def kernel_probe(self, build_dir: Path) -> Any:
        """Anti-cheat hook (device worker): a context manager wrapped around one candidate forward whose
        ``evidence()`` returns ``{"own_kernels": [...], "library_kernels": [...], "method": str}`` -- the
        candidate's own kernels that ran, and library compute kernels (cuBLAS/cuDNN/aten) that did work.
        ``None`` (the default) means this backend offers no such evidence and the check is skipped; see
        multikernelbench/anticheat/README.md for the CPU and GPU probes to return here."""
        return None

    def sandbox_writable_dirs(self, build_dir: Path) -> list[str]:
        """(In the worker) folders besides its cwd and TMPDIR that the audit hook lets Python write: the
        candidate's build folder and the caches its environment names: the same list Landlock enforces."""
        import os

        from multikernelbench.util.sandbox_paths import writable_from_env

        return [str(build_dir)] + writable_from_env(dict(os.environ))

    @abc.abstractmethod
    def make_timer(self, config: Any) -> Timer:
        """The A/B timer with this device's sampler (see multikernelbench.timing)."""

    def hardware(self) -> str:
        return platform.processor() or platform.machine()

    def versions(self) -> dict[str, str]:
        return {"python": platform.python_version(), "torch": torch.__version__}

    #: Variables a worker inherits (``worker_env_allow``) that pick a compiler, toolkit or target, and so what a
    #: build folder holds.
    TOOLCHAIN_ENV: ClassVar[tuple[str, ...]] = ("CXX", "CC", "CUDA_HOME", "CUDA_PATH", "TORCH_CUDA_ARCH_LIST",
                                                "MKB_NVCC_SPLIT", "MKB_PCH_ROOT")

    def toolchain(self) -> dict[str, str]:
        """(Trusted parent) What a build depends on besides the candidate's code: the interpreter and the
        torch install whose headers and libraries it compiles and links against, the compilers chosen, and
        the backend's options (whether precompiled headers are force-included, ...). A build folder
        is keyed by code hash alone (serve, the cluster and the cache's pruning find it by that name), so its
        marker records this and a build left by another environment is built again in the build stage.
        Without it, a second venv on one machine (CI's fresh venv beside an old ``~/.cache``) took such a
        folder as built, and the device worker's load rebuilt it under the run's per-request timeout: the
        quick demo's 3 s, every correct kernel a timeout."""
        import json
        import os
        import sysconfig

        out = {"python": sys.executable, "python_include": sysconfig.get_paths()["include"],
               "torch": f"{torch.__version__} {Path(torch.__file__).parent}",
               "options": json.dumps(self.options, sort_keys=True, default=str)}
        out.update({k: os.environ[k] for k in self.TOOLCHAIN_ENV if k in os.environ})
        return out
