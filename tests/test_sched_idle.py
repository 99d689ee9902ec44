"""anticheat/sched_idle.py on real processes: load makes a thread wait on the run queue, it does not make it sleep.

Each child is a real Python process; the parent reads its threads' /proc/<pid>/task/*/schedstat as the engine's
parent does. Busy loops pinned to every core make the load (like tests/test_timing_evidence.py's burners). On a
kernel without per-thread schedstat the readings are None and these tests skip (the audit then says so and
judges nothing: the last test).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from multikernelbench.anticheat import sched_idle
from multikernelbench.anticheat.clock_audit import Ask, AskLog, AuditConfig, audit
from multikernelbench.timing.loop import Phase, round_order

pytestmark = pytest.mark.skipif(not sched_idle.available(), reason="no per-thread schedstat on this kernel")

#: The child waits for a line on stdin, then does one thing for ``T`` seconds, then waits again.
T = 0.3
_CHILD = """
import sys, threading, time
T = float(sys.argv[1])
for line in sys.stdin:
    what = line.strip()
    end = time.perf_counter() + T
    if what == "sleep":
        time.sleep(T)
    elif what == "spin":
        while time.perf_counter() < end:
            pass
    elif what == "thread":  # a thread that outlives this request by 0.1 s
        threading.Thread(target=time.sleep, args=(0.1,)).start()
    print("done", flush=True)
"""


def _child() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(T)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


def _idle(p: subprocess.Popen, what: str) -> tuple[float | None, float]:
    """Idle ms of one request to the child (wall - its threads' runnable time - this process's, which the child
    waits on for its request and whose reading of the answer is in the wall time) and the wall time."""
    assert p.stdin is not None and p.stdout is not None
    me = os.getpid()
    a, own_a, t0 = sched_idle.read_snapshot(p.pid), sched_idle.read_snapshot(me), time.perf_counter()
    p.stdin.write(what + "\n")
    p.stdin.flush()
    assert p.stdout.readline().strip() == "done"
    wall = (time.perf_counter() - t0) * 1e3
    b, own_b = sched_idle.read_snapshot(p.pid), sched_idle.read_snapshot(me)
    return sched_idle.idle_ms(wall, a, b, own_a, own_b), wall


def _pin(core: int):  # type: ignore[no-untyped-def]
    return lambda: os.sched_setaffinity(0, {core})


def _burners(per_core: int) -> list[subprocess.Popen]:
    cores = sorted(os.sched_getaffinity(0))
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             preexec_fn=_pin(cores[i % len(cores)]))
            for i in range(per_core * len(cores))]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
        p.wait()


def test_sleep_shows_in_full_and_spinning_beside_pinned_load_does_not():
    """The spinning child gets about a third of a core beside two burners per core (its CPU time drops), yet its
    idle stays near 0: the rest of its wall time is run-queue wait. The sleeping child shows its whole sleep."""
    child = _child()
    burners = _burners(2)
    try:
        time.sleep(0.2)
        spins = [_idle(child, "spin") for _ in range(3)]
        sleeps = [_idle(child, "sleep") for _ in range(3)]
    finally:
        _stop(burners)
        child.kill()
        child.wait()
    print("spin (idle, wall) ms:", spins, "sleep:", sleeps)
    for idle, _ in spins:
        assert idle is not None and idle < 0.1 * T * 1e3, spins
    for idle, _ in sleeps:
        assert idle is not None and idle > 0.8 * T * 1e3, sleeps


def test_a_thread_that_exits_within_the_interval_voids_its_figure():
    """Its last account leaves with it: no lower bound can be given, so none is (never a guessed conviction)."""
    child = _child()
    try:
        _idle(child, "thread")  # starts a thread that ends during the next request
        idle, _ = _idle(child, "spin")
    finally:
        child.kill()
        child.wait()
    assert idle is None


def test_a_gone_process_and_a_missing_schedstat_read_as_none():
    child = _child()
    child.kill()
    child.wait()
    assert sched_idle.read_snapshot(child.pid) is None
    assert sched_idle.runnable_ms(None, sched_idle.read_snapshot(os.getpid())) is None


OWN = sched_idle.SchedSnapshot({7: 10**9})  # the parent's threads: none runnable between answer and arrival


def _log(idle_ms: dict[str, float], rounds: int = 6, sched: bool = True) -> tuple[AskLog, dict[str, list[float]]]:
    """A timing's requests with the worker's schedstat: each interval 20 ms of wall, of which ``idle_ms[fn]``
    no thread was runnable (one thread, so its account is wall - idle); 1 ms of it the parent's service."""
    t, ns, log = 100.0, 0, AskLog(sched_clock=(lambda: None) if not sched else None)
    series: dict[str, list[float]] = {"candidate": [], "eager": []}
    for r in range(rounds):
        for fn in round_order(("candidate", "eager"), r):
            snap = sched_idle.SchedSnapshot({1: ns}) if sched else None
            log.asks.append(Ask(fn, 1, Phase.SAMPLE, t, None, snap, served=1e-3, own_answered=OWN, own_arrival=OWN))
            series[fn].append(2.0)
            t += 20e-3
            ns += int((20.0 - 1.0 - idle_ms.get(fn, 0.0)) * 1e6)
    log.asks.append(Ask("candidate", 1, Phase.FINAL, t, None, sched_idle.SchedSnapshot({1: ns}) if sched else None,
                        own_arrival=OWN))
    log.end, log.end_sched, log.end_own = t + 1e-4, sched_idle.SchedSnapshot({1: ns}) if sched else None, OWN
    return log, series


