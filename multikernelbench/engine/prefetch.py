"""A device lane's next worker, started while the current candidate is in steps that no clock measures.

Why: once builds are ahead of it, the one device lane of a GPU is what a run waits for (H200, 2026-12-03, 48
candidates from an empty build cache: after the last build ended, 20 candidates were still queued for the
lane, at ~2.5 s each). About 0.4 s of each is the worker's start: the fork from the zygote, the harness's
set-up and the CUDA context (0.20 s context + 0.11 s first allocation in a fresh process,
``scripts/cuda_neighbour_probe.py``), all trusted work that needs no turn on the GPU.

So while candidate N loads and runs its correctness checks, the lane starts candidate N+1's worker and has it
create its device context (``Setup.warm_device``), and, when N+1's task has no clean-reference timing yet, the
clean worker that will make it (anticheat/clock_audit.py: a worker that never loads candidate code). Only harness
code runs there: N+1's own code is loaded in its turn, after N has ended, as without prefetching. A clean
worker that turns out needless (another candidate of the task made the timing first) is ended with N+1's.

What keeps the clocks clean: N's first clock (its clean reference's or its own timing) waits until N+1's
worker has finished starting (:attr:`CandidateEvaluation.before_clock` is :meth:`Prefetch.wait`), so a context
creation never overlaps a timing. The same probe saw worker starts in other processes leave a CUDA-event
clock's median in place but raise its maximum (7 µs kernel: 0.03-0.04 ms quiet, up to 0.18 ms beside
starts); an idle context that already exists does no work on the GPU. Lanes that share a GPU
(``lanes_per_gpu`` > 1) start their workers beside each other's clocks already, so they do not prefetch.
"""

from __future__ import annotations

import threading
from typing import Any

from multikernelbench.engine.device_stage import CandidateEvaluation


class Prefetch:
    """One job whose evaluation's first worker is being started in a background thread."""

    def __init__(self, job: Any, evaluation: CandidateEvaluation, clean: bool = True) -> None:
        """``clean``: also start the task's clean worker if it has no clean timing yet (off when the candidate
        before it, of the same task, is about to make that timing)."""
        self.job, self.evaluation = job, evaluation
        self._thread = threading.Thread(target=evaluation.prepare, args=(clean,), name=f"prefetch-{evaluation.who}",
                                        daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Until the worker has started (or failed to): the current candidate's clocks start after this."""
        self._thread.join()

    def discard(self) -> None:
        """The job will not be evaluated: end its worker."""
        self.wait()
        self.evaluation.discard()
