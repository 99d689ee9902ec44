"""Process limits and session-wide kills for worker processes.

Why a module of its own: the sandbox (fresh interpreters) and the zygote (forked workers) must apply the
very same limits between fork and the first line of worker code, and the runner must be able to end a
worker's whole session; none of them should reach into another's private names to do it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import signal
import time
from dataclasses import dataclass

_CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True) if os.name == "posix" else None


@dataclass
class Limits:
    address_space_gb: float = 0.0  # 0 = unlimited (CUDA needs huge virtual reservations)
    file_size_mb: float = 256.0  # stdout flood / runaway writes end in SIGXFSZ
    cpu_seconds: float = 0.0  # 0 = unlimited; wall-clock timeouts are enforced by the parent anyway
    open_files: int = 4096
    #: Own network namespace (only a down loopback): no connection leaves the worker. Needs root or
    #: CAP_SYS_ADMIN; silently skipped where the kernel refuses (then only the audit hook blocks Python).
    isolate_network: bool = True
    #: RLIMIT_NPROC (processes + threads of the user, counted over all of that uid's processes on the host).
    #: Linux ignores it for root, so it binds when the engine runs unprivileged or the worker drops to
    #: ``run_as_uid``; 0 = unset.
    max_processes: int = 0
    #: The uid/gid the worker drops to before the sandbox (engine/worker_uid.py); -1: keep the harness's.
    run_as_uid: int = -1
    run_as_gid: int = -1
    #: Lower CPU priority (nice, for the process and its session's autogroup; inherited by its compilers).
    #: Builds on a host whose device stage runs beside them: the device stage is the pipeline's one serial
    #: lane, and its host side (launches, checks, the clock audit) should not queue behind compilers.
    nice: int = 0


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def process_age_s(pid: int | str = "self") -> float | None:
    """Seconds since ``pid`` started (from /proc: its start time in clock ticks since boot, and the uptime);
    None where /proc is unreadable. The engine's trace says how long a run took to get going before its
    first line."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            start_ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])  # field 22 of stat(5)
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def lower_priority(nice: int) -> None:
    """Nice the calling process (after ``setsid``) and its session's autogroup by ``nice``. With autogroup
    scheduling (``/proc/sys/kernel/sched_autogroup_enabled``, on by default in most distributions' kernels) a
    process's nice value only ranks it within its own session, and every session gets an equal share of the
    cores: a niced process in a session of its own still got as much CPU as a whole run's compile workers
    together (seen with the PCH warmer on 2 cores). The autogroup's own nice applies across sessions; raising
    it needs no privilege. Kernels without autogroups have no such file."""
    os.nice(nice)
    try:
        with open("/proc/self/autogroup", "w") as fh:
            fh.write(str(nice))
    except OSError:
        pass


def name_thread(name: str) -> None:
    """The calling thread's kernel name (``comm``, 15 bytes; Python 3.11 sets none), as ``top -H`` and
    /proc/<pid>/task/<tid>/stat show it; threads it starts inherit it. Why: a service's threads are otherwise
    all ``python``, and the soak's CPU breakdown (scripts/serve_cpu.py) tells its lanes from its HTTP front by
    name. Nothing happens off Linux."""
    if LIBC is not None:
        LIBC.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def die_with_parent() -> None:
    """The calling process is SIGKILLed when the process that started it exits (Linux only)."""
    if LIBC is not None:
        LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def apply_limits(limits: Limits) -> bool:
    """Runs in the child between fork and exec (or between fork and worker code): syscalls only. Returns
    whether the process got a network namespace of its own."""
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
    if limits.max_processes > 0:  # set as root too: it binds once the worker drops to run_as_uid
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))
    if limits.nice > 0:
        lower_priority(limits.nice)
    die_with_parent()
    if limits.isolate_network and LIBC is not None:
        return LIBC.unshare(_CLONE_NEWNET) == 0  # failure (no privilege) leaves the worker in the host namespace
    return False


def parent_and_session(pid: int | str) -> tuple[int, int] | None:
    """(parent pid, session id) of ``pid`` from /proc, or None (gone, or not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # after "pid (comm)": state ppid pgrp session ...
        return int(fields[1]), int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def cpu_seconds(pid: int | str) -> float | None:
    """CPU time ``pid`` has used, all its threads and its reaped children (user + system), from /proc; None when
    gone or not Linux. The kernel's account: a process cannot lower it, and descheduling does not add to it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # state is field 3: utime..cstime are 14-17
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def session_members(sid: int) -> list[int]:
    """Pids whose session id is ``sid`` (Linux /proc; empty elsewhere)."""
    return sessions_members({sid})


def sessions_members(sids: set[int]) -> list[int]:
    """Pids whose session id is one of ``sids``, with one scan of /proc (a build host runs hundreds of
    processes; a GPU's clock stops the other lanes' workers at once, engine/gpu_turns.py)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    return [int(e) for e in entries if e.isdigit() and (st := parent_and_session(e)) is not None and st[1] in sids]


def signal_sessions(sids: set[int], sig: int) -> None:
    """Send ``sig`` to every process of these workers' sessions (the caller excluded)."""
    me = os.getpid()
    for pid in sessions_members(sids):
        if pid != me:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def signal_session(sid: int, sig: int) -> None:
    """Send ``sig`` to every process of a worker's session (the caller excluded)."""
    signal_sessions({sid}, sig)


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
