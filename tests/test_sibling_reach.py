"""Issue #40, "starved clean worker": a candidate's worker may not renice, re-pin, reschedule or limit its
same-uid siblings (the clean-reference worker, the prefetched next worker).

The attack, as a candidate would run it from inside the real worker sandbox (:func:`kernel_sandbox.enter`, the
filter the zygote's children get): it finds a sibling of its uid and calls ``setpriority``,
``sched_setaffinity``, ``sched_setscheduler``, ``prlimit64`` and ``ioprio_set`` on it. Before the own-process
rules in multikernelbench/util/seccomp.py every call succeeded and the sibling came back reniced to 19 (checked
against the filter at 843e731); now each is refused with EPERM, the sibling keeps its niceness, and the same
calls on the worker itself still work (torch and OpenMP set their own affinity and priority).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import subprocess
import sys

import pytest

from multikernelbench.engine import kernel_sandbox
from multikernelbench.util import seccomp

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and kernel_sandbox.support().seccomp),
                                reason="needs Linux seccomp filters")

_IOPRIO_SET = {"x86_64": 251, "aarch64": 30}
_IOPRIO_WHO_PROCESS, _IOPRIO_WHO_USER = 1, 3
_IDLE = (3 << 13) | 0  # IOPRIO_CLASS_IDLE: the sibling's disk I/O only when nothing else wants it
_UNUSED_UID = 65531  # no process runs as this uid here: without the filter setpriority says ESRCH


def _attempts(sibling: int) -> dict[str, int]:
    """Each call's errno (0: it worked), made from inside the sandbox."""
    libc = ctypes.CDLL(None, use_errno=True)
    nr = _IOPRIO_SET[seccomp.machine()]

    def call(fn) -> int:
        try:
            fn()
            return 0
        except OSError as exc:
            return exc.errno or -1

    def ioprio(which: int, who: int) -> int:
        return 0 if libc.syscall(nr, which, who, _IDLE) == 0 else ctypes.get_errno()

    mine = os.sched_getaffinity(0)
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    return {
        "setpriority sibling": call(lambda: os.setpriority(os.PRIO_PROCESS, sibling, 19)),
        "setpriority own uid": call(lambda: os.setpriority(os.PRIO_USER, _UNUSED_UID, 19)),
        "sched_setaffinity sibling": call(lambda: os.sched_setaffinity(sibling, {min(mine)})),
        "sched_setscheduler sibling": call(lambda: os.sched_setscheduler(sibling, os.SCHED_IDLE, os.sched_param(0))),
        "sched_setparam sibling": call(lambda: os.sched_setparam(sibling, os.sched_param(0))),
        "prlimit sibling": call(lambda: resource.prlimit(sibling, resource.RLIMIT_NOFILE, (64, 64))),
        "ioprio_set sibling": ioprio(_IOPRIO_WHO_PROCESS, sibling),
        "ioprio_set whole uid": ioprio(_IOPRIO_WHO_USER, _UNUSED_UID),
        # itself, by 0 and by its pid: allowed
        "setpriority self 0": call(lambda: os.setpriority(os.PRIO_PROCESS, 0, 1)),
        "setpriority self pid": call(lambda: os.setpriority(os.PRIO_PROCESS, os.getpid(), 2)),
        "sched_setaffinity self": call(lambda: os.sched_setaffinity(0, mine)),
        "sched_setaffinity self pid": call(lambda: os.sched_setaffinity(os.getpid(), mine)),
        "prlimit self": call(lambda: resource.prlimit(0, resource.RLIMIT_NOFILE, limit)),
        "ioprio_set self": ioprio(_IOPRIO_WHO_PROCESS, 0),
    }


def _run_sandboxed(sibling: int, tmp_path) -> dict[str, int]:
    policy = kernel_sandbox.SandboxPolicy.for_worker({}, str(tmp_path / "work"))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker's side: the real sandbox, then the attack
        code = 1
        try:
            os.close(r)
            kernel_sandbox.enter(policy)
            os.write(w, json.dumps(_attempts(sibling)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data, "the sandboxed child failed"
    return json.loads(data)


def test_siblings_are_out_of_reach(tmp_path):
    # Like every worker, the sibling holds no capability (as root, a capless process cannot touch one that has
    # some: the kernel's capability subset rule, not our filter, would refuse the calls then).
    sibling = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               preexec_fn=seccomp.drop_capabilities)
    try:
        nice_before = os.getpriority(os.PRIO_PROCESS, sibling.pid)
        got = _run_sandboxed(sibling.pid, tmp_path)
        nice_after = os.getpriority(os.PRIO_PROCESS, sibling.pid)
    finally:
        sibling.kill()
        sibling.wait()
    refused = {k: v for k, v in got.items() if "sibling" in k or "uid" in k}
    assert refused and all(v == errno.EPERM for v in refused.values()), got
    assert nice_after == nice_before, f"the sibling was reniced from {nice_before} to {nice_after}"
    allowed = {k: v for k, v in got.items() if "self" in k}
    assert allowed and all(v == 0 for v in allowed.values()), got


def test_own_pid_is_written_into_the_program():
    code = seccomp.build_filter()
    assert seccomp.SELF_PID_MARK.to_bytes(4, sys.byteorder) in code
    patched = seccomp.with_own_pid(code, 4242)
    assert seccomp.SELF_PID_MARK.to_bytes(4, sys.byteorder) not in patched
    assert len(patched) == len(code) and patched.count((4242).to_bytes(4, sys.byteorder)) == 9
