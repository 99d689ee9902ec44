"""Shared pieces of the throughput benchmark: constants, logging, percentiles, and running a pipeline as a
subprocess in a session of its own, killed as a whole (``multikernelbench.util.procs.kill_session``) at its cap."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from multikernelbench.util.procs import kill_session

REPO = Path(__file__).resolve().parents[2]
#: The CLI entry point; the KernelBench-style children are started through it (``_kb``, ``_kb_eval``).
ENTRY = REPO / "scripts" / "throughput_bench.py"
PIPELINES = ("mkb", "kernelbench_style")
EV = "KBEV "  # prefix of the KernelBench-style child's event lines (candidates may print anything)
RESULT = "KBRESULT "  # prefix of an eval child's result line
INCLUDE = "#include <torch/extension.h>"
#: One line of mkb's ``--trace``: ``HH:MM:SS +  12.3s <task id> [<code hash>]: <what>``.
_TRACE = re.compile(r"^\S+ \+\s*([0-9.]+)s (.+? \[[0-9a-f]+\]): (.*)$")


def trace_line(line: str) -> tuple[float, str, str] | None:
    """(seconds since the run started, the candidate's label, what happened), or None for another kind of line
    (the runner's and the warmer's own lines name no candidate)."""
    m = _TRACE.match(line)
    return (float(m.group(1)), m.group(2), m.group(3)) if m else None

class Interrupted(Exception):
    """SIGTERM/SIGINT in the main process (e.g. an outer `timeout`): kill the running pipeline, write what is there."""


_SIGNALLED: list[str] = []


def _on_signal(signum, frame) -> None:
    if not _SIGNALLED:  # raise once; a second signal must not interrupt the clean-up
        _SIGNALLED.append(signal.Signals(signum).name)
        raise Interrupted(_SIGNALLED[0])


def log(msg: str) -> None:
    print(f"[throughput {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def percentile(values, q: float):
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    xs = sorted(float(v) for v in values if v is not None)
    if not xs:
        return None
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def last_line(text, limit: int = 200) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[-1][:limit] if lines else ""


def rnd(x, nd: int = 3):
    return None if x is None else round(float(x), nd)




def kill_tree(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """SIGTERM to the process group we created (a pipeline may write what it has), then SIGKILL to every
    process of its session: ninja gives each compiler a process group of its own, the session holds them all."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    end = time.monotonic() + grace_s
    while time.monotonic() < end and proc.poll() is None:
        time.sleep(0.2)
    kill_session(proc.pid)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def run_streamed(cmd: list[str], env: dict, cap_s: float, on_line, stderr_path: Path, cwd=None) -> dict:
    """Run ``cmd`` in its own process group; ``on_line(line, t)`` for each stdout line as it arrives (t = seconds
    since launch); killed (whole tree) after ``cap_s``."""
    t0 = time.monotonic()
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=err, start_new_session=True)

    def reader() -> None:
        for raw in proc.stdout:
            try:
                on_line(raw.decode("utf-8", "replace").rstrip("\n"), time.monotonic() - t0)
            except Exception as exc:  # a parse problem must not stop the reader (the pipe would fill up)
                log(f"could not handle a line: {exc!r}")

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    cpu = CpuSampler(t0)
    cpu.start()
    killed = interrupted = False
    try:
        proc.wait(timeout=max(1.0, cap_s))
    except subprocess.TimeoutExpired:
        killed = True
        log(f"cap of {cap_s:.0f} s reached: killing {cmd[1:3]} (process group {proc.pid})")
        kill_tree(proc)
    except Interrupted as exc:
        killed = interrupted = True
        log(f"{exc}: killing {cmd[1:3]} (process group {proc.pid})")
        kill_tree(proc)
    wall = time.monotonic() - t0
    cpu.stop()
    th.join(timeout=10)
    if not killed:  # stragglers left in the session by a normal exit
        kill_session(proc.pid)
    return {"rc": proc.returncode, "killed": killed, "interrupted": interrupted, "wall_s": wall,
            "cpu_busy": cpu.series}


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs from /proc/stat (None where there is no such file)."""
    try:
        with open("/proc/stat") as fh:
            f = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = f[3] + (f[4] if len(f) > 4 else 0)  # idle + iowait
    return sum(f) - idle, sum(f)


class CpuSampler(threading.Thread):
    """Busy cores of the whole host every ``period`` seconds while a pipeline runs: whether its builds kept the
    cores saturated (then only less CPU per build helps) or left them idle (then scheduling does)."""

    def __init__(self, t0: float, period: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.t0, self.period = t0, period
        self.series: list[list[float]] = []  # [seconds since launch, busy cores over the last period]
        self._halt = threading.Event()

    def run(self) -> None:
        cores = os.cpu_count() or 1
        prev = _cpu_ticks()
        while prev is not None and not self._halt.wait(self.period):
            cur = _cpu_ticks()
            if cur is None:
                return
            busy, total = cur[0] - prev[0], cur[1] - prev[1]
            if total > 0:
                self.series.append([round(time.monotonic() - self.t0, 1), round(cores * busy / total, 2)])
            prev = cur

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def tail(path: Path, n: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""
