"""How many builds run at once, from the CPU that builds are measured to use (not a fixed share of the cores).

A CUDA build is not one compiler: nvcc's host and device halves run side by side, g++ makes ``main.cpp`` beside
them, and some phases use one core only. How many cores one build keeps busy on average (its CPU seconds over
its wall seconds) depends on the build recipe (light headers, PCH, split nvcc) and the host; a fixed guess
(half the cores for CUDA) leaves cores idle or oversubscribes them. So:

* every build's CPU seconds (the compile worker's process and all the compilers it waited for, read from
  ``/proc/<pid>/stat`` by the trusted parent before the worker is closed) and wall seconds are recorded, with
  how crowded the host was meanwhile: the time-averaged number of runnable threads (``procs_running`` in
  ``/proc/stat``, sampled while builds run) over the cores, at least 1;
* a build's cores are its CPU over its wall seconds **times that crowding**: what it would have kept busy
  with a core for every runnable thread. Without the factor the measure follows the limit it sets: 16
  builds on 16 cores each get one core, measure 1.0 and keep the limit at 16, and each took twice as long as
  alone (H200, 2026-12-03: build p50 38-41 s in the pipeline against 15.6 s five at a time, same CPU);
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
import time
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
    #: Runnable threads per core while it built, at least 1 (1: not crowded, or not measured).
    crowding: float = 1.0

    @property
    def cores(self) -> float:
        """Cores it would have kept busy uncrowded (module docstring)."""
        return self.cpu_s / self.wall_s * max(1.0, self.crowding)


def runnable_threads() -> int | None:
    """Threads runnable on this host right now (``procs_running`` of /proc/stat, the reader itself included);
    None where there is no /proc/stat."""
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"procs_running "):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


class RunQueue:
    """The time integral of runnable threads (less the sampler's own), sampled every ``every_s`` while
    :meth:`active` says so; a build takes a :meth:`mark` as it starts and reads :meth:`mean_since` as it ends."""

    def __init__(self, active, every_s: float = 0.2) -> None:
        self.active, self.every_s = active, every_s
        self._lock = threading.Lock()
        self._area = 0.0
        self._last: tuple[float, float] | None = None  # (time, runnable) of the latest sample
        self._thread: threading.Thread | None = None

    def _sample(self) -> bool:
        n = runnable_threads()
        if n is None:
            return False
        now = time.monotonic()
        with self._lock:
            if self._last is not None:
                self._area += (now - self._last[0]) * self._last[1]
            self._last = (now, max(0.0, n - 1.0))
        return True

    def _run(self) -> None:
        while True:
            with self._lock:  # decided under the lock ensure_running takes: never a build left unsampled
                if not self.active():
                    self._thread = None
                    return
            if not self._sample():
                with self._lock:
                    self._thread = None
                return
            time.sleep(self.every_s)

    def ensure_running(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._last = None  # no area over a time nobody sampled
            self._thread = threading.Thread(target=self._run, name="mkb-runqueue", daemon=True)
            self._thread.start()

    def mark(self) -> tuple[float, float]:
        with self._lock:
            return time.monotonic(), self._area

    def mean_since(self, mark: tuple[float, float]) -> float | None:
        """Mean runnable threads since ``mark`` (None before a second sample)."""
        self._sample()
        with self._lock:
            t0, area0 = mark
            span = (self._last[0] if self._last else t0) - t0
            return (self._area - area0) / span if span > 0.5 else None


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
        return [BuildSample(float(r["cpu_s"]), float(r["wall_s"]), float(r.get("crowding", 1.0))) for r in rows]
    except (OSError, ValueError, TypeError, KeyError):
        return []


def record(folder: Path, sample: BuildSample) -> None:
    """Append one build to the profile of ``folder`` (the trusted parent only; atomic replace under a lock)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / f"{PROFILE}.lock"):
        rows = [{"cpu_s": s.cpu_s, "wall_s": s.wall_s, "crowding": s.crowding} for s in read_profile(folder)]
        rows = (rows + [{"cpu_s": round(sample.cpu_s, 3), "wall_s": round(sample.wall_s, 3),
                         "crowding": round(sample.crowding, 3)}])[-KEEP:]
        tmp = folder / f".{PROFILE}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, folder / PROFILE)


def cores_per_build(samples: list[BuildSample]) -> float | None:
    """Median over builds of the cores each kept busy, crowding taken out (:attr:`BuildSample.cores`; None
    without a real build among them)."""
    ratios = [s.cores for s in samples if s.wall_s >= MIN_WALL_S and s.cpu_s > 0]
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
        self.queue = RunQueue(lambda: self.running > 0)

    def limit(self) -> int:
        per_build = cores_per_build(self.samples) or cores_per_build(self.earlier) or self.estimate
        return workers_for(self.cores, per_build)

    def admit(self) -> int:
        """Wait for a slot and take it; returns the build's rank: how many builds were running as it entered
        (the build stage nices a build by it, so that earlier builds finish first: see BuildStage)."""
        with self.cond:
            self.cond.wait_for(lambda: self.running < self.limit())
            rank = self.running
            self.running += 1
        self.queue.ensure_running()
        return rank

    def release(self) -> None:
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def __enter__(self) -> BuildGate:
        self.admit()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def crowding(self, mark: tuple[float, float]) -> float:
        """Runnable threads per core since ``mark`` (a :meth:`RunQueue.mark` taken as the build started), at
        least 1; 1 where it cannot be told."""
        mean = self.queue.mean_since(mark)
        return max(1.0, mean / self.cores) if mean is not None else 1.0

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
