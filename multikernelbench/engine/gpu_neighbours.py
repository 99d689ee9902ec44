"""Other processes on the GPU a timing ran on, counted by the parent through NVML (issue #40).

Why: the device lanes make every clock exclusive among *this run's* workers (engine/gpu_turns.py), but a GPU can
hold contexts of processes the run does not know: another evaluation, a training job, another tenant. The GPU
time-slices between contexts, so while one of them launches kernels every renewal of the timed worker can wait
a whole time slice, and the clock audit's "unexplained time around the samples" grows with no candidate code
behind it. Seen on an H100 on 2026-12-05 (`benchmarks/shipped_sets_h200/2026-12-05d_h100/`): the shipped CUDA set
ran beside the Triton and Pallas sets on one GPU and the honest ``optimizer.sgd_momentum`` was convicted, its
renewals ~17 ms per call against the clean worker's 9.4 ms, recalibrated right before and after at 9.5 ms (the
neighbours' kernels came in bursts). The recorded host load was quiet (factor 1.0): the CPU readings of
engine/host_load.py cannot see this.

So each timing also records how many processes outside this run's process tree held a compute context on its GPU
(``HostLoad.gpu_others``), and anticheat/timing_judge.py turns load-sensitive clock findings made beside them into
"inconclusive" (no speedup), never a conviction; the confirming timing first waits for them to leave.

Who is "ours": this process and its descendants (the zygotes, the workers, their children). NVML reports pids
in the driver's pid namespace: where this process is among them the namespaces agree and the rest is compared
pid by pid; where it is not (a container), ours are counted by their open ``/dev/nvidia<minor>`` and the
others are the difference. A candidate that starts a process outside the tree (double fork, setsid) makes its
own findings inconclusive: it earns no speedup either way.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from multikernelbench.util.procs import parent_and_session

#: Reads the pids of the compute processes on one GPU (NVML's view), and the GPU's device-file minor number.
PidReader = Callable[[], list[int]]


def _family(root: int) -> set[int]:
    """``root`` and its descendants, from one scan of /proc."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {root}
    for e in entries:
        if e.isdigit() and (st := parent_and_session(e)) is not None:
            children.setdefault(st[0], []).append(int(e))
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(children.get(pid, ()))
    return out


def _descends(pid: int, root: int, depth: int = 64) -> bool:
    """Whether ``pid`` is ``root`` or below it, by its parents' chain (a few /proc reads, not a scan of every
    process: each timing reads this twice, inside its clock's turn; issue #44). The same answer as ``pid in
    _family(root)``: a process that is gone, or whose chain leaves ``root``'s tree, is not ours."""
    for _ in range(depth):
        if pid == root:
            return True
        st = parent_and_session(pid) if pid > 1 else None
        if st is None:
            return False
        pid = st[0]
    return False


def _holds(pid: int, device_file: str) -> bool | None:
    """Whether ``pid`` has ``device_file`` open; None when its descriptors cannot be read (another uid)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    except OSError:
        return None
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == device_file:
                return True
        except OSError:
            continue
    return False


def count_others(nvml_pids: list[int], device_file: str | None, me: int | None = None) -> int | None:
    """Compute processes on the GPU that are not ``me`` (this process) or its descendants; None when that cannot
    be told (the namespaces differ and a descendant's descriptors cannot be read). ``device_file``: the GPU's
    ``/dev/nvidia<minor>``, which every process with a context on it holds open."""
    me = os.getpid() if me is None else me
    if me in nvml_pids:  # one pid namespace: compare pid by pid
        return sum(1 for p in set(nvml_pids) if not _descends(p, me))
    if device_file is None:
        return None
    holding = [_holds(p, device_file) for p in _family(me)]
    if any(h is None for h in holding):
        return None
    return max(0, len(set(nvml_pids)) - sum(1 for h in holding if h))


class GpuNeighbours:
    """Counts the other processes on one GPU (module docstring). NVML is opened on first use; where it is
    missing (no ``nvidia-ml-py``, no driver) :meth:`count` is None and :attr:`error` says why."""

    def __init__(self, index: int, read: PidReader | None = None, minor: int | None = None) -> None:
        self.index = index
        self._read, self._minor = read, minor
        self.error = ""

    def _open(self) -> PidReader | None:
        if self._read is not None or self.error:
            return self._read
        try:
            import pynvml  # nvidia-ml-py: NVIDIA's own binding (the device image has it; pyproject's gpu extra)
            import torch

            pynvml.nvmlInit()
            uuid = str(getattr(torch.cuda.get_device_properties(self.index), "uuid", "") or "")
            handle = (pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
                      if uuid else pynvml.nvmlDeviceGetHandleByIndex(self.index))
            self._minor = int(pynvml.nvmlDeviceGetMinorNumber(handle))
            self._read = lambda: [int(p.pid) for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)]
        except Exception as exc:  # noqa: BLE001 - no NVML here: the count is unknown, never a guess
            self.error = f"NVML unavailable: {exc!r}"[:200]
        return self._read

    def count(self) -> int | None:
        read = self._open()
        if read is None:
            return None
        try:
            return count_others(read(), None if self._minor is None else f"/dev/nvidia{self._minor}")
        except Exception as exc:  # noqa: BLE001 - a failed reading is an unknown count
            self.error = f"NVML reading failed: {exc!r}"[:200]
            return None


def blame_for_oom(message: str, others: int | None) -> str | None:
    """The harness's message for a device out-of-memory met while ``others`` processes outside this run held
    contexts on the GPU, or None when the candidate answers for it (no neighbour, or their count unknown).

    Why: seen on an H100 on 2026-12-05 (`benchmarks/shipped_sets_h200/2026-12-05f_h100/`), the honest CUDA
    ``rms_norm`` ran out of memory while the Triton and Pallas sets' processes held ~60 GiB of the card; scored
    ``runtime_error`` it counted against the model. Memory the run does not own is the harness's problem: the
    result is a harness error, which ``mkb eval`` evaluates again on its next run and ``mkb report`` lists
    apart. Nothing to gain for a cheat: a candidate that detaches a process of its own to hold GPU memory (the
    count's blind spot, module docstring) turns its own out-of-memory into a harness error, which still counts
    as a failure in every metric and is only evaluated again. An out-of-memory with no neighbour stays
    ``runtime_error``."""
    if not others:
        return None
    return (f"{message} (not the candidate's failure: {others} other process(es) outside this run held a context "
            f"on the GPU at the time; evaluate it again on a GPU of its own)")
