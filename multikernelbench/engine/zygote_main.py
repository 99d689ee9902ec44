"""The zygote: a process that has imported torch and the worker code, and forks workers on request.

Starting a fresh interpreter and importing torch costs ~4 s of CPU per worker, and the engine starts one
or two workers per candidate; forking from a zygote costs milliseconds. The zygote never runs candidate
code and never initialises CUDA, so every child starts as clean as a fresh interpreter would: its own
session, working directory, environment, limits and stdio are set after the fork, then the kernel sandbox
(engine/kernel_sandbox.py: Landlock, seccomp, no capabilities), before worker code runs. The zygote itself
stays outside the sandbox and is not dumpable.

Control protocol (one request at a time, from the parent's single Zygote client): 8-byte length + JSON;
``spawn`` carries three fds by SCM_RIGHTS (the worker's channel, stdout file, stderr file) and gets the
child's pid back; ``status`` reaps a child and returns its exit code (Popen convention: -N for signal N).
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import sys
import traceback

from multikernelbench.engine.protocol import recv_control, send_control


def _become_worker(msg: dict, fds: list[int], control: socket.socket) -> None:
    """In the forked child: turn into a worker exactly as a fresh `python -m ...worker_main` would be."""
    from multikernelbench.util.procs import Limits, apply_limits

    chan, out, err = fds
    control.close()
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in (devnull, out, err):
        os.close(fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    os.chdir(msg["cwd"])
    os.environ.clear()
    os.environ.update(msg["env"])
    sys.dont_write_bytecode = True
    import tempfile

    tempfile.tempdir = None  # re-read TMPDIR from the new environment
    own_netns = apply_limits(Limits(**msg["limits"]))
    if msg.get("sandbox") is not None:  # last step before worker code: nothing after it is trusted
        from multikernelbench.engine.kernel_sandbox import SandboxPolicy, enter

        enter(SandboxPolicy.from_dict(msg["sandbox"]), own_netns=own_netns)
    from multikernelbench.engine import worker_main

    worker_main.serve(chan, msg["role"])


def serve(control: socket.socket) -> None:
    while True:
        try:
            msg, fds = recv_control(control, nfds=3)
        except (EOFError, ConnectionError, OSError):
            return
        op = msg.get("op")
        if op == "spawn":
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    _become_worker(msg, fds, control)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                except BaseException:  # noqa: BLE001 - report and die: the parent sees a crashed worker
                    traceback.print_exc()
                    code = 70
                finally:
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            send_control(control, {"pid": pid})
        elif op == "status":
            try:
                done, status = os.waitpid(int(msg["pid"]), os.WNOHANG)
                exit_code = os.waitstatus_to_exitcode(status) if done else None
            except ChildProcessError:
                exit_code = msg.get("unknown", -9)
            send_control(control, {"code": exit_code})
        elif op == "exit":
            return


def main() -> None:
    from multikernelbench.engine.kernel_sandbox import harden_trusted

    harden_trusted()  # workers must not read the zygote's memory (it forks them, it is not one of them)
    control = socket.socket(fileno=int(sys.argv[1]))
    for name in json.loads(sys.argv[2]):
        importlib.import_module(name)
    send_control(control, {"ready": True})
    serve(control)


if __name__ == "__main__":
    main()
