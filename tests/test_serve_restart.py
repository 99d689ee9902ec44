"""Accepted work survives ``kill -9``: the real ``mkb serve`` in a subprocess, killed mid-batch, restarted on
the same files. Every accepted job id is answered after the restart (re-queued under the same id), a request
sent again with its idempotency key returns the same jobs, and the reward function rides out the restart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests._held_sleeper import held, release
from tests._serve_run import free_port

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402

RELU = "activation.relu"
TOKEN = "restart-token-0123456789abcdef"
HEAD = "import torch\nimport torch.nn as nn\n"


def kernel(tag: str, prelude: str = "") -> str:
    return (HEAD + prelude + f"# {tag}\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        return torch.clamp_min(x, 0.0)\n")


class Server:
    def __init__(self, tmp, build_root, port: int) -> None:
        self.tmp, self.build_root, self.port = tmp, build_root, port
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        env = dict(os.environ, MKB_SERVE_TOKEN=TOKEN, MKB_ALLOW_CODE_EXECUTION="1")
        cmd = [sys.executable, "-m", "multikernelbench.cli.main", "serve", "--port", str(self.port),
               "--task", RELU, "--db", str(self.tmp / "results.sqlite"), "--build-root", str(self.build_root),
               "--no-timing", "--seed", "3", "--policy", "kernelbench"]
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(self.tmp / "log", "ab"),
                                     start_new_session=True)

    def wait_up(self, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            assert self.proc is not None and self.proc.poll() is None, (self.tmp / "log").read_text()[-2000:]
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        raise AssertionError("the service did not start")

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)  # the server and its engine workers, at once
        self.proc.wait(10)


@pytest.fixture
def server(tmp_path, build_root):
    srv = Server(tmp_path, build_root, free_port())
    try:
        yield srv
    finally:
        if srv.proc is not None and srv.proc.poll() is None:
            srv.kill()


@pytest.mark.slow
def test_accepted_jobs_survive_kill_9_and_resubmission_is_the_same_job(server, monkeypatch):
    from multikernelbench.reward import compute_score

    server.start()
    server.wait_up()
    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": "batch-0001"}
    slow = kernel("slow", held())  # on a lane until released after the restart (it slept 5 s twice before)
    items = [{"task_id": RELU, "source": kernel(f"quick {i}")} for i in range(3)] + [
        {"task_id": RELU, "source": slow}]
    reply = httpx.post(f"{server.url}/jobs", json={"items": items}, headers=headers, timeout=30)
    assert reply.status_code == 200
    ids = reply.json()["jobs"]
    time.sleep(1.0)  # the batch is in the engine
    server.kill()

    scores: list[float] = []
    answer = f"```python\n{kernel('through the restart')}```"
    scorer = threading.Thread(target=lambda: scores.append(
        compute_score("mkb", answer, RELU, {"mkb_url": server.url})))
    monkeypatch.setenv("MKB_SERVE_TOKEN", TOKEN)  # read by compute_score in this process
    scorer.start()
    time.sleep(1.0)  # the reward's first tries meet a closed port
    server.start()
    server.wait_up()
    again = httpx.post(f"{server.url}/jobs", json={"items": items}, headers=headers, timeout=30)
    assert again.status_code == 200 and again.json()["jobs"] == ids
    release(server.build_root, slow)
    for job_id in ids:
        job = httpx.get(f"{server.url}/jobs/{job_id}", params={"wait": 60}, headers=headers, timeout=90).json()
        assert job["id"] == job_id and job["state"] == "done", job
        assert job["result"]["status"] == "correct"
    scorer.join(180)
    assert scores and scores[0] > 0
