"""Where a full test run's CPU goes, counted in every process a test started, reaped or not.

``--suite-profile`` (tests/_suite_profile.py) sees a test's own CPU and its children's once reaped; the suite's
compilers, zygotes, kept workers and daemons are reaped late or never by the test that started them. This samples
/proc every half second while a command runs, keeps each process's last CPU reading with its parent and command
line, then gives every process to the test its xdist worker was running when the process first showed up (the
profile's rows carry the worker's pid) when the process started (its start time in /proc, not when the sampler first
saw it: a child a test leaves running is seen during the next one). A process that lives under half a second may
be missed, and each loses up to half a second at its end: the totals are a floor.

    python scripts/suite_cpu.py run /tmp/procs.jsonl -- python -m pytest -q -n 2 --dist loadfile \\
        --suite-profile /tmp/suite.jsonl
    python scripts/suite_cpu.py report /tmp/procs.jsonl /tmp/suite.jsonl
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
KINDS = {"cc1plus": "c++", "cc1": "c++", "as": "c++", "ld": "c++", "collect2": "c++", "cicc": "nvcc",
         "ptxas": "nvcc", "cudafe++": "nvcc", "fatbinary": "nvcc", "nvcc": "nvcc"}


def _boot_time() -> float:
    """The epoch time of the boot: the wall clock less the boot clock, from the closest of a few paired readings
    (a thread switch between the two reads of one pair would shift every start time by it)."""
    pairs = []
    for _ in range(5):
        t0 = time.time()
        up = time.clock_gettime(time.CLOCK_BOOTTIME)
        pairs.append((time.time() - t0, t0 - up))
    return min(pairs)[1]


def _read(pid: str) -> tuple[str, int, str, float] | None:
    """(comm, ppid, start ticks since boot, CPU seconds) of one process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2:].split()
    return text[text.index("(") + 1:text.rindex(")")], int(rest[1]), rest[19], (int(rest[11]) + int(rest[12])) / TICK


def sample(stop: threading.Event, interval: float = 0.5) -> list[dict]:
    """Every process seen until ``stop``: its last CPU reading, first and last sighting."""
    seen: dict[tuple[str, str], dict] = {}
    boot = _boot_time()
    while not stop.is_set():
        now = time.time()
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            got = _read(pid)
            if got is None:
                continue
            comm, ppid, started, cpu = got
            row = seen.get((pid, started))
            if row is None:
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:300].decode(errors="replace")
                except OSError:
                    cmd = ""
                row = seen[(pid, started)] = {"pid": int(pid), "ppid": ppid, "comm": comm, "cmd": cmd, "first": now,
                                              "started": round(boot + (int(started) + 0.5) / TICK, 3)}
            row["cpu"], row["last"] = cpu, now
        stop.wait(interval)
    return list(seen.values())


def run(out: Path, command: list[str]) -> int:
    stop = threading.Event()
    rows: list[dict] = []
    sampler = threading.Thread(target=lambda: rows.extend(sample(stop)), daemon=True)
    sampler.start()
    try:
        code = subprocess.call(command)
    finally:
        stop.set()
        sampler.join()
        out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return code


def kind(proc: dict) -> str:
    if proc["comm"] in KINDS:
        return KINDS[proc["comm"]]
    for mark, name in (("zygote_main", "engine workers"), ("worker_main", "engine workers"),
                       ("cli.main", "mkb"), ("while True", "busy loops")):
        if mark in proc["cmd"]:
            return name
    return "other"


def attribute(procs: list[dict], profile: list[dict]) -> tuple[Counter, dict[str, Counter]]:
    """CPU per test file (the worker's own, from the profile, plus every process it started) and per kind."""
    by_pid: dict[int, list[dict]] = defaultdict(list)
    for p in procs:
        by_pid[p["pid"]].append(p)
    workers = {r["pid"]: r["worker"] for r in profile if "pid" in r}
    runs: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for r in profile:
        runs[r["worker"]].append((r["start"], r["start"] + r["wall_s"], r["test"].split("::", 1)[0]))
    for spans in runs.values():
        spans.sort()
    starts = {worker: [s for s, _, _ in spans] for worker, spans in runs.items()}

    def parent(p: dict) -> dict | None:
        older = [q for q in by_pid.get(p["ppid"], []) if q["started"] <= p["started"] + 0.05]
        return max(older, key=lambda q: q["started"], default=None)

    def worker_of(p: dict) -> str | None:
        q: dict | None = p
        for _ in range(64):
            if q is None:
                return None
            if q["pid"] in workers:
                return workers[q["pid"]]
            q = parent(q)
        return None

    per_file: Counter = Counter()
    kinds: dict[str, Counter] = defaultdict(Counter)
    for r in profile:
        per_file[r["test"].split("::", 1)[0]] += r["cpu_s"]  # the worker's own CPU
    for p in procs:
        if p["pid"] in workers:
            continue
        worker = worker_of(p)
        if worker is None:
            continue
        spans = runs[worker]
        # A start time is a whole clock tick (10 ms) placed mid-tick: a process started in a test's first
        # half-tick may read as just before it, so the search allows half a tick.
        i = bisect.bisect_right(starts[worker], p["started"] + 0.5 / TICK) - 1
        name = spans[i][2] if i >= 0 and p["started"] <= spans[i][1] + 0.05 else "(between tests)"
        per_file[name] += p["cpu"]
        kinds[name][kind(p)] += p["cpu"]
    return per_file, kinds


def report(procs_path: Path, profile_path: Path, top: int) -> None:
    procs = [json.loads(x) for x in procs_path.read_text().splitlines() if x.strip()]
    profile = [json.loads(x) for x in profile_path.read_text().splitlines() if x.strip()]
    t0 = min(r["start"] for r in profile)
    t1 = max(r["start"] + r["wall_s"] for r in profile)
    during = [p for p in procs if p["last"] >= t0 and p["started"] <= t1]
    per_file, kinds = attribute(procs, profile)
    total = sum(p["cpu"] for p in during)
    mine = sum(per_file.values())
    print(f"tests' wall {t1 - t0:.0f} s; CPU seen during it {total / 60:.1f} min ({total / (t1 - t0):.2f} cores "
          f"on average), of which given to test files {mine / 60:.1f} min")
    by_kind: Counter = Counter()
    for p in during:
        by_kind[kind(p)] += p["cpu"]
    print("by kind: " + ", ".join(f"{k} {v:.0f} s" for k, v in by_kind.most_common()))
    print(f"{'CPU s':>7}  {'wall s':>7}  file (kinds)")
    wall: Counter = Counter()
    for r in profile:
        wall[r["test"].split("::", 1)[0]] += r["wall_s"]
    for name, cpu in per_file.most_common(top):
        parts = ", ".join(f"{k} {v:.0f}" for k, v in kinds[name].most_common(3))
        print(f"{cpu:7.1f}  {wall[name]:7.1f}  {name} ({parts})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a command, sampling every process's CPU into OUT")
    r.add_argument("out", type=Path)
    r.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("report", help="CPU per test file from a sample and a --suite-profile file")
    p.add_argument("procs", type=Path)
    p.add_argument("profile", type=Path)
    p.add_argument("--top", type=int, default=40)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        if not command:
            ap.error("run needs a command after --")
        return run(args.out, command)
    report(args.procs, args.profile, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
