"""Two runs of one build root with workers of different uids (issue #41, ``drop_root``).

Each worker's start gives its writable folders to the uid it runs as (engine/worker_uid.py). When a run with
``drop_root`` on (workers as ``nobody``) and a run with it off (capability-less root workers) evaluated the same
code at the same time, the second run's worker start changed the candidate's build folder to root while the
first run's worker was still writing in it: torch's build baton (``<build>/mkb_cpu_*/lock``), made by that
worker, could no longer be removed (EACCES; seen in tests/test_anticheat_cpu.py beside tests that use the same
shipped kernel's folder with ``drop_root`` off). The candidate here does what the baton does (a file made, then
removed, in a folder of its own under its build folder) once the owner of the build folder has changed, or after
``HOLD_S`` when it has not. Pure Python: no C++ build, so the test takes seconds, not a build's minute.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.kernel_sandbox import support
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import Status

pytestmark = [pytest.mark.skipif(not support().complete, reason="this kernel lacks Landlock or seccomp"),
              pytest.mark.skipif(os.geteuid() != 0, reason="the harness is not root here: one uid for all workers")]

#: How long the first run's worker waits for its folder to change owner (the second run's worker start comes
#: within a few seconds on a loaded 2-core host; waiting longer only lengthens the passing case).
HOLD_S = 25.0

CANDIDATE = '''
import os, time
import torch
import torch.nn as nn

_build = os.environ["TORCH_EXTENSIONS_DIR"]
_own = os.path.join(_build, "own")
os.makedirs(_own, exist_ok=True)
_seen = os.path.join(_own, "seen")
if not os.path.exists(_seen):  # the compile worker: the first import
    open(_seen, "w").close()
elif not os.path.exists(os.path.join(_own, "held")):  # the first device worker's import
    open(os.path.join(_own, "held"), "w").close()
    _uid = os.stat(_build).st_uid
    _end = time.monotonic() + {hold}
    while os.stat(_build).st_uid == _uid and time.monotonic() < _end:
        time.sleep(0.05)
    _baton = os.path.join(_own, "lock")  # what torch's FileBaton does in its folder
    os.close(os.open(_baton, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    os.remove(_baton)

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


def _config(build_root: Path, drop: bool):
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.config import EngineConfig

    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=7, skip_timing=True,
                        compile_workers=1, run_timeout_s=120.0, drop_root=drop, zygote=False,
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))


@pytest.mark.parametrize("first_drop", [True, False], ids=["nobody-then-root", "root-then-nobody"])
def test_a_worker_start_of_another_uid_waits_for_the_live_workers_of_its_folder(suite, tmp_path, first_drop):
    relu = suite["activation.relu"]
    cand = Candidate(task_id=relu.id, source=CANDIDATE.format(hold=HOLD_S), label="baton")
    results: dict[str, object] = {}

    def first() -> None:
        results["first"] = evaluate_candidates([relu], [cand], _config(tmp_path, first_drop))[0]

    thread = threading.Thread(target=first)
    thread.start()
    held = None
    end = time.monotonic() + 300
    while held is None and thread.is_alive() and time.monotonic() < end:
        held = next((tmp_path / "cpu").glob("*/own/held"), None) if (tmp_path / "cpu").is_dir() else None
        time.sleep(0.05)
    assert held is not None, results
    # The first run's device worker is between "baton made" and "baton removed": the second run of the other
    # setting evaluates the same code (its build is cached, its device worker starts at once).
    (second,) = evaluate_candidates([relu], [cand], _config(tmp_path, not first_drop))
    thread.join(timeout=300)
    first_result = results["first"]
    assert first_result.status == Status.CORRECT, (first_result.status, first_result.message[-1500:])
    assert second.status == Status.CORRECT, (second.status, second.message[-1500:])
    runs_as = 0 if first_drop else 65534  # the second run's uid: its workers ended last
    assert held.parent.parent.stat().st_uid == runs_as


def test_the_hold_changes_the_owner_and_its_last_holder_removes_the_lock(tmp_path):
    """Two holds of one uid share the folder (neither waits); the folder is the uid's while held; the lock file,
    outside the build root, is gone once the last holder has let go."""
    from multikernelbench.engine.worker_uid import FolderHold, lock_dir

    folder = tmp_path / "cpu" / "0123456789abcdef0123"
    folder.mkdir(parents=True)
    lock = lock_dir() / (hashlib.sha256(os.path.realpath(folder).encode()).hexdigest()[:32] + ".lock")
    first, second = FolderHold(), FolderHold()
    first.take([str(folder)], 65534, 65534, wait_s=5.0)
    t0 = time.monotonic()
    second.take([str(folder)], 65534, 65534, wait_s=5.0)
    assert time.monotonic() - t0 < 2.0  # one uid: no waiting
    assert folder.stat().st_uid == 65534
    assert lock.exists() and list((tmp_path / "cpu").iterdir()) == [folder]  # nothing beside the folder
    first.release()
    assert lock.exists()  # still held by the second
    third = FolderHold()
    t0 = time.monotonic()
    third.take([str(folder)], 0, 0, wait_s=1.0)  # another uid: waits for the second, then goes ahead (bounded)
    assert time.monotonic() - t0 >= 1.0 and folder.stat().st_uid == 0
    second.release()
    third.release()
    assert not lock.exists()
