"""Spawn and supervise one worker process.

A worker is a fresh interpreter (``python -m multikernelbench.engine.worker_main``) in its own process
session and temporary working directory, with resource limits applied before exec and its stdout/stderr
going to size-capped files. The parent talks to it over a socketpair passed as an inherited fd, so a
candidate printing to stdout cannot corrupt the protocol. Killing the session's process group also kills
anything the candidate forked (compilers, helpers).

Before the first line of worker code the child enters the kernel sandbox (engine/kernel_sandbox.py): a
Landlock ruleset (read and execute only where Python, the toolchains and their headers live; write only in
its own working directory, its candidate's build folder and the toolchain caches its environment names; no
TCP; no signals or abstract sockets outside its own domain), a seccomp filter (no ptrace, no reading other
processes' memory, no namespaces or mounts, no sockets but AF_UNIX), no_new_privs and no capabilities. The
parent and the zygote are not dumpable. What that does and does not stop is listed in
multikernelbench/anticheat/README.md ("What is and is not isolated").
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from multikernelbench.engine import protocol
from multikernelbench.engine.kernel_sandbox import CACHE_ENV, READ_ENV, WRITE_ENV, SandboxPolicy, enter, harden_trusted
from multikernelbench.util.procs import Limits, apply_limits, kill_session, signal_session
from multikernelbench.util.worker_env import base_env, scrub

__all__ = ["Limits", "Worker", "WorkerDied", "WorkerTimeout"]


class WorkerDied(Exception):
    """The worker exited or was killed while the parent waited for a reply."""

    def __init__(self, message: str, signal_name: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.signal_name = signal_name
        self.exit_code = exit_code


class WorkerTimeout(Exception):
    """No reply within the deadline; the worker has been killed."""


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

    def start(self) -> Worker:
        self._tmp = tempfile.TemporaryDirectory(prefix=f"mkb-{self.role}-", ignore_cleanup_errors=True)
        self.workdir = Path(self._tmp.name)
        parent_sock, child_sock = socket.socketpair()
        harden_trusted()  # the parent holds expected outputs and seeds: no worker may read its memory
        # An allow-list, never the harness's environment: tokens and keys must not reach candidate code
        # (multikernelbench/util/worker_env.py); the backend's worker_env adds its toolchain's variables.
        env = base_env(home=str(self.workdir))
        for key in CACHE_ENV + (READ_ENV, WRITE_ENV):  # every writable folder comes from the backend or here
            env.pop(key, None)
        # Caches that libraries put in shared places (a parent that imported torch._dynamo exports
        # TORCHINDUCTOR_CACHE_DIR=/tmp/torchinductor_<user>; CUDA's JIT cache is ~/.nv) go to the worker's own
        # folder instead, unless the backend sets them deliberately below.
        env["TORCHINDUCTOR_CACHE_DIR"] = str(self.workdir / "inductor-cache")
        env["TRITON_CACHE_DIR"] = str(self.workdir / "triton-cache")
        env["TRITON_HOME"] = str(self.workdir / "triton-home")
        env["CUDA_CACHE_PATH"] = str(self.workdir / "nv-cache")
        env.update(self.env)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["TMPDIR"] = env["HOME"] = str(self.workdir)  # temp files land in its own folder (removed at close)
        env = scrub(env)
        limits = self.limits
        policy = SandboxPolicy.for_worker(env, str(self.workdir))
        if os.geteuid() == 0:  # not root where avoidable (engine/worker_uid.py)
            from multikernelbench.engine.worker_uid import claim, prepare

            if limits.run_as_uid >= 0:
                policy.uid, policy.gid = limits.run_as_uid, limits.run_as_gid
                prepare(policy.uid, policy.gid, policy.write, policy.read)
            else:
                claim(policy.write, 0, 0)

        def child_setup() -> None:  # between fork and exec of a fresh interpreter: syscalls only
            enter(policy, own_netns=apply_limits(limits))

        with open(self.workdir / "stdout.txt", "wb") as out, open(self.workdir / "stderr.txt", "wb") as err:
            if self.zygote is not None and self.zygote.alive():
                from multikernelbench.engine.zygote import ZygoteError

                try:
                    self.proc = self.zygote.spawn(self.role, env, str(self.workdir), limits, child_sock.fileno(),
                                                  out.fileno(), err.fileno(), sandbox=policy.to_dict())
                except ZygoteError:
                    self.proc = None  # fall back to a fresh interpreter below
            if self.proc is None:
                self.proc = subprocess.Popen(
                    [sys.executable, "-P", "-m", "multikernelbench.engine.worker_main", str(child_sock.fileno()),
                     self.role],
                    pass_fds=[child_sock.fileno()], cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
                    stdout=out, stderr=err, start_new_session=True, preexec_fn=child_setup)
        child_sock.close()
        self.conn = Connection(parent_sock.detach())
        return self

    def send(self, header: dict[str, Any], tensors: Any = None) -> None:
        assert self.conn is not None and self.proc is not None
        try:
            protocol.send(self.conn, header, tensors)
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise self._died() from None

    def receive(self, deadline: float, what: str = "reply in time") -> tuple[dict, Any]:
        """The worker's next message, waiting until ``deadline`` (time.monotonic); a worker that does not
        answer in time is killed (its stacks go into the WorkerTimeout), one that died is reported."""
        assert self.conn is not None and self.proc is not None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                stacks = self.dump_stacks()
                self.kill()
                raise WorkerTimeout(f"no {what}" + stacks)
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

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Every process of the worker's session stopped (SIGSTOP) for the block: nothing the candidate left
        running takes a core while the parent measures something else (the clean worker's recalibration,
        anticheat/clock_audit.py). A stopped worker only sees its clock jump; it is continued before its next
        request."""
        if self.proc is None or self.proc.poll() is not None:
            yield
            return
        signal_session(self.proc.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            signal_session(self.proc.pid, signal.SIGCONT)

    def close(self) -> None:
        if self.conn is not None and self.proc is not None and self.proc.poll() is None:
            try:
                protocol.send(self.conn, {"type": "Exit"})
                self.proc.wait(timeout=5)
            except Exception:
                pass
        self.kill()  # also ends anything the candidate or its build left running in the worker's session
        if self.conn is not None:
            self.conn.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Worker:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
