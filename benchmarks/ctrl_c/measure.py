"""Seconds from SIGINT to exit of a real ``mkb eval`` (CPU backend), mid-build and mid-timing, with its exit
status, whether stderr had a traceback, and the processes it left running.

Usage: python benchmarks/ctrl_c/measure.py [--repeat N]
(runs ``python -m multikernelbench.cli.main`` as resolved by the current interpreter and PYTHONPATH, so an
older checkout can be measured with PYTHONPATH=<its folder>). The mid-timing case builds two shipped
solutions first (cached in /tmp/mkb-ctrl-c-builds after the first run).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILDS = Path(tempfile.gettempdir()) / "mkb-ctrl-c-builds"


def _ppid_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                f = Path(f"/proc/{e}/stat").read_bytes().rsplit(b")", 1)[1].split()
                kids.setdefault(int(f[1]), []).append(int(e))
            except (OSError, IndexError):
                pass
    return kids


def _tree(pid: int) -> list[int]:
    kids, out, todo = _ppid_map(), [], [pid]
    while todo:
        k = kids.get(todo.pop(), [])
        out += k
        todo += k
    return out


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _sid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def _live_in(sids: set[int]) -> list[str]:
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                f = Path(f"/proc/{e}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(f[3]) in sids and f[0] != b"Z":
                out.append(f"{e} {_comm(int(e))}")
    return out


def once(case: str, tmp: Path) -> str:
    sols = tmp / "sols"
    sols.mkdir()
    if case == "build":
        src = (ROOT / "solutions/cpu/activation.relu.py").read_text()
        (sols / "activation.relu.py").write_text(src.replace("#include <cmath>", f"#include <cmath>\n// {uuid.uuid4()}"))
    else:
        for t in ("activation.relu", "activation.sigmoid"):
            (sols / f"{t}.py").write_text((ROOT / f"solutions/cpu/{t}.py").read_text())
    trace = tmp / "trace.log"
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "eval", "--backend", "cpu", "--solutions", str(sols),
           "--db", str(tmp / "r.sqlite"), "--build-root", str(BUILDS), "--allow-code-execution", "--no-progress",
           "--compile-workers", "1", "--trace", str(trace), "--timing-budget", "3"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def ready() -> bool:
        if case == "build":
            return any(_comm(p) in ("cc1plus", "ninja") for p in _tree(proc.pid))
        return trace.exists() and "time start" in trace.read_text()

    t_end = time.time() + 600
    while not ready() and proc.poll() is None and time.time() < t_end:
        time.sleep(0.05)
    if proc.poll() is not None:
        return f"{case}: ended before the signal (rc {proc.returncode})"
    sids = {s for s in map(_sid, [proc.pid, *_tree(proc.pid)]) if s is not None}
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    dt = time.monotonic() - t0
    time.sleep(0.3)
    left = _live_in(sids)
    for s in sids:
        try:
            os.killpg(s, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return (f"{case}: exit {proc.returncode} after {dt:.2f} s; traceback: {'Traceback' in err}; "
            f"resume hint: {'Resume:' in err}; left running: {left or 'none'}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for case in ("build", "timing"):
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as d:
                print(once(case, Path(d)), flush=True)


if __name__ == "__main__":
    main()
