"""Spawn and supervise one worker process.

A worker is a fresh interpreter (``python -m multikernelbench.engine.worker_main``) in its own process
session and temporary working directory, with resource limits applied before exec and its stdout/stderr
going to size-capped files. The parent talks to it over a socketpair passed as an inherited fd, so a
candidate printing to stdout cannot corrupt the protocol. Killing the session's process group also kills
anything the candidate forked (compilers, helpers).

This is damage control, not a security boundary: a determined attacker running as the same user can
escape it (see docs in README, "What is and is not isolated").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from multikernelbench.engine import protocol


@dataclass
class Limits:
    address_space_gb: float = 0.0  # 0 = unlimited (CUDA needs huge virtual reservations)
    file_size_mb: float = 256.0  # stdout flood / runaway writes end in SIGXFSZ
    cpu_seconds: float = 0.0  # 0 = unlimited; wall-clock timeouts are enforced by the parent anyway
    open_files: int = 4096
    #: Own network namespace (only a down loopback): no connection leaves the worker. Needs root or
    #: CAP_SYS_ADMIN; silently skipped where the kernel refuses (then only the audit hook blocks Python).
    isolate_network: bool = True
    #: RLIMIT_NPROC (processes + threads of the user). Linux ignores it for root, so it only applies when
    #: the engine runs unprivileged; 0 = unset. Fork bombs as root are bounded only by the kill of the group.
    max_processes: int = 0


_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True) if os.name == "posix" else None


class WorkerDied(Exception):
    """The worker exited or was killed while the parent waited for a reply."""

    def __init__(self, message: str, signal_name: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.signal_name = signal_name
        self.exit_code = exit_code


class WorkerTimeout(Exception):
    """No reply within the deadline; the worker has been killed."""


def _apply_limits(limits: Limits) -> None:
    # Runs in the child between fork and exec: keep it to async-signal-safe-ish syscalls.
    if limits.address_space_gb > 0:
        cap = int(limits.address_space_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    if limits.file_size_mb > 0:
        cap = int(limits.file_size_mb * (1 << 20))
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
    if limits.cpu_seconds > 0:
        cap = int(limits.cpu_seconds)
        resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 5))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.max_processes > 0 and os.geteuid() != 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the worker dies with the process that started it
    if limits.isolate_network and _LIBC is not None:
        _LIBC.unshare(_CLONE_NEWNET)  # failure (no privilege) leaves the worker in the host namespace


def session_members(sid: int) -> list[int]:
    """Pids whose session id is ``sid`` (Linux /proc; empty elsewhere)."""
    pids = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return pids
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[3]) == sid:  # after "pid (comm)": state ppid pgrp session ...
                pids.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return pids


def kill_session(sid: int, rounds: int = 5) -> None:
    """SIGKILL every process of a worker's session. Killing its process group is not enough: ninja puts
    each compiler command in a process group of its own, so a compile that never ends would outlive it.
    (A candidate that calls setsid() itself leaves the session; the docs list that as a known limit.)"""
    for _ in range(rounds):
        members = [p for p in session_members(sid) if p != os.getpid()]
        if not members:
            return
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)


@dataclass
class Worker:
    role: str
    env: dict[str, str]
    limits: Limits = field(default_factory=Limits)
    proc: subprocess.Popen | None = None
    conn: Connection | None = None
    workdir: Path | None = None
    _tmp: Any = None
    #: A multikernelbench.engine.zygote.Zygote to fork from (fast), or None for a fresh interpreter.
    zygote: Any = None

    def start(self) -> "Worker":
        self._tmp = tempfile.TemporaryDirectory(prefix=f"mkb-{self.role}-", ignore_cleanup_errors=True)
        self.workdir = Path(self._tmp.name)
        parent_sock, child_sock = socket.socketpair()
        env = dict(os.environ)
        # Caches that libraries put in shared places (a parent that imported torch._dynamo exports
        # TORCHINDUCTOR_CACHE_DIR=/tmp/torchinductor_<user>) go to the worker's own folder instead, unless the
        # backend sets them deliberately below.
        env["TORCHINDUCTOR_CACHE_DIR"] = str(self.workdir / "inductor-cache")
        env["TRITON_CACHE_DIR"] = str(self.workdir / "triton-cache")
        env.update(self.env)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["TMPDIR"] = str(self.workdir)  # temp files land in the worker's own folder (removed at close)
        limits = self.limits
        with open(self.workdir / "stdout.txt", "wb") as out, open(self.workdir / "stderr.txt", "wb") as err:
            if self.zygote is not None and self.zygote.alive():
                from multikernelbench.engine.zygote import ZygoteError

                try:
                    self.proc = self.zygote.spawn(self.role, env, str(self.workdir), limits, child_sock.fileno(),
                                                  out.fileno(), err.fileno())
                except ZygoteError:
                    self.proc = None  # fall back to a fresh interpreter below
            if self.proc is None:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "multikernelbench.engine.worker_main", str(child_sock.fileno()),
                     self.role],
                    pass_fds=[child_sock.fileno()], cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
                    stdout=out, stderr=err, start_new_session=True, preexec_fn=lambda: _apply_limits(limits))
        child_sock.close()
        self.conn = Connection(parent_sock.detach())
        return self

    def request(self, header: dict[str, Any], tensors: Any = None, timeout: float = 60.0) -> tuple[dict, Any]:
        assert self.conn is not None and self.proc is not None
        try:
            protocol.send(self.conn, header, tensors)
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise self._died() from None
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                stacks = self.dump_stacks()
                self.kill()
                raise WorkerTimeout(f"no reply to {header.get('op')!r} within {timeout:.0f} s" + stacks)
            if self.conn.poll(min(remaining, 0.5)):
                try:
                    return protocol.recv(self.conn)
                except (EOFError, ConnectionResetError, OSError):
                    raise self._died() from None
                except Exception as exc:  # undecodable reply: treat as a misbehaving worker
                    self.kill()
                    raise WorkerDied(f"unreadable reply from worker: {exc!r}") from None
            if self.proc.poll() is not None and not self.conn.poll(0):
                raise self._died()

    def _died(self) -> WorkerDied:
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            msg = f"worker killed by {name}"
            if name == "SIGXFSZ":
                msg += " (file size limit: output flood or runaway write)"
            return WorkerDied(msg + self.stderr_tail(), signal_name=name, exit_code=code)
        return WorkerDied(f"worker exited with code {code} before replying" + self.stderr_tail(), exit_code=code)

    def dump_stacks(self, wait_s: float = 2.0) -> str:
        """Ask a stuck worker for its Python stacks (faulthandler on SIGUSR1) and return them; '' when it
        has none to give (dead, or the candidate replaced the handler)."""
        if self.proc is None or self.proc.poll() is not None or not self.workdir:
            return ""
        path = self.workdir / "stderr.txt"
        try:
            size = path.stat().st_size
            os.kill(self.proc.pid, signal.SIGUSR1)
        except OSError:
            return ""
        deadline = time.monotonic() + wait_s
        last = size
        while time.monotonic() < deadline:  # wait until the dump stops growing
            time.sleep(0.2)
            now = path.stat().st_size
            if now > size and now == last:
                break
            last = now
        try:
            with open(path, "rb") as f:
                f.seek(size)
                text = f.read(12000).decode(errors="replace").strip()
        except OSError:
            return ""
        return f"\n--- stacks at the timeout ---\n{text}" if text else ""

    def stderr_tail(self, n: int = 3000) -> str:
        if not self.workdir:
            return ""
        chunks = []
        for name in ("stderr.txt", "stdout.txt"):
            try:
                with open(self.workdir / name, "rb") as f:
                    f.seek(0, os.SEEK_END)
                    size = f.tell()
                    f.seek(max(0, size - n))
                    text = f.read().decode(errors="replace").strip()
                if text:
                    chunks.append(f"\n--- {name} (last {min(size, n)} of {size} bytes) ---\n{text}")
            except OSError:
                pass
        return "".join(chunks)

    def captured_stdout(self, n: int = 2000) -> str:
        return self.stderr_tail(n)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.proc is not None:
            kill_session(self.proc.pid)

    def close(self) -> None:
        if self.conn is not None and self.proc is not None and self.proc.poll() is None:
            try:
                protocol.send(self.conn, {"op": "exit"})
                self.proc.wait(timeout=5)
            except Exception:
                pass
        self.kill()  # also ends anything the candidate or its build left running in the worker's session
        if self.conn is not None:
            self.conn.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "Worker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
