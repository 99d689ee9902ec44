"""How many builds run at once, from the CPU that builds are measured to use (not a fixed share of the cores).

A CUDA build is not one compiler: nvcc's host and device halves run side by side, g++ makes ``main.cpp`` beside
them, and some phases use one core only. How many cores one build keeps busy on average (its CPU seconds over
its wall seconds) depends on the build recipe (light headers, PCH, split nvcc) and the host; a fixed guess
(half the cores for CUDA) leaves cores idle or oversubscribes them. So:

* every build's CPU seconds (the compile worker's process and all the compilers it waited for, read from
  ``/proc/<pid>/stat`` by the trusted parent before the worker is closed) and wall seconds are recorded;
* :class:`BuildGate` lets ``cores / (cores one build keeps busy)`` builds run at once, recomputed as builds
  finish: from this run's builds, else from earlier runs on this build root (``_build_profile.json``,
  written by the parent only), else from the backend's estimate (``Backend.build_cores_estimate``, 2 for
  CUDA, 1 otherwise);
* the runner's build pool is as large as the backend says (``default_compile_workers``); the gate holds back
  the builds above the current limit. An explicit ``--compile-workers`` turns the gate off.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
from dataclasses import dataclass
from pathlib import Path

from multikernelbench.util.filelock import file_lock

PROFILE = "_build_profile.json"
KEEP = 64  # samples kept per build root (recent builds describe the current recipe best)
MIN_WALL_S = 1.0  # a cache hit or an instant failure says nothing about a build's CPU use


@dataclass(frozen=True)
class BuildSample:
    cpu_s: float
    wall_s: float


def process_cpu_seconds(pid: int) -> float | None:
    """CPU seconds of ``pid`` and of every child it has waited for (utime + stime + cutime + cstime): for a
    compile worker, the loader, ninja and every compiler ninja ran. None when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # fields 14-17 of stat(5), after "pid (comm)"
        return ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def read_profile(folder: Path) -> list[BuildSample]:
    try:
        rows = json.loads((Path(folder) / PROFILE).read_text())
        return [BuildSample(float(r["cpu_s"]), float(r["wall_s"])) for r in rows]
    except (OSError, ValueError, TypeError, KeyError):
        return []


def record(folder: Path, sample: BuildSample) -> None:
    """Append one build to the profile of ``folder`` (the trusted parent only; atomic replace under a lock)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / f"{PROFILE}.lock"):
        rows = [{"cpu_s": s.cpu_s, "wall_s": s.wall_s} for s in read_profile(folder)]
        rows = (rows + [{"cpu_s": round(sample.cpu_s, 3), "wall_s": round(sample.wall_s, 3)}])[-KEEP:]
        tmp = folder / f".{PROFILE}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, folder / PROFILE)


def cores_per_build(samples: list[BuildSample]) -> float | None:
    """Median over builds of CPU seconds / wall seconds (None without a real build among them)."""
    ratios = [s.cpu_s / s.wall_s for s in samples if s.wall_s >= MIN_WALL_S and s.cpu_s > 0]
    return statistics.median(ratios) if ratios else None


def workers_for(cores: int, per_build: float) -> int:
    """Builds at once so that together they keep ``cores`` busy: ``cores / per_build``, at least 1."""
    return max(1, min(cores, round(cores / max(per_build, 0.25))))


class BuildGate:
    """At most :meth:`limit` builds at once; the limit follows the measured CPU use (module docstring)."""

    def __init__(self, cores: int, estimate: float, profile_dir: Path | None) -> None:
        self.cores, self.estimate, self.profile_dir = cores, estimate, profile_dir
        self.earlier = read_profile(profile_dir) if profile_dir else []
        self.samples: list[BuildSample] = []
        self.running = 0
        self.cond = threading.Condition()

    def limit(self) -> int:
        per_build = cores_per_build(self.samples) or cores_per_build(self.earlier) or self.estimate
        return workers_for(self.cores, per_build)

    def __enter__(self) -> "BuildGate":
        with self.cond:
            self.cond.wait_for(lambda: self.running < self.limit())
            self.running += 1
        return self

    def __exit__(self, *exc) -> None:
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def add(self, sample: BuildSample) -> None:
        """A finished build: into this run's samples (the limit follows at once) and the build root's profile."""
        if sample.wall_s < MIN_WALL_S:
            return
        with self.cond:
            self.samples.append(sample)
            self.cond.notify_all()
        if self.profile_dir is not None:
            try:
                record(self.profile_dir, sample)
            except OSError:
                pass  # a read-only build root still builds; the next run starts from the estimate
