"""What the benchmark records about the host it ran on."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from .common import REPO


def _cmd_out(cmd: list[str], timeout: float = 30) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout.strip()
    except Exception:
        return ""


def cuda_arch() -> str:
    out = _cmd_out(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]).split()
    if out and out[0].replace(".", "").isdigit():
        return out[0]
    out = _cmd_out([sys.executable, "-c",
                    "import torch; m, n = torch.cuda.get_device_capability(0); print(f'{m}.{n}')"], 120).split()
    return out[-1] if out else ""


def host_info(backend: str, arch: str) -> dict:
    info = {"hostname": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
            "cpu_count": os.cpu_count(), "backend": backend}
    try:
        info["usable_cores"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    # Whether the cores are hyperthreads (a saturated host's CPU seconds per build then inflate ~1.5x).
    for line in _cmd_out(["lscpu"]).splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("Thread(s) per core", "Core(s) per socket", "Socket(s)", "NUMA node(s)", "L3 cache"):
            info["lscpu_" + key.strip().lower().replace("(s)", "s").replace(" ", "_")] = value.strip()
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
    except Exception as exc:
        info["torch"] = f"unavailable: {exc!r}"
    if backend == "cuda":
        info["gpu"] = _cmd_out(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                "--format=csv,noheader"])
        info["arch"] = arch
        nvcc = shutil.which("nvcc") or (os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc")
                                        if os.environ.get("CUDA_HOME") else None)
        if nvcc:
            lines = _cmd_out([nvcc, "--version"]).splitlines()
            info["nvcc"] = lines[-1] if lines else ""
    info["gxx"] = (_cmd_out(["g++", "--version"]).splitlines() or [""])[0]
    try:
        info["git_commit"] = _cmd_out(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    except Exception:
        pass
    return info
