"""engine/heap_warm.py: a CPU worker's heap is grown and touched before a timing, so that no input renewal pays for
first-touch page faults (the honest relu's candidate renewals faulted a fresh 8 MB in 41 rounds after the first
across 31 timings, the reference's in 8: the clock audit read the difference as work outside the timed call).

Real code in a real process: the worker's timing loop with its fresh-input hook, replayed in a subprocess started
with the workers' allocator settings (tests/data/heap_warm/renewal_faults.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from multikernelbench.engine import heap_warm
from multikernelbench.util.worker_env import MALLOC_DEFAULTS

SCRIPT = Path(__file__).parent / "data" / "heap_warm" / "renewal_faults.py"
#: A renewal that grew the heap by one 8 MB input touches ~2048 fresh pages; the harness's own bookkeeping ~100-200.
BURST = 1024


def _renewal_faults(mode: str, task: str) -> dict[str, list[int]]:
    env = {**os.environ, **MALLOC_DEFAULTS, "OMP_NUM_THREADS": "1"}
    got = subprocess.run([sys.executable, str(SCRIPT), mode, task], env=env, capture_output=True, text=True, timeout=300,
                         check=True)
    return json.loads(got.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("task", ["activation.relu", "optimizer"])
def test_no_renewal_pays_first_touch_faults_after_the_heap_is_warmed(task):
    """Measured before the change (same script): 2048-page bursts in the renewals of the first rounds of both
    callables, in different rounds for each (relu: rounds 0-2; the SGD-momentum exemplar's three inputs: up to round
    8); warmed, none after the first round."""
    cold, warm = _renewal_faults("cold", task), _renewal_faults("warm", task)
    print("cold", cold, "warm", warm)
    assert all(f < BURST for fs in warm.values() for f in fs[1:]), warm
    if not any(f >= BURST for fs in cold.values() for f in fs[1:]):
        # The control: unwarmed, the mechanism shows. In two full suite runs of 2026-12-06 (and once under -n 3) the
        # unwarmed relu faulted only in round 0 ({'candidate': [189, 36, 0, ...], 'eager': [1968, 0, ...]}), while
        # alone it bursts after round 0 every time: the warm side is still judged above, the control is not here.
        pytest.skip(f"the unwarmed control showed no first-touch burst after round 0 in this process: {cold}")


def test_warming_is_bounded_and_skips_what_glibc_maps_alone():
    import torch

    assert heap_warm.warm(0, 4) == 0
    assert heap_warm.warm(heap_warm.MMAP_THRESHOLD_BYTES, 4) == 0  # mapped and unmapped per tensor: nothing to warm
    assert heap_warm.warm(1 << 20, 3) == 3 << 20
    assert heap_warm.warm(30 << 20, 100) == (heap_warm.BUDGET_BYTES // (30 << 20)) * (30 << 20)
    one_mb, half = torch.empty(1 << 18), torch.empty(1 << 17)  # 1 MB and 0.5 MB of float32
    assert heap_warm.warm_for([one_mb, half, 3]) == 24 << 20  # 16 sets of 1.5 MB, in 1 MB blocks
    assert heap_warm.warm_for([torch.empty(heap_warm.MMAP_THRESHOLD_BYTES // 4)]) == 0
