"""How busy the host was while a timing ran, read by the parent from /proc (issue #40).

Why: the clock audit (anticheat/clock_audit.py) judges time the parent saw pass between a worker's requests.
On an oversubscribed host every interval stretches: a waiting task gets ``cores / runnable`` of a core, so a
systematic difference of an honest worker (its renewal runs after another callable's sample, with other caches
and a still-spinning thread pool) grows by up to that factor. An honest relu was convicted on the 2-core dev
host at load ~5 by a finding 5 % above its bound, and confirmed by a second timing under the same load. So
each timing records the load it ran under (stored on the result: ``host_load``), a finding is re-timed at a
quieter moment (:func:`wait_quieter`), and a confirming timing still made under oversubscription convicts by a
finding load can excuse only when it exceeds the bound by more than the factor and than ``LOAD_PROOF_MARGIN`` (see
anticheat/timing_judge.py; the record is anticheat/timing_records.py's, this module reads it). Oversubscribed also
counts CPU pressure (``PSI_BUSY``): the runnable count is read before and after a timing, and bursty load (another
evaluation, the other xdist worker) can leave both readings low while the timing itself was crowded.

The readings: ``/proc/pressure/cpu`` (the share of the last 10 s in which some, or all, non-idle tasks waited
for a core), ``procs_running`` of ``/proc/stat`` (runnable tasks now, the reader included) and the 1-minute
load average. None of them comes from a worker. Where the timing runs on a GPU, also the number of other processes
on that GPU (engine/gpu_neighbours.py: another kind of load the CPU readings cannot see).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from multikernelbench.anticheat.timing_records import HostLoad
from multikernelbench.engine.build_gate import runnable_threads
from multikernelbench.engine.gpu_neighbours import GpuNeighbours
from multikernelbench.util.procs import usable_cores


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def sample(gpu: GpuNeighbours | None = None) -> HostLoad:
    """The host's load now (missing readings are None: not Linux, no PSI in this kernel), with the other processes
    on ``gpu`` when one is given."""
    running = runnable_threads()
    avg = _read("/proc/loadavg").split()
    some = full = None
    for line in _read("/proc/pressure/cpu").splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        if line.startswith("some"):
            some = float(fields.get("avg10", "nan"))
        elif line.startswith("full"):
            full = float(fields.get("avg10", "nan"))
    others = gpu.count() if gpu is not None else None
    return HostLoad(usable_cores(), running, float(avg[0]) if avg else None, some, full, others)


def worst(*loads: HostLoad | None) -> HostLoad | None:
    """The busiest of several readings (before and after a timing), with the most other processes on the GPU
    that any of them saw."""
    known = [x for x in loads if x is not None]
    if not known:
        return None
    gpu = max((x.gpu_others for x in known if x.gpu_others is not None), default=None)
    return replace(max(known, key=lambda x: x.factor), gpu_others=gpu)


def wait_quieter(max_wait_s: float, target: float = 1.0, *, read: Callable[[], HostLoad] = sample,
                 sleep: Callable[[float], None] = time.sleep, first_s: float = 0.5) -> HostLoad:
    """Wait, doubling the pause from ``first_s``, until the host's factor is at most ``target``, its CPU pressure
    under :data:`~multikernelbench.anticheat.timing_records.PSI_BUSY` and no other process is on the GPU, or
    ``max_wait_s`` is spent; the last reading. Bounded: a host that never quietens costs ``max_wait_s`` once (its
    confirming timing then confirms no finding that load can excuse: anticheat/timing_judge.py)."""
    load = read()
    waited, pause = 0.0, first_s
    while (load.factor > target or load.pressured or load.gpu_shared) and waited + pause <= max_wait_s:
        sleep(pause)
        waited += pause
        pause *= 2
        load = read()
    return load
