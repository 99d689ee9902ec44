"""In-worker audit hook: blocks and records writes outside the allowed folders, network use, and process
creation or signalling while the candidate's forward runs.

``sys.addaudithook`` hooks cannot be removed from Python, so candidate code cannot unhook it; they see
only what goes through CPython (``open``, ``os.*``, ``socket``, ``subprocess``) — native code in an
extension calls libc directly and is not seen (the network namespace and the leftover-process and
busy-thread checks cover part of that). Every violation is recorded even when the candidate catches the
PermissionError, and the parent turns any record into ``cheat_detected``.
"""

from __future__ import annotations

import os
import sys
import types
from dataclasses import dataclass, field

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.truncate",
                "os.chmod", "os.chown", "shutil.rmtree", "shutil.copyfile", "shutil.move"}
_PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "subprocess.Popen", "pty.spawn", "os.startfile"}
_NET_EVENTS = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
               "socket.gethostbyname", "urllib.Request"}
_realpath, _fspath, _getpid = os.path.realpath, os.fspath, os.getpid


@dataclass
class Guard:
    allowed_dirs: list[str]
    violations: list[str] = field(default_factory=list)
    #: Single files outside those folders that the toolchain itself rewrites (torch's precompiled-header
    #: cache next to its headers: ``load_inline`` removes it whenever a build does not use PCH).
    allowed_files: set[str] = field(default_factory=set)
    #: True while candidate forward code runs: process creation is only needed by the harness's own
    #: build step (ninja/c++ at load), never by a forward call.
    in_forward: bool = False
    jit_dirs: tuple[str, ...] = ()  # installed JIT runtimes (Triton) that may run their toolchain in a forward

    def _allowed(self, path) -> bool:
        try:
            p = _realpath(_fspath(path))
        except (TypeError, ValueError):
            return True  # fds and odd objects: nothing to resolve
        return p.startswith("/dev/") or p in self.allowed_files or any(p == d or p.startswith(d + os.sep) for d in self.allowed_dirs)

    def _deny(self, what: str) -> None:
        if len(self.violations) < 20:
            self.violations.append(what)
        raise PermissionError(f"blocked by the mkb sandbox: {what}")

    def __call__(self, event: str, args: tuple) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing and isinstance(path, (str, bytes, os.PathLike)) and not self._allowed(path):
                self._deny(f"write to {path!s} (outside the working directory)")
        elif event in _PATH_EVENTS:
            for p in args[:2]:
                if isinstance(p, (str, bytes, os.PathLike)) and not self._allowed(p):
                    self._deny(f"{event} on {p!s} (outside the working directory)")
        elif event in _NET_EVENTS:
            if event == "socket.bind" or event.startswith("socket.") and event not in ("socket.getaddrinfo",
                                                                                       "socket.gethostbyname"):
                sock = args[0] if args else None
                if getattr(sock, "family", None) == getattr(__import__("socket"), "AF_UNIX", -1):
                    return
            self._deny(f"network access ({event} {args[1:2]!r})")
        elif event in _PROCESS_EVENTS and self.in_forward:
            if event in ("subprocess.Popen", "os.posix_spawn") and (_is_toolchain_call(args)
                                                                     or _from_jit_runtime(args, self.jit_dirs)):
                return  # Triton (and XLA) JIT-compile at the first launch and run ptxas / cc then
            self._deny(f"process creation ({event}{_describe_exe(args)}) during forward")
        elif event in ("os.kill", "os.killpg", "signal.pthread_kill") and args and args[0] not in (0, _getpid()):
            self._deny(f"{event}{args!r} (signalling another process)")


# GPU JIT compilers run these at a kernel's first launch (Triton calls ptxas from inside the forward).
_TOOLCHAIN_EXECUTABLES = {"ptxas", "ptxas-blackwell", "nvlink", "fatbinary", "nvdisasm", "cuobjdump"}


def _exe_name(args: tuple) -> str:
    """Basename of the program in subprocess.Popen (executable, args, cwd, env) or os.posix_spawn
    (path, argv, env) audit arguments; "" when there is none."""
    exe = args[0] if args else None
    argv = args[1] if len(args) > 1 else None
    if exe is None and isinstance(argv, (list, tuple)) and argv:
        exe = argv[0]
    try:
        return os.path.basename(os.fsdecode(exe)) if exe is not None else ""
    except TypeError:
        return ""


def _is_toolchain_call(args: tuple) -> bool:
    """The CUDA assembler family, allowed from anywhere during a forward."""
    return _exe_name(args) in _TOOLCHAIN_EXECUTABLES


def _describe_exe(args: tuple) -> str:
    name = _exe_name(args)
    return f" of {name}" if name else ""


# Triton builds a small C launcher per kernel signature with the host C compiler at the first launch, finds
# libcuda with ``ldconfig -p`` and asks ``platform.architecture()`` (which runs ``file``). These executables
# are allowed only while a frame of the installed Triton package is on the stack (seen on the H200 with
# Triton 3.6: Popen of ``file`` and ``posix_spawn`` of ptxas inside the first forward).
_JIT_EXECUTABLES = {"cc", "gcc", "clang", "ldconfig", "ldconfig.real", "file"}
_JIT_PACKAGES = ("triton",)


def _package_dirs() -> tuple[str, ...]:
    import importlib.util

    dirs = []
    for name in _JIT_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for d in (spec.submodule_search_locations or []) if spec else []:
            dirs += [os.path.abspath(d) + os.sep, _realpath(d) + os.sep]  # co_filename may keep symlinks
    return tuple(dirs)


def _from_jit_runtime(args: tuple, dirs: tuple[str, ...]) -> bool:
    name = _exe_name(args)
    if not dirs or (name not in _JIT_EXECUTABLES and "gcc" not in name and "clang" not in name):
        return False
    frame: types.FrameType | None = sys._getframe(2)
    for _ in range(60):
        if frame is None:
            return False
        if frame.f_code.co_filename.startswith(dirs):
            return True
        frame = frame.f_back
    return False


_GUARD: Guard | None = None


def install(allowed_dirs: list[str]) -> Guard:
    """Install the (permanent) hook once per worker; later calls return the same guard."""
    global _GUARD
    if _GUARD is None:
        _GUARD = Guard([_realpath(d) for d in allowed_dirs if d], allowed_files=_toolchain_files(),
                       jit_dirs=_package_dirs())
        sys.addaudithook(_GUARD)
    return _GUARD


def _toolchain_files() -> set[str]:
    try:
        import torch
    except ImportError:
        return set()
    inc = os.path.join(os.path.dirname(torch.__file__), "include", "torch")
    return {_realpath(os.path.join(inc, f"extension.h.{ext}")) for ext in ("gch", "sign")}


def current() -> Guard | None:
    return _GUARD
