"""How many device lanes share each GPU when the user does not say (``lanes_per_gpu = 0``).

Why these bounds: lanes sharing a GPU take its turns (engine/gpu_turns.py), checks side by side and clocks one
at a time, so a GPU is kept timing while the other lanes start workers, load and check. The gain ends where
the clocks alone fill the GPU: with a device stage of ~2 s, a part of it timing (H200, issue #44), a few lanes
do. More only cost memory and cores:

* **GPU memory.** Each lane holds a worker (its CUDA context, the task's inputs, weights and outputs, the
  candidate's own workspace) and the parent's expected outputs for it; :data:`LANE_GPU_MEMORY_GB` is the room
  one lane is given, out of the memory free on the GPU with the least free when the run starts (minus
  :data:`GPU_MEMORY_RESERVE`, left for whatever else runs there).
* **CPU cores.** A lane's parent thread and its worker drive the GPU and compare outputs; builds want the rest.
  :data:`LANE_CORES` usable cores per lane, over all GPUs.
* **A cap** of :data:`MAX_AUTO_LANES`: past the point where the clocks fill the GPU, lanes only wait. Measured:
  eight lanes made 2,106-2,272 cached candidates/hour against four's 2,384-2,457 on one H100 (their checks and
  loads took twice as long, eight processes time-slicing the GPU) and ran an honest candidate out of memory
  (benchmarks/throughput/README.md, 2026-12-07 third session).

The smallest of the three wins, never below 1. CPU backends are not concerned: their lanes are
``device_workers``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: GPU memory one lane is given (the workers' default host address-space cap is the same 16 GB).
LANE_GPU_MEMORY_GB = 16.0
#: Share of the free GPU memory the lanes may plan for.
GPU_MEMORY_RESERVE = 0.1
#: Usable CPU cores per lane.
LANE_CORES = 2.0
#: Never more lanes per GPU than this when chosen automatically.
MAX_AUTO_LANES = 4


@dataclass(frozen=True)
class LaneChoice:
    """The lanes per GPU and what chose them (written to the run's trace)."""

    per_gpu: int
    free_gb: float | None  # the least free memory over the run's GPUs; None: could not be read
    cores: int
    by_memory: int | None
    by_cores: int

    def label(self) -> str:
        mem = f"{self.free_gb:.1f} GB free -> {self.by_memory}" if self.free_gb is not None else "memory unknown"
        return (f"{self.per_gpu} lanes per GPU (auto: {mem}, {self.cores} cores -> {self.by_cores}, "
                f"cap {MAX_AUTO_LANES})")


def choose(free_bytes: list[int | None], cores: int) -> LaneChoice:
    """Lanes per GPU for GPUs with ``free_bytes`` free each (None: unknown) and ``cores`` usable cores."""
    n_gpus = max(1, len(free_bytes))
    known = [b for b in free_bytes if b is not None]
    free_gb = min(known) / 1e9 if known and len(known) == len(free_bytes) else None
    by_memory = int(free_gb * (1 - GPU_MEMORY_RESERVE) // LANE_GPU_MEMORY_GB) if free_gb is not None else None
    by_cores = int(cores // (LANE_CORES * n_gpus))
    # Memory unknown: one lane, as before lanes were counted (nothing says that more fit).
    bound = by_memory if by_memory is not None else 1
    per_gpu = max(1, min(bound, by_cores, MAX_AUTO_LANES))
    return LaneChoice(per_gpu, free_gb, cores, by_memory, by_cores)


def free_memory(gpus: list[int]) -> list[int | None]:
    """Free bytes on each GPU (torch.cuda.mem_get_info; the parent's reference service uses these GPUs'
    contexts anyway); None where it cannot be read."""
    import torch

    out: list[int | None] = []
    for g in gpus:
        try:
            out.append(int(torch.cuda.mem_get_info(g)[0]))
        except Exception:  # noqa: BLE001 - an unreadable GPU gets one lane (choose())
            out.append(None)
    return out


def measure(gpus: list[int]) -> LaneChoice:
    """:func:`choose` from this machine's GPUs and usable cores."""
    from multikernelbench.util.procs import usable_cores

    return choose(free_memory(gpus), usable_cores())
