"""Secrets of the service never reach a candidate it evaluates (issue #41: canaries "the same through ``mkb serve``").

The real ``mkb serve`` in a subprocess, started with canary secrets in its environment (its own token among them,
as a deployment would pass it), evaluates a candidate that looks for them everywhere a worker could: its
``os.environ``, its own ``/proc/self/environ`` and its parent's, read through libc so that only what the worker was
given and the kernel decide. The candidate raises what it found, so the service's answer carries it back. The
workers start from the allow-listed environment (``util/worker_env.py``); before it, the service's token and every
key of its environment were in the worker's (the local engine's test of the same: tests/test_worker_isolation.py).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid

import pytest

from tests._serve_run import free_port
from tests.test_serve_restart import Server

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402

pytestmark = pytest.mark.slow

RELU = "activation.relu"
NONCE = uuid.uuid4().hex[:12]
TOKEN = f"serve-canary-{NONCE}"
CANARIES = {"MKB_SERVE_TOKEN": TOKEN, "HF_TOKEN": f"hf_canary{NONCE}", "AWS_SECRET_ACCESS_KEY": f"aws-canary-{NONCE}",
            "FOO_API_KEY": f"foo-canary-{NONCE}"}

CANDIDATE = '''
import ctypes, os
import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]

def _read(path):
    fd = _libc.open(path.encode(), os.O_RDONLY, 0)
    if fd < 0:
        return "refused"
    buf = ctypes.create_string_buffer(1 << 16)
    n = _libc.read(fd, buf, 1 << 16)
    _libc.close(fd)
    return buf.raw[:max(n, 0)].decode("latin-1").replace("\\0", " ")

def _secrets(text):
    return " ".join(w for w in text.split() if any(k in w for k in ("TOKEN", "KEY", "SECRET")))

class ModelNew(nn.Module):
    def forward(self, x):
        found = {"env": _secrets(" ".join(f"{k}={v}" for k, v in os.environ.items())),
                 "self": _secrets(_read("/proc/self/environ")),
                 "parent": _secrets(_read(f"/proc/{os.getppid()}/environ"))}
        raise RuntimeError("LEAK " + repr(found))
'''


class SecretServer(Server):
    """The restart test's server, started with the canaries (and its token) in its environment."""

    def start(self) -> None:
        env = dict(os.environ, MKB_ALLOW_CODE_EXECUTION="1", **CANARIES)
        cmd = [sys.executable, "-m", "multikernelbench.cli.main", "serve", "--port", str(self.port),
               "--task", RELU, "--db", str(self.tmp / "results.sqlite"), "--build-root", str(self.build_root),
               "--no-timing", "--seed", "3", "--policy", "kernelbench"]
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(self.tmp / "log", "ab"),
                                     start_new_session=True)


def test_a_candidate_under_mkb_serve_finds_none_of_the_services_secrets(tmp_path, build_root):
    srv = SecretServer(tmp_path, build_root, free_port())
    try:
        srv.start()
        srv.wait_up()
        headers = {"Authorization": f"Bearer {TOKEN}"}
        reply = httpx.post(f"{srv.url}/jobs", json={"items": [{"task_id": RELU, "source": CANDIDATE}]},
                           headers=headers, timeout=30)
        assert reply.status_code == 200, reply.text
        (job_id,) = reply.json()["jobs"]
        job = httpx.get(f"{srv.url}/jobs/{job_id}", params={"wait": 120}, headers=headers, timeout=150).json()
    finally:
        if srv.proc is not None and srv.proc.poll() is None:
            srv.kill()
    assert job["state"] == "done", job
    message = job["result"]["message"]
    # The candidate ran and reported (the test can fail: a worker with the service's environment would name them).
    assert job["result"]["status"] == "runtime_error" and "LEAK " in message, job["result"]
    assert "'parent': 'refused'" in message or "'parent': ''" in message, message
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("results.sqlite*"))
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] >= 1
    for name, value in CANARIES.items():
        assert value not in message, f"{name} readable by a candidate under mkb serve"
        assert value.encode() not in stored, f"{name} in the service's store"
