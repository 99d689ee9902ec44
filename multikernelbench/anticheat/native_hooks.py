"""Native hooks a candidate's extension can install where no Python snapshot looks (issue #40, defence in depth).

* **RecordFunction callbacks.** ``at::addGlobalCallback`` (or a thread-local one) lets native code see every aten
  op of the worker, the harness's own included, with its inputs, before and after it runs: the lever of the
  "lazy output", "balanced renewal" and "slowed reference" attacks. libtorch answers whether any are installed
  (``at::hasGlobalCallbacks``/``at::hasThreadLocalCallbacks``, called here through ctypes on their mangled names);
  the harness installs none outside its own profiling windows, so one present at a check that was absent before
  candidate code loaded is the candidate's.
* **GOT redirection.** The slots through which libpython, libtorch and the CUDA runtime's callers reach
  ``clock_gettime``, ``memcpy``, ``cudaEventElapsedTime``... are located from each library's own ELF relocations
  (util/elf_got.py) and their values recorded before candidate code loads; later a slot may hold only that value
  or, for a lazily bound slot, the address the dynamic linker resolves the symbol to.

Both are read inside the worker (the parent cannot read a worker's memory: workers are not dumpable), so a
candidate that restores the hooks before each check and installs them again after can pass them: the trust
argument rests on the outputs being read without a tensor op (engine/raw_outputs.py) and on the parent's clock.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from pathlib import Path

from multikernelbench.util.elf_got import Slot, got_slots, load_bases

#: Objects whose GOT slots are watched, by file-name prefix.
LIBRARIES = ("python3", "libpython", "libc.so", "libtorch", "libc10", "libcudart")
#: Symbols the timing and checking paths call through a GOT slot.
SYMBOLS = frozenset({
    "clock_gettime", "gettimeofday", "clock_nanosleep", "nanosleep", "memcpy", "memmove", "write", "sendmsg",
    "cudaEventElapsedTime", "cudaEventRecord", "cudaEventSynchronize", "cudaEventQuery", "cudaMemcpy",
    "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cuEventElapsedTime"})
#: How many bytes of each watched function's entry are compared (a jump to elsewhere needs 5 to 14).
CODE_BYTES = 16
#: Where a lazily bound slot's symbol may be defined (the first one that exports it wins, as for ld.so).
PROVIDERS = ("libc.so", "libcudart", "libcuda.so", "libpthread", "librt")


def _torch_cpu() -> ctypes.CDLL | None:
    import torch

    path = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        return ctypes.CDLL(str(path))  # already loaded by torch: the same object
    except OSError:
        return None


def _flag(lib: ctypes.CDLL | None, mangled: str) -> bool | None:
    fn = getattr(lib, mangled, None) if lib is not None else None
    if fn is None:
        return None
    fn.restype = ctypes.c_bool
    fn.argtypes = []
    return bool(fn())


def _resolve(symbol: str, providers: list[ctypes.CDLL]) -> int | None:
    for lib in providers:
        fn = getattr(lib, symbol, None)
        if fn is not None:
            return ctypes.cast(fn, ctypes.c_void_p).value
    return None


@dataclass
class NativeSnapshot:
    """RecordFunction callbacks and watched GOT slots as they were before candidate code loaded."""

    global_callbacks: bool | None = None
    local_callbacks: bool | None = None
    #: (slot, value before candidate code, address the symbol resolves to) per watched slot.
    slots: list[tuple[Slot, int, int | None]] = field(default_factory=list)
    #: (symbol, address, first bytes) of each watched function's code: a slot left alone while the function's
    #: own entry is overwritten with a jump (an inline hook) redirects every caller just the same.
    code: list[tuple[str, int, bytes]] = field(default_factory=list)

    @classmethod
    def capture(cls) -> NativeSnapshot:
        torch_cpu = _torch_cpu()
        snap = cls(_flag(torch_cpu, "_ZN2at18hasGlobalCallbacksEv"),
                   _flag(torch_cpu, "_ZN2at23hasThreadLocalCallbacksEv"))
        providers = []
        for path in load_bases():
            if Path(path).name.startswith(PROVIDERS):
                try:
                    providers.append(ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY))
                except OSError:
                    continue
        entries: dict[int, str] = {}
        for slot in got_slots(LIBRARIES, set(SYMBOLS)):
            value = ctypes.c_uint64.from_address(slot.address).value
            resolved = _resolve(slot.symbol, providers)
            snap.slots.append((slot, value, resolved))
            if resolved:
                entries.setdefault(resolved, slot.symbol)
        snap.code = [(name, addr, ctypes.string_at(addr, CODE_BYTES)) for addr, name in entries.items()]
        return snap

    def changed(self) -> list[str]:
        """What candidate code installed since the snapshot, each named for the verdict's message."""
        out = []
        torch_cpu = _torch_cpu()
        if self.global_callbacks is False and _flag(torch_cpu, "_ZN2at18hasGlobalCallbacksEv"):
            out.append("a global at::RecordFunction callback (at::addGlobalCallback)")
        if self.local_callbacks is False and _flag(torch_cpu, "_ZN2at23hasThreadLocalCallbacksEv"):
            out.append("a thread-local at::RecordFunction callback (at::addThreadLocalCallback)")
        ranges: list[tuple[int, int, str]] | None = None
        for slot, before, resolved in self.slots:
            now = ctypes.c_uint64.from_address(slot.address).value
            if now == before or now == resolved:
                continue
            ranges = ranges if ranges is not None else _code_ranges()
            if _lazily_bound(before, now, slot.library, ranges):
                continue
            out.append(f"the GOT slot of {slot.symbol} in {Path(slot.library).name} (now {now:#x}, was {before:#x})")
        for name, addr, before_code in self.code:
            if ctypes.string_at(addr, CODE_BYTES) != before_code:
                out.append(f"the code at the entry of {name} (overwritten: an inline hook)")
        return out


def _code_ranges() -> list[tuple[int, int, str]]:
    """(start, end, path) of every executable file mapping of this process, and of the vDSO."""
    out = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and "x" in parts[1] and (parts[5].startswith("/") or parts[5] == "[vdso]"):
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, parts[5]))
    return out


def _lazily_bound(before: int, now: int, library: str, ranges: list[tuple[int, int, str]]) -> bool:
    """A slot that held its own library's PLT stub and now points into the code of a library that provides
    such symbols (libc, the CUDA runtime): the dynamic linker bound it at its first call (torch and libpython
    bind lazily; the version bound may differ from the one ``dlsym`` returns)."""
    def owner(addr: int) -> str | None:
        return next((path for lo, hi, path in ranges if lo <= addr < hi), None)

    target = owner(now)
    # glibc's gettimeofday/time are IFUNCs that bind to the vDSO's own functions.
    return owner(before) == library and target is not None and \
        (target == "[vdso]" or Path(target).name.startswith(PROVIDERS))
