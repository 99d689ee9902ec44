"""The HTTP front's CPU priority below the evaluations' (``ServiceConfig.http_nice``).

Why: on a core the service shares, the event loop that parses and refuses hostile requests and the workers that
evaluate honest kernels compete for the same CPU (issue #42's soak). Niced, the front gets the core when the
evaluations leave it, and a flood then slows the front (the flooders' own requests most of all) rather than
the evaluations.

Linux nice is per thread, and a thread or process inherits its creator's: so the front's thread is niced
only once it runs its event loop, after the lanes' threads were started (they, the zygotes they start and the
workers the zygotes fork keep nice 0); threads the loop starts later (anyio's, for submissions) are the
front's too. With autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``) the kernel first
shares a core between sessions, and a thread's nice ranks it only within its own session: the workers lead
sessions of their own, so against them what counts is the service session's autogroup nice, which is raised
too when the service is its session's leader and the loop runs in its main thread (``mkb serve``; never a
test process that serves an app from a thread, whose session holds other work). The lanes' threads share that
autogroup: they mostly wait on workers.

Measured (benchmarks/serve/README.md, issue #42's soak, all four attacks, 2 runs each way): nice 10 gave
1,795-2,047 honest results a minute alone (1,360-1,500 at 0) and 390-458 beside the attackers (250-392), p99
submit latency 105-190 ms (under the 1 s bar).
"""

from __future__ import annotations

import os
import threading


def lower_http_priority(nice: int) -> None:
    """Nice the calling thread (the event loop's) by ``nice``, and its session's autogroup where that session
    is the service's own. 0: nothing."""
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    tid = threading.get_native_id()
    os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    if os.getsid(0) == os.getpid() and threading.current_thread() is threading.main_thread():
        # the service's own session only: a shell's (or a test run's) autogroup holds the user's other work
        try:
            with open("/proc/self/autogroup", "w") as fh:
                fh.write(str(min(19, nice)))
        except OSError:
            pass
