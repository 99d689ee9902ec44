"""The backend interface: how a candidate's source becomes something callable on a device, and timed.

The split matters for throughput and safety: ``compile`` runs in a CPU-only subprocess (many at once, away
from the device), ``load``/``time`` run in the single device worker that owns the accelerator. Every method
that touches candidate code is called only inside a spawned worker, never in the trusted parent.
"""

from __future__ import annotations

import abc
import platform
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch


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
    #: Time on the task's small cpu_bench_shape instead of its GPU-sized bench_shape.
    times_on_cpu_shape: bool = True
    #: Whether compiling other candidates may overlap timing (False where both share the CPU cores).
    overlap_compile_with_timing: bool = False
    #: Whether the timer gives trustworthy numbers here (False e.g. for an interpreter mode).
    timing_available: bool = True
    #: Workers may be forked from a zygote that imported torch (see engine/zygote_main.py); a backend whose
    #: toolchain must be imported fresh in each worker sets this False.
    zygote_ok: bool = True
    #: Extra modules the zygote imports before forking (slow, safe to share: no device initialisation).
    zygote_preload: tuple[str, ...] = ()

    def __init__(self, **options: Any) -> None:
        self.options = options

    # ---- in the parent (trusted): cheap checks, no candidate code -------------------------------------
    @abc.abstractmethod
    def availability(self) -> Availability:
        """Whether this machine has the toolchain and device; the reason when not."""

    def worker_env(self, build_dir: Path) -> dict[str, str]:
        """Environment variables for compile and device workers (set before the child starts)."""
        return {"TORCH_EXTENSIONS_DIR": str(build_dir)}

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

    def synchronize(self) -> None:
        """Wait for all queued device work (all streams) to finish."""

    def kernel_probe(self, build_dir: Path) -> Any:
        """Anti-cheat hook (device worker): a context manager wrapped around one candidate forward whose
        ``evidence()`` returns ``{"own_kernels": [...], "library_kernels": [...], "method": str}`` -- the
        candidate's own kernels that ran, and library compute kernels (cuBLAS/cuDNN/aten) that did work.
        ``None`` (the default) means this backend offers no such evidence and the check is skipped; see
        multikernelbench/anticheat/README.md for the CPU and GPU probes to return here."""
        return None

    def sandbox_writable_dirs(self, build_dir: Path) -> list[str]:
        """Folders besides the worker's cwd, build dir and TMPDIR that workers may write: toolchain caches,
        and this backend's build root (shared extension caches live next to the per-candidate dirs)."""
        home = Path.home()
        return [str(home / ".triton"), str(home / ".cache"), str(Path(build_dir).parent)]

    @abc.abstractmethod
    def make_timer(self, config: Any) -> "Timer":
        """A timer appropriate for this device (see multikernelbench.engine.timing)."""

    def hardware(self) -> str:
        return platform.processor() or platform.machine()

    def versions(self) -> dict[str, str]:
        return {"python": platform.python_version(), "torch": torch.__version__}


class Timer(abc.ABC):
    """Times several callables alternately (A/B/A/B...) so slow drift of clocks or load cancels out."""

    method: str = ""

    @abc.abstractmethod
    def measure(self, fns: dict[str, Callable[[int], Any]]) -> dict[str, Any]:
        """Call each ``fns[name](i)`` repeatedly; return name -> TimingStats. ``i`` selects an input set."""
