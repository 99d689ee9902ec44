"""Where the service's CPU goes during a soak phase (scripts/serve_soak.py ``--cpu-breakdown``): per thread of the
service process and per process of its tree (zygotes, workers), from /proc.

Why /proc and not a profiler: py-spy is not installed and ``perf`` sees no Python frames on 3.11; what the
issue #42 analysis needs is coarser -- how much of the one service core goes to the HTTP front (the event-loop
thread, uvicorn's parsing and the app) against the lanes and the workers that evaluate honest kernels. Lane
threads name themselves (``mkb-lane-N``, serve/lanes.py) and threads they start inherit the name, so every
thread of the service is one of: the event loop (the main thread), threads it started (anyio's submit
threads), lanes, the preemptor. Threads that end between two samples lose what they used since the last one
(reported as ``service exited threads``: the process total less the threads seen).

Processes are summed as the kernel accounts them: a live process's user + system time plus its reaped
children's, over every live process of the tree; a worker that ended moved into its zygote's children time.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(path: str) -> tuple[str, list[str]] | None:
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return None
    head, _, rest = raw.rpartition(b")")
    return head.split(b"(", 1)[1].decode(errors="replace"), rest.split()


def _ticks(fields: list[str], children: bool) -> int:
    # after "pid (comm)": state is 0, utime 11, stime 12, cutime 13, cstime 14
    return sum(int(x) for x in fields[11:15 if children else 13])


def _tree(root: int) -> dict[int, tuple[str, int, list[str]]]:
    """Every live process under ``root`` (and root): pid -> (comm, ppid, stat fields)."""
    procs: dict[int, tuple[str, int, list[str]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(f"/proc/{entry}/stat")
            if st is not None:
                procs[int(entry)] = (st[0], int(st[1][1]), st[1])
    keep, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, (_, ppid, _) in procs.items():
            if ppid == parent and pid not in keep:
                keep.add(pid)
                frontier.append(pid)
    return {pid: procs[pid] for pid in keep if pid in procs}


def _is_zygote(pid: int) -> bool:
    try:
        return b"zygote_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _kind(pid: int, root: int, tree: dict[int, tuple[str, int, list[str]]]) -> str:
    """The service, its zygotes and what they forked (workers, their compilers), or its other children."""
    if pid == root:
        return "service"
    while pid in tree and pid != root:
        if _is_zygote(pid):
            return "zygotes and their workers"
        pid = tree[pid][1]
    return "service's other children (live)"


class CpuSampler:
    """Samples once a second from :meth:`start` to :meth:`stop`; :meth:`report` is seconds of CPU per part."""

    def __init__(self, service_pid: int, period_s: float = 1.0) -> None:
        self.root, self.period = service_pid, period_s
        self.threads: dict[int, tuple[str, int, int]] = {}  # tid -> (label, first ticks, last ticks)
        self.first: dict[str, int] = {}
        self.last: dict[str, int] = {}
        self.cpu0_first: tuple[int, int, int] | None = None
        self.cpu0_last: tuple[int, int, int] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _threads(self) -> None:
        base = f"/proc/{self.root}/task"
        try:
            tids = os.listdir(base)
        except OSError:
            return
        for tid in tids:
            st = _stat(f"{base}/{tid}/stat")
            if st is None:
                continue
            ticks = _ticks(st[1], children=False)
            label = "service event loop (main thread)" if int(tid) == self.root else f"service thread {st[0]}"
            old = self.threads.get(int(tid))
            self.threads[int(tid)] = (label, old[1] if old else ticks, ticks)

    def _processes(self) -> dict[str, int]:
        tree = _tree(self.root)
        parts: dict[str, int] = {}
        for pid, (_, _, fields) in tree.items():
            kind = _kind(pid, self.root, tree)
            if kind == "service":
                parts["service process (all threads)"] = _ticks(fields, children=False)
                parts["service's reaped children"] = int(fields[13]) + int(fields[14])
                own = _stat(f"/proc/{os.getpid()}/stat")
                if own is not None:
                    parts["soak process (honest clients)"] = _ticks(own[1], children=False)
            else:
                parts[kind] = parts.get(kind, 0) + _ticks(fields, children=True)
        return parts

    @staticmethod
    def _cpu0() -> tuple[int, int, int]:
        """(busy, total, irq + softirq) jiffies of core 0: what every process on it used, the service's or not,
        and the interrupts' share (loopback TCP is processed in softirq)."""
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("cpu0 "):
                v = [int(x) for x in line.split()[1:]]
                idle = v[3] + v[4]
                return sum(v) - idle, sum(v), v[5] + v[6]
        return 0, 0, 0

    def _sample(self) -> None:
        self._threads()
        parts = self._processes()
        for k, v in parts.items():
            self.first.setdefault(k, v)
            # a part whose processes all ended keeps its last value (their time is in a parent's children time)
            self.last[k] = v
        self.cpu0_last = self._cpu0()
        if self.cpu0_first is None:
            self.cpu0_first = self.cpu0_last

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self._sample()

    def start(self) -> None:
        self._sample()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sample()

    def report(self) -> dict[str, float]:
        out: dict[str, float] = {}
        by_label: dict[str, int] = {}
        for label, first, last in self.threads.values():
            by_label[label] = by_label.get(label, 0) + last - first
        seen = sum(by_label.values())
        for label, ticks in sorted(by_label.items()):
            out[label] = round(ticks / TICK, 1)
        for k in self.last:
            d = self.last[k] - self.first.get(k, self.last[k])
            out[k] = round(d / TICK, 1)
        total = out.get("service process (all threads)", 0.0)
        out["service exited threads"] = round(total - seen / TICK, 1)
        if self.cpu0_first and self.cpu0_last:
            out["core 0 busy, every process"] = round((self.cpu0_last[0] - self.cpu0_first[0]) / TICK, 1)
            out["core 0 wall"] = round((self.cpu0_last[1] - self.cpu0_first[1]) / TICK, 1)
            out["core 0 irq+softirq"] = round((self.cpu0_last[2] - self.cpu0_first[2]) / TICK, 1)
        return out
