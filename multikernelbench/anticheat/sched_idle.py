"""Time no thread of the worker could run: evidence host load cannot produce (issue #40, "balanced renewal").

Why: the clock audit's wall figures stretch with load, and its CPU-time figures miss padding that burns no CPU.
``tests/data/timing_attacks/renew_profile_quiet_balanced.py`` hides a one-thread product (~20 ms of CPU per call)
in the candidate's renewal and pads the reference's renewal by *sleeping* as long: the round differences stay at
0, the CPU time is under its floor, and beside load the wall time is within what load explains.

What the parent can read without trusting the worker: the kernel's scheduler account of every thread of the worker,
``/proc/<pid>/task/<tid>/schedstat`` (ns on a CPU, ns waiting on a run queue). Load makes a thread *wait* for a core
(counted there); it never makes it *sleep*. So over an interval between two fresh-input requests::

    idle >= wall - sum over the worker's threads (on-CPU + run-queue wait) - the parent's time answering
            - the parent's threads' (on-CPU + run-queue wait) from its answer to the next arrival

is a lower bound on the time during which no thread of the worker was runnable (the sum over threads counts an
instant once per runnable thread, so it can only overstate the runnable time). An honest CPU worker between two
requests renews inputs and runs a call: it does not sleep, except blocked on the parent's pipe (the parent's
service time and its own runnable time until it reads the next request, both subtracted: under load the parent
too waits for a core after the worker's request woke it) and on the rare page fault that needs I/O. A sleeping
padding shows its full length at any load.

Limits (the anticheat README says the same): padding by a busy loop is CPU time, judged by the CPU-time audit, not
here; a thread that exits within an interval takes its account with it, so such an interval has no figure (an
attacker can churn threads to void the evidence: counted in :attr:`IdleFigures.voided`); a thread that lowers its
own priority (``nice 19``, ``SCHED_IDLE``) and spins waits on the run queue instead of sleeping, which this reads
as load. GPU backends: a blocking device sync sleeps, so this is for CPU backends only (like the CPU time).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SchedSnapshot:
    """Per thread of one process, its on-CPU plus run-queue wait nanoseconds at one moment."""

    runnable_ns: dict[int, int]


def read_snapshot(pid: int | str) -> SchedSnapshot | None:
    """Every thread's schedstat of ``pid``; None when the process is gone or the kernel keeps no schedstat
    (``CONFIG_SCHED_INFO`` off: the audit then has no idle figure and convicts nothing by it)."""
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return None
    out: dict[int, int] = {}
    for tid in tids:
        try:
            with open(f"{base}/{tid}/schedstat", "rb") as f:
                fields = f.read().split()
            out[int(tid)] = int(fields[0]) + int(fields[1])
        except FileNotFoundError:
            continue  # the thread exited while listed: judged by the next snapshot's comparison
        except (OSError, IndexError, ValueError):
            return None
    return SchedSnapshot(out) if out else None


def available(pid: int | str | None = None) -> bool:
    """Whether this kernel keeps per-thread schedstat (read on ``pid``, this process by default)."""
    return read_snapshot(os.getpid() if pid is None else pid) is not None


def runnable_ms(a: SchedSnapshot | None, b: SchedSnapshot | None) -> float | None:
    """Run-queue plus on-CPU milliseconds summed over the worker's threads between two snapshots; None when
    either is missing or a thread of ``a`` is gone in ``b`` (its last part is lost with it: no lower bound)."""
    if a is None or b is None or not set(a.runnable_ns) <= set(b.runnable_ns):
        return None
    total = sum(ns - a.runnable_ns.get(tid, 0) for tid, ns in b.runnable_ns.items())
    return total / 1e6


def idle_ms(wall_ms: float, worker_a: SchedSnapshot | None, worker_b: SchedSnapshot | None,
            own_a: SchedSnapshot | None, own_b: SchedSnapshot | None) -> float | None:
    """The lower bound on the worker's sleep over one interval: ``wall_ms`` (the parent's service time already
    taken off), less the worker's threads' runnable time, less the parent's threads' runnable time from its
    answer to the next request's arrival (the worker blocked on the parent's wake-up and read: under load the
    parent waits for a core too, tens of ms on the 2-core dev host). Every thread of the parent, not only the one
    answering: that one may wait for the GIL while another holds it (another lane judging outputs, the service
    parsing a client's flood), and a worker must not be charged for the parent's own business, or a busy parent
    could frame an honest candidate. None when any of it is unknown (a parent thread that ended inside the
    interval voids it, as a worker thread does)."""
    ran = runnable_ms(worker_a, worker_b)
    own = runnable_ms(own_a, own_b)
    if ran is None or own is None:
        return None
    return wall_ms - ran - own


@dataclass(frozen=True)
class IdleConfig:
    """``floor_ms``: per sample, the median idle an honest worker's reference may show (measured at most -1 ms on
    the 2-core dev host, quiet or beside pinned load: the figure is a lower bound that overlapping threads pull
    below 0; what is left is latency the parent does not see: its threads' running and waiting after the
    worker's request are subtracted, a GIL holder among them); ``rel``: the fraction of the callable's claimed sample
    time allowed on top (benchmarks/verdicts_under_load/README.md, "Idle")."""

    floor_ms: float = 3.0
    rel: float = 0.25
    min_rounds: int = 4


@dataclass(frozen=True)
class IdleFigures:
    """One callable's idle evidence over a timing."""

    fn: str
    low_ms: float  # the lower quartile of idle per sample (a burst of parent latency hits only some)
    median_ms: float
    samples: int  # intervals with a figure
    voided: int  # intervals without one (a thread exited, or no schedstat)
    claimed_ms: float  # median claimed sample time

    def bound(self, cfg: IdleConfig) -> float:
        return max(cfg.floor_ms, cfg.rel * self.claimed_ms)


def figures(fn: str, idles: Sequence[float | None], claimed: Sequence[float]) -> IdleFigures | None:
    """The figures of one callable's intervals (``idles`` in ms per sample, None where unknown)."""
    known = sorted(x for x in idles if x is not None)
    if not known:
        return None
    low = known[(len(known) - 1) // 4]
    return IdleFigures(fn, low, statistics.median(known), len(known), len(idles) - len(known),
                       statistics.median(claimed) if claimed else 0.0)


def judge(figs: Sequence[IdleFigures], cfg: IdleConfig) -> list[tuple[str, float]]:
    """A finding's text and margin (excess over the bound) for each callable whose intervals sleep beyond the
    bound in most of them (the median: load does not produce sleep, so the lower quartile's robustness to bursts
    is not needed, and the figure is a lower bound that threads running at once pull down in some samples;
    measured: benchmarks/verdicts_under_load/README.md, "Idle")."""
    out = []
    for f in figs:
        bound = f.bound(cfg)
        if f.samples >= cfg.min_rounds and f.median_ms > bound:
            out.append((f"~{f.median_ms:.1f} ms per sample in which no thread of the worker could run, around "
                        f"{f.fn}'s samples (median of {f.samples}, lower quartile {f.low_ms:.1f} ms; bound "
                        f"{bound:.1f} ms; the kernel's schedstat of every worker thread, read by the parent: load "
                        "makes threads wait for a core, not sleep): a renewal padded by sleeping", f.median_ms / bound))
    return out