def test_the_audit_names_a_padding_sleep_and_clears_a_worker_that_does_not_sleep():
    calls, fns = {"candidate": 1, "eager": 1}, ["candidate", "eager"]
    log, series = _log({"eager": 12.0})
    got = audit(log, series, calls, fns, "candidate", "eager", None, AuditConfig())
    assert [f.kind.value for f in got.found] == ["idle"], got.findings
    assert "no thread of the worker could run, around eager's samples" in got.findings[0]
    assert got.found[0].load_sensitive and not got.found[0].excused_by_load
    log, series = _log({"eager": 1.0, "candidate": 12.0})  # the candidate's own sleeps are its own time
    assert audit(log, series, calls, fns, "candidate", "eager", None, AuditConfig()).found == []


def test_without_schedstat_the_audit_says_so_and_judges_nothing():
    log, series = _log({"eager": 12.0}, sched=False)
    got = audit(log, series, {"candidate": 1, "eager": 1}, ["candidate", "eager"], "candidate", "eager", None,
                AuditConfig())
    assert got.found == [] and "no idle audit" in got.idle_off


def _thread_only(tid: int) -> sched_idle.SchedSnapshot | None:
    """One thread of this process (what the parent read before: only the thread answering the worker)."""
    try:
        with open(f"/proc/{os.getpid()}/task/{tid}/schedstat", "rb") as f:
            fields = f.read().split()
        return sched_idle.SchedSnapshot({tid: int(fields[0]) + int(fields[1])})
    except OSError:
        return None


@pytest.mark.slow
def test_a_busy_parent_thread_holding_the_gil_frames_no_worker():
    """Another thread of the parent holds the GIL (another lane judging outputs, the service parsing a client's
    flood): the thread that reads the worker's answer waits for the GIL, asleep. Counting only that thread's
    account (the code before this test) charged the wait to the worker as ~20-30 ms of sleep per request, over
    the 3 ms bound, so a hostile client could have framed an honest candidate; counting every parent thread, the
    GIL holder's running time is taken off and the figure stays under the bound."""
    import threading

    child = subprocess.Popen([sys.executable, "-c", _CHILD, "0.005"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)  # each answer takes 5 ms of spinning: the reader blocks, the holder runs
    stop = threading.Event()

    def hold_the_gil() -> None:
        n = 0
        while not stop.is_set():
            n += 1

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.03)  # the GIL passes every 30 ms: the waits are long enough to see
    holder = threading.Thread(target=hold_the_gil, daemon=True)
    try:
        _idle(child, "spin")
        holder.start()
        me, tid = os.getpid(), threading.get_native_id()
        whole, alone = [], []
        for _ in range(7):
            a, own_a, one_a, t0 = (sched_idle.read_snapshot(child.pid), sched_idle.read_snapshot(me),
                                   _thread_only(tid), time.perf_counter())
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write("spin\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "done"
            wall = (time.perf_counter() - t0) * 1e3
            b, own_b, one_b = sched_idle.read_snapshot(child.pid), sched_idle.read_snapshot(me), _thread_only(tid)
            whole.append(sched_idle.idle_ms(wall, a, b, own_a, own_b))
            alone.append(sched_idle.idle_ms(wall, a, b, one_a, one_b))
    finally:
        stop.set()
        holder.join()
        sys.setswitchinterval(old_interval)
        child.kill()
        child.wait()
    print("idle ms, every parent thread:", whole, "the answering thread alone:", alone)
    bound = sched_idle.IdleConfig().floor_ms
    assert all(x is not None for x in whole + alone), (whole, alone)
    assert sorted(alone)[len(alone) // 2] > bound, alone  # the framing the old reading allowed
    assert sorted(whole)[len(whole) // 2] < bound, whole
