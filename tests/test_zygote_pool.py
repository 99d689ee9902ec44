"""Zygotes kept across engine runs (engine/zygote_pool.py), which the suite's in-process runs share
(tests/_kept_zygotes.py): real zygotes, real engine runs.

What could go wrong: a run's workers forked from another run's zygote see something of that run (they must not:
the zygote holds no run's state); a zygote started from a run's thread dies with that thread (its parent-death
signal is per thread) under another run's lease; two runs waiting for one zygote's imports at once read its one
"ready" message between them and one waits forever; a dead zygote is handed out again.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.engine.zygote_pool import ZygotePool
from multikernelbench.records import Status

pytestmark = pytest.mark.slow

RELU = "activation.relu"
PRELOAD = ("multikernelbench.engine.worker_main",)

#: Leaves a mark everywhere a candidate could reach without the sandbox (its module globals, torch's, its
#: environment, a folder every worker may write), then reports its parent (the zygote) in its error message.
PLANTS = """
import os, sys, torch
torch._mkb_planted = True
os.environ["MKB_PLANTED"] = "1"
sys.modules["mkb_planted"] = sys
raise RuntimeError(f"zygote={os.getppid()} planted")
"""

#: Fails if any mark of PLANTS is there, then reports its parent the same way.
CHECKS = """
import os, sys, torch
seen = [hasattr(torch, "_mkb_planted"), "MKB_PLANTED" in os.environ, "mkb_planted" in sys.modules]
raise RuntimeError(f"zygote={os.getppid()} seen={seen}")
"""


def _config(build_root: Path) -> EngineConfig:
    """No static checks (they would stop PLANTS before it runs)."""
    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=3, skip_timing=True,
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))


def _parent(message: str) -> int:
    found = re.search(r"zygote=(\d+)", message)
    assert found, message
    return int(found.group(1))


def test_runs_share_one_zygote_and_nothing_of_each_other(suite, tmp_path):
    """Three runs in one pool: their workers are all children of one zygote, which lives on after them, and a
    candidate of the third sees nothing the first one's planted in its own process."""
    pool, suites = ZygotePool(), ZygotePool.current
    ZygotePool.install(pool)
    try:
        first = evaluate_candidates([suite[RELU]], [Candidate(task_id=RELU, source=PLANTS, label="p")],
                                    _config(tmp_path))
        honest = "import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n" \
                 "    def forward(self, x):\n        return torch.clamp_min(x, 0.0)\n"
        second = evaluate_candidates([suite[RELU]], [Candidate(task_id=RELU, source=honest, label="h")],
                                     _config(tmp_path))
        third = evaluate_candidates([suite[RELU]], [Candidate(task_id=RELU, source=CHECKS, label="c")],
                                    _config(tmp_path))
        zygotes = {entry.zygote.proc.pid for entry in pool._kept.values()}
    finally:
        ZygotePool.install(suites)
        pool.close()
    assert second[0].status == Status.CORRECT, second[0].message
    assert "planted" in first[0].message, first[0].message
    assert "seen=[False, False, False]" in third[0].message, third[0].message
    assert pool.started == 1 and zygotes == {_parent(first[0].message)} == {_parent(third[0].message)}


def test_a_zygote_outlives_the_thread_that_leased_it(tmp_path):
    """The first lease comes from a thread that then ends; the zygote (parent-death signal on the pool's own
    thread) is still alive and forks for the next lease."""
    pool = ZygotePool()
    env = {"PATH": os.defpath, "MKB_POOL_TEST": str(tmp_path)}
    try:
        leases = []
        thread = threading.Thread(target=lambda: leases.append(pool.lease(env, PRELOAD)))
        thread.start()
        thread.join(120)
        assert leases and leases[0] is not None
        leases[0].close()
        time.sleep(0.5)  # a parent-death SIGKILL is delivered at once
        again = pool.lease(env, PRELOAD)
        assert again is not None and again.alive() and pool.started == 1
        again.close()
    finally:
        pool.close()
    assert not again.alive()  # the pool's close ends it


def test_leases_at_once_share_one_start_and_a_dead_zygote_is_replaced(tmp_path):
    """Four threads lease one key while its zygote imports (one "ready" message: each must see it); then the
    zygote is killed from outside and the next lease gets a new one."""
    pool = ZygotePool()
    env = {"PATH": os.defpath, "MKB_POOL_TEST": str(tmp_path)}
    try:
        leases: list = []
        threads = [threading.Thread(target=lambda: leases.append(pool.lease(env, PRELOAD))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert len(leases) == 4 and all(lease is not None and lease.alive() for lease in leases)
        assert pool.started == 1 and len({lease.proc.pid for lease in leases}) == 1
        for lease in leases:
            lease.close()
        leases[0].proc.kill()
        leases[0].proc.wait()
        again = pool.lease(env, PRELOAD)
        assert again is not None and again.alive() and pool.started == 2
        assert again.proc.pid != leases[0].proc.pid
        again.close()
    finally:
        pool.close()


def test_other_starts_get_their_own_and_idle_ones_beyond_keep_end(tmp_path):
    """Another environment is another zygote; with ``keep=1`` the idle older one ends, one still leased does
    not. A thread with another nice gets no lease (its zygote would inherit that nice)."""
    pool = ZygotePool(keep=1)
    a = {"PATH": os.defpath, "MKB_POOL_TEST": "a"}
    b = {"PATH": os.defpath, "MKB_POOL_TEST": "b"}
    try:
        first = pool.lease(a, PRELOAD)
        held = pool.lease(b, PRELOAD)
        assert first is not None and held is not None and first.proc.pid != held.proc.pid
        first.close()  # idle, and two are kept: ended
        assert first.proc.wait(10) is not None and held.alive()
        again = pool.lease(a, PRELOAD)  # b is leased still: both stay for now
        assert again is not None and held.alive() and again.alive() and pool.started == 3
        held.close()  # b idle and the older: ended
        assert held.proc.wait(10) is not None and again.alive()
        again.close()

        niced: list = []

        def lease_niced() -> None:
            os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 1)  # this thread only
            niced.append(pool.lease(a, PRELOAD))

        thread = threading.Thread(target=lease_niced)
        thread.start()
        thread.join(60)
        assert niced == [None]
    finally:
        pool.close()
