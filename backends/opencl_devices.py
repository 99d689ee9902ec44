"""Which OpenCL devices this machine has, found in a throwaway subprocess.

Loading the OpenCL ICD loader runs every installed vendor driver's initialisation (NVIDIA's brings up the CUDA
driver; PoCL starts its thread pool), which must not happen in the trusted parent that also holds CUDA contexts
and forks workers. So the parent runs this file in a short-lived ``python opencl_devices.py``,
which prints one JSON line per device, and parses that into :class:`OpenCLDevice` records. What the probe
found (or why nothing) is what ``mkb backends`` prints: a GPU driver that is absent is reported, never faked.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from functools import lru_cache


@dataclass(frozen=True)
class OpenCLDevice:
    platform_index: int
    device_index: int
    platform: str  # e.g. "Portable Computing Language", "NVIDIA CUDA"
    platform_version: str
    name: str  # e.g. "pthread-skylake-avx512-AMD EPYC ...", "NVIDIA H200"
    kind: str  # "cpu", "gpu" or "other"
    compute_units: int
    global_mem_bytes: int

    @property
    def ctx_spec(self) -> str:
        """The ``PYOPENCL_CTX`` value that makes ``cl.create_some_context(interactive=False)`` pick this device."""
        return f"{self.platform_index}:{self.device_index}"

    def label(self) -> str:
        return f"{self.name} ({self.platform}, {self.kind})"


@dataclass(frozen=True)
class ProbeResult:
    devices: tuple[OpenCLDevice, ...]
    error: str = ""  # why no device could be listed (pyopencl missing, no ICD, probe crashed)
    icd_files: tuple[str, ...] = ()  # /etc/OpenCL/vendors/*.icd: which vendor drivers are installed

    def pick(self, selector: str) -> OpenCLDevice | None:
        """``"auto"``: the first GPU, else the first CPU device; ``"cpu"``/``"gpu"``: the first of that kind;
        anything else: the first device whose platform or device name contains it (case-insensitive)."""
        devs = list(self.devices)
        if selector in ("auto", ""):
            return next((d for d in devs if d.kind == "gpu"), None) or next((d for d in devs if d.kind == "cpu"),
                                                                             devs[0] if devs else None)
        if selector in ("cpu", "gpu"):
            return next((d for d in devs if d.kind == selector), None)
        s = selector.lower()
        return next((d for d in devs if s in d.name.lower() or s in d.platform.lower()), None)

    def summary(self, chosen: OpenCLDevice | None = None) -> str:
        """What was found, in words; ``chosen`` (listed first) is the device a run would use."""
        if not self.devices:
            return self.error or "no OpenCL platform"
        others = [d.label() for d in self.devices if d != chosen]
        found = "; ".join(([f"runs on {chosen.label()}"] if chosen else []) + (["also found: " + ", ".join(others)]
                                                                                if chosen and others else others))
        if not any(d.kind == "gpu" for d in self.devices):
            nv = [f for f in self.icd_files if "nvidia" in f.lower()]
            found += ("; no GPU device (NVIDIA ICD " + (f"{nv[0]} present but lists no device" if nv else
                                                         "absent from /etc/OpenCL/vendors") + ")")
        return found


def list_devices() -> list[OpenCLDevice]:
    """In this process (the probe subprocess, or a worker): every device of every platform."""
    import pyopencl as cl

    out = []
    for pi, plat in enumerate(cl.get_platforms()):
        try:
            devices = plat.get_devices()
        except cl.Error:  # a platform with no devices raises DEVICE_NOT_FOUND
            continue
        for di, dev in enumerate(devices):
            kind = "gpu" if dev.type & cl.device_type.GPU else "cpu" if dev.type & cl.device_type.CPU else "other"
            out.append(OpenCLDevice(pi, di, plat.name.strip(), plat.version.strip(), dev.name.strip(), kind,
                                    int(dev.max_compute_units), int(dev.global_mem_size)))
    return out


@lru_cache(maxsize=4)
def probe(python: str = sys.executable, timeout_s: float = 120.0) -> ProbeResult:
    """The devices as a fresh subprocess sees them (cached for this process's lifetime)."""
    icds = tuple(sorted(glob.glob("/etc/OpenCL/vendors/*.icd")))
    try:
        # The file itself, not ``-m``: importing the package would import torch (seconds) for nothing.
        proc = subprocess.run([python, os.path.abspath(__file__)], capture_output=True,
                              text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ProbeResult((), f"OpenCL probe failed: {exc!r}", icds)
    devices, errors = [], []
    for line in proc.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if "error" in row:
            errors.append(row["error"])
        else:
            devices.append(OpenCLDevice(**row))
    if proc.returncode != 0 and not devices:
        errors.append(f"OpenCL probe exited with {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return ProbeResult(tuple(devices), "; ".join(errors), icds)


def _main() -> int:
    try:
        import pyopencl  # noqa: F401
    except ImportError as exc:
        print(json.dumps({"error": f"pyopencl is not installed (pip install pyopencl): {exc}"}))
        return 0
    try:
        devices = list_devices()
    except Exception as exc:  # noqa: BLE001 - the ICD loader's "no platforms" is a pyopencl.LogicError
        print(json.dumps({"error": f"no OpenCL platform: {exc}"}))
        return 0
    if not devices:
        print(json.dumps({"error": "OpenCL platforms found but no device (install pocl-opencl-icd)"}))
    for d in devices:
        print(json.dumps(asdict(d)))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
