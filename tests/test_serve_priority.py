"""The HTTP front below the evaluations on a shared core (``mkb serve --http-nice``, serve/priority.py), read from
/proc of the real service: its event loop's thread is niced, its lanes' threads and the workers they have forked
are not, and with autogroup scheduling the service's own session is niced while the workers' are not.

Why it can go wrong: Linux nice is per thread and inherited by what a thread starts, so a front niced before the
lanes' threads started, or a zygote started from the front's thread, would hand its nice to every evaluation.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._serve_run import free_port
from tests.test_serve_restart import TOKEN, Server

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402

pytestmark = pytest.mark.slow

RELU = "activation.relu"
NICE = 7
SLEEPER = ("import time\nimport torch\nimport torch.nn as nn\ntime.sleep(60)\n"
           "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n")


class NicedServer(Server):
    def start(self) -> None:
        env = dict(os.environ, MKB_SERVE_TOKEN=TOKEN, MKB_ALLOW_CODE_EXECUTION="1")
        cmd = [sys.executable, "-m", "multikernelbench.cli.main", "serve", "--port", str(self.port),
               "--task", RELU, "--db", str(self.tmp / "results.sqlite"), "--build-root", str(self.build_root),
               "--no-timing", "--seed", "3", "--policy", "kernelbench", "--http-nice", str(NICE)]
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(self.tmp / "log", "ab"),
                                     start_new_session=True)


def stat(path: str) -> tuple[str, list[str]]:
    head, _, rest = Path(path).read_bytes().rpartition(b")")
    return head.split(b"(", 1)[1].decode(), rest.decode().split()


def nice(path: str) -> int:
    return int(stat(path)[1][16])  # field 19 of stat; the list starts at field 3 (state)


def autogroup_nice(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def zygote_children(root: int) -> list[int]:
    """Processes forked by a zygote under ``root``: the workers."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(stat(f"/proc/{entry}/stat")[1][1])
            except (OSError, IndexError, ValueError):
                pass

    def under(pid: int) -> bool:
        while pid > 1 and pid in parents:
            if parents[pid] == root:
                return True
            pid = parents[pid]
        return False

    def zygote(pid: int) -> bool:
        try:
            return b"zygote_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False

    return [p for p, parent in parents.items() if under(p) and zygote(parent)]


def test_the_front_is_niced_and_the_lanes_and_workers_are_not(tmp_path, build_root):
    srv = NicedServer(tmp_path, build_root, free_port())
    try:
        srv.start()
        srv.wait_up()
        assert srv.proc is not None
        pid = srv.proc.pid
        reply = httpx.post(f"{srv.url}/jobs", json={"task_id": RELU, "source": SLEEPER},
                           headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert reply.status_code == 200, reply.text
        end = time.monotonic() + 90
        workers: list[int] = []
        while not workers and time.monotonic() < end:
            workers = zygote_children(pid)
            time.sleep(0.2)
        assert workers, "no worker was forked for the sleeping candidate"
        threads = {tid: stat(f"/proc/{pid}/task/{tid}/stat") for tid in os.listdir(f"/proc/{pid}/task")}
        lanes = [int(f[16]) for name, f in threads.values() if name.startswith("mkb-lane-")]
        assert nice(f"/proc/{pid}/task/{pid}/stat") == NICE  # the event loop's thread
        assert lanes and set(lanes) == {0}, lanes
        assert {nice(f"/proc/{w}/stat") for w in workers} == {0}
        if autogroup_nice(pid) is not None:  # a kernel with autogroups: the session's share is what counts
            assert autogroup_nice(pid) == NICE
            assert {autogroup_nice(w) for w in workers} == {0}
    finally:
        if srv.proc is not None and srv.proc.poll() is None:
            srv.kill()
