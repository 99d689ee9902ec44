"""Parent-side client of the zygote (see zygote_main), and a Popen-like handle for its children."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict

from multikernelbench.engine.protocol import recv_control, send_control
from multikernelbench.util.procs import die_with_parent
from multikernelbench.util.worker_env import scrub

#: Imported by the zygote before it forks: everything a worker needs that is slow to import and safe to
#: share (no candidate code, no CUDA initialisation, no threads started). torch._dynamo costs ~2 s of CPU
#: (torch alone 3.1 s, with it 5.3 s) but every worker needs it: the anti-cheat's patch snapshot imports it
#: first (anticheat/runtime.py, default_patch_targets); left out here, each worker paid the 2 s (measured: the
#: suite self-check went from ~0.5 to ~2 s of CPU per candidate).
BASE_PRELOAD = ("torch", "torch._dynamo", "torch.nn.functional", "multikernelbench.engine.worker_main",
                "multikernelbench.engine.protocol", "multikernelbench.timing.loop",
                "multikernelbench.tasks.module", "multikernelbench.anticheat.runtime",
                "multikernelbench.anticheat.guard", "multikernelbench.backends")


class ZygoteError(RuntimeError):
    pass


class Zygote:
    """``wait=False`` returns as soon as the process is started; the first :meth:`spawn` (or
    :meth:`wait_ready`) waits for its imports. That lets a caller start it before other slow work (the CLI
    loads the suite and reads the candidates while the zygote imports torch: ~5 s each on the H200)."""

    def __init__(self, env: dict[str, str], preload: tuple[str, ...] = (), wait: bool = True) -> None:
        ours, theirs = socket.socketpair()
        modules = list(BASE_PRELOAD) + [m for m in preload if m not in BASE_PRELOAD]
        # -P and cwd "/": the caller's folder is not on the import path its forked workers inherit; the
        # environment is scrubbed (util/worker_env.py) because a forked worker's /proc/self/environ is this one.
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "multikernelbench.engine.zygote_main", str(theirs.fileno()),
             json.dumps(modules)],
            pass_fds=[theirs.fileno()], env=scrub(env), cwd="/", stdin=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=die_with_parent)
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.sock.settimeout(300)
        self._ready = False
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Block until the zygote has imported its modules; ZygoteError (and the process closed) if it never does."""
        if self._ready:
            return
        try:
            msg, _ = recv_control(self.sock)
        except (EOFError, OSError) as exc:
            self.close()
            raise ZygoteError(f"zygote failed to start: {exc!r}") from None
        if not msg.get("ready"):
            self.close()
            raise ZygoteError("zygote did not report ready")
        self._ready = True

    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, role: str, env: dict[str, str], cwd: str, limits, chan_fd: int, out_fd: int,
              err_fd: int, sandbox: dict | None = None) -> ZygoteChild:
        """``sandbox``: a SandboxPolicy.to_dict() the child applies before worker code (None: none)."""
        self.wait_ready()
        msg = {"op": "spawn", "role": role, "env": env, "cwd": cwd, "limits": asdict(limits), "sandbox": sandbox}
        body = json.dumps(msg).encode()
        with self.lock:
            try:
                socket.send_fds(self.sock, [len(body).to_bytes(8, "little")], [chan_fd, out_fd, err_fd])
                self.sock.sendall(body)
                reply, _ = recv_control(self.sock)
            except (EOFError, OSError) as exc:
                raise ZygoteError(f"zygote did not spawn a worker: {exc!r}") from None
        return ZygoteChild(self, int(reply["pid"]))

    def status(self, pid: int) -> int | None:
        with self.lock:
            try:
                send_control(self.sock, {"op": "status", "pid": pid})
                reply, _ = recv_control(self.sock)
            except (EOFError, OSError):
                return -signal.SIGKILL  # the zygote is gone, and with it the knowledge of this child
        return reply["code"]

    def close(self) -> None:
        if not self._ready:  # still importing (or failed): it has forked nothing, so it need not wind down
            self.sock.close()
            self.proc.kill()
            self.proc.wait()
            return
        with self.lock:
            try:
                send_control(self.sock, {"op": "exit"})
            except OSError:
                pass
            self.sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class ZygoteChild:
    """The subset of ``subprocess.Popen`` that the sandbox uses, for a worker forked by the zygote."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote = zygote
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.status(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if timeout is not None and deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            time.sleep(0.02)
        return code

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
